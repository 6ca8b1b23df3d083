package evalcompare_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/edlebm/edlebm/evalcompare"
)

// Two seeds each of ED- and CD-LEBM on Fashion-MNIST, evaluated by
// eval-lebm (docs/results/fmnist-fidelity: the paper's 20-epoch
// comparison), side by side as `go run ./cmd/compare-evals -out DIR
// RUN...` does: every run's metrics, each method's mean over its seeds,
// curves over the epochs. Printed here: the table of means.
func ExampleCompare() {
	out, err := os.MkdirTemp("", "comparison")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	runs := "../docs/results/fmnist-fidelity/"
	md, err := evalcompare.Compare(evalcompare.Options{
		Reports: []string{runs + "ed-s1", runs + "ed-s2", runs + "cd-s1", runs + "cd-s2"},
		Out:     out, // comparison.md and epochs_*.png
	})
	if err != nil {
		panic(err)
	}
	_, byLabel, _ := strings.Cut(md, "By label")
	_, table, _ := strings.Cut(byLabel, "\n\n")
	table, _, _ = strings.Cut(table, "\n\n")
	fmt.Println(table)
	// Output:
	// | label | runs | recon. MSE | classifier-FID | R̂ |
	// |---|---|---|---|---|
	// | ed | 2 | 0.0405 (0.0404–0.0406) | 18.11 (17.10–19.12) | 1.051 (1.047–1.055) |
	// | cd | 2 | 0.0406 (0.0404–0.0407) | 38.26 (37.23–39.28) | 1.042 (1.035–1.050) |
}
