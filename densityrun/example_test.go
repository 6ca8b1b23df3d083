package densityrun_test

import (
	"log"

	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
)

// The paper's 2-D density experiment from your own program, as `go run
// ./cmd/train-toy -data 25gaussians -methods ed,sm` does: each method's
// energy and density heat maps, Langevin samples and metrics log (with
// the log-density MSE every EvalEvery steps), and the curves of both
// together, in out/toy/25gaussians; calling Toy again with the same Out
// resumes where it stopped. (Not run by go test: cmd/train-toy's tests
// train through Toy end to end.)
func ExampleToy() {
	err := densityrun.Toy(densityrun.ToyOptions{
		Data:    "25gaussians",
		Configs: []density.Config{density.DefaultConfig("ed"), density.DefaultConfig("sm")},
		Out:     "out/toy",
		Steps:   50000, Batch: 128, Seed: 1,
		EvalEvery: 1000, EvalN: 5000,
		Grid: 200, Extent: 4.5,
		Samples: 5000, SampleSteps: 100, SampleEps: 0.01,
	})
	if err != nil {
		log.Fatal(err)
	}
}
