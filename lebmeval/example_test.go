package lebmeval_test

import (
	"log"

	"github.com/edlebm/edlebm/lebmeval"
)

// Evaluating a train-lebm run from your own program, as `go run
// ./cmd/eval-lebm -run runs/fmnist-ed -classifier runs/classifier` does:
// reconstructions, interpolations, generated samples and their
// classifier-FID, the prior chains' diagnostics, with bootstrap
// intervals, into runs/fmnist-ed/eval/summary.json and the run's report.
// (Not run by go test: this package's tests evaluate checkpoints end to
// end.)
func ExampleEvaluate() {
	err := lebmeval.Evaluate(lebmeval.Options{
		Run:                "runs/fmnist-ed",
		Backend:            "auto",
		Classifier:         "runs/classifier", // cmd/train-classifier's output
		ReconN:             1000,
		Batch:              100,
		Chains:             8,
		ChainSteps:         2000,
		MaxLag:             200,
		AnomalyHoldout:     -1, // the checkpoint's
		FIDSamples:         5000,
		InterpolationRows:  8,
		InterpolationSteps: 10,
		Bootstrap:          1000,
	})
	if err != nil {
		log.Fatal(err)
	}
}
