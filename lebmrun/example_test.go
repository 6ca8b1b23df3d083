package lebmrun_test

import (
	"log"

	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmrun"
)

// Training the paper's ED-LEBM on Fashion-MNIST from your own program, as
// `go run ./cmd/train-lebm -epochs 12 -out runs/fmnist-ed` does: the run
// folder gets checkpoints, metrics.jsonl, sample and reconstruction grids,
// curves and report.html, and calling Train again with the same Out
// resumes where it stopped. (Not run by go test: cmd/train-lebm's tests
// train through Train end to end.)
func ExampleTrain() {
	cfg, err := lebm.DefaultConfig("fashion-mnist") // the paper's settings, method ED
	if err != nil {
		log.Fatal(err)
	}
	cfg.Seed = 1
	err = lebmrun.Train(lebmrun.Options{
		Config:  cfg,
		DataDir: mnist.DefaultFashionDir, // Debian's dataset-fashion-mnist
		Out:     "runs/fmnist-ed",
		Backend: "auto", // XLA on a GPU or the CPU, else SimpleGo
		Epochs:  12,
		Batch:   128,
	})
	if err != nil {
		log.Fatal(err)
	}
}
