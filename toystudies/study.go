// Package toystudies runs the paper's studies of energy discrepancy on toy
// data and writes their curves and pictures as CSV and PNG, as
// cmd/toy-studies does:
//
//   - [Study.Mixture]: losses as functions of the mixture weight ρ for data
//     0.2·N(−5,1) + 0.8·N(5,1) — ED for several t (M 32, w 1), the negative
//     log-likelihood and score matching — and the weight ED estimates, with
//     its error over repetitions, for several t and M;
//   - [Study.Stabiliser]: the energy learned from N(0,1) data by a tiny MLP
//     under ED for several values of the stabiliser w, and the loss
//     histories;
//   - [Study.DSM]: the paper's "Comparison with Denoising Score Matching" —
//     ED (M 4, w 1) and DSM trained on a 2-D toy set for each noise scale
//     t, the log-density MSE of each against the exact density, and both
//     learned densities side by side;
//   - [Study.Grid]: the paper's "Effect of t, M, and w" — ED's density on a
//     2-D toy set for each t × M (w 1) or w × M (t 1), with each cell's
//     log-density MSE and the step at which a run diverged;
//   - [Study.Divergence]: the same section's "w = 0 diverges within 100
//     steps" — ED's batch loss at every step of short runs for each w × M,
//     and the densities they end with;
//   - [InitReport]: no training — the table and curves of the
//     initialisation comparison whose runs scripts/toy-init-compare.sh
//     keeps.
//
// The 2-D studies keep each finished run (a cell) in Dir/cells, so a study
// run again with the same settings after an interruption goes on from the
// first cell not done. Errors about settings name cmd/toy-studies' flags,
// which are the settings' documented names.
package toystudies

import (
	"fmt"
	"io"
	"os"

	"github.com/gomlx/gomlx/backends"
)

// Study is what every study shares.
type Study struct {
	// Backend trains and evaluates the models.
	Backend backends.Backend
	// Dir receives the study's CSV and PNG files (made if missing).
	Dir string
	// Seed seeds the data, the noise and the models.
	Seed uint64
	// Log receives the study's report lines (one per run or setting); nil
	// for none.
	Log io.Writer
}

// makeDir makes s.Dir if it is missing.
func (s Study) makeDir() error { return os.MkdirAll(s.Dir, 0o755) }

// logf writes one report line to s.Log.
func (s Study) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, format+"\n", args...)
	}
}
