package toystudies_test

import (
	"os"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/toystudies"
)

// The paper's mixture-weight study from your own program, as `go run
// ./cmd/toy-studies -study mixture` does, at a small size (seconds): ED's
// loss (for t 4 and 32), the negative log-likelihood and score matching
// as functions of the weight ρ of 0.2·N(−5,1) + 0.8·N(5,1) data, where
// each is minimised, and ED's estimates of ρ over repetitions; the curves
// and tables go to a folder. It prints
//
//	ed_t4    minimised at ρ = 0.22
//	ed_t32   minimised at ρ = 0.21
//	nll      minimised at ρ = 0.20
//	sm       minimised at ρ = 0.02
//	     t     M    mean ρ̂     std ρ̂       RMSE   (4 repetitions of 500 points)
//	    32    32     0.1955     0.0050     0.0067
//	   MLE     -     0.1971     0.0030     0.0041
//
// on XLA CPU: score matching cannot see the weight of well-separated
// modes. (Not run by go test, as the last digits depend on the machine's
// arithmetic; the package's tests check the studies' outputs.)
func ExampleStudy_Mixture() {
	b, _, err := backend.Open("auto") // XLA on a GPU or the CPU, else SimpleGo
	if err != nil {
		panic(err)
	}
	defer b.Finalize()
	dir, err := os.MkdirTemp("", "mixture")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	study := toystudies.Study{Backend: b, Dir: dir, Seed: 1, Log: os.Stdout}
	err = study.Mixture(toystudies.MixtureOptions{
		Points: 2000, CurveT: []float64{4, 32},
		EstimationT: []float64{32}, EstimationM: []int{32}, Repetitions: 4, EstimationPoints: 500,
	})
	if err != nil {
		panic(err)
	}
}
