package toystudies

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/plots"
)

// DivergenceOptions are the settings of [Study.Divergence] (cmd/toy-studies'
// flags in brackets).
type DivergenceOptions struct {
	// ToySet is the training data (-grid-data, -grid-points, -div-epochs).
	ToySet
	// W and M are the values of w and M, each pair a run (-grid-values,
	// -grid-m).
	W []float64
	M []int
}

// DefaultDivergenceOptions are the paper's settings: 7 epochs of 20,000
// points, about 1,100 steps a run.
func DefaultDivergenceOptions() DivergenceOptions {
	return DivergenceOptions{ToySet: ToySet{Data: "25gaussians", Points: 20000, Epochs: 7}, W: []float64{0, 1}, M: []int{1, 4, 32}}
}

// divergenceSteps are the steps whose batch loss [Study.Divergence]
// tabulates.
var divergenceSteps = []int{1, 10, 100, 1000, 10000}

// Divergence tests the paper's "w = 0 and small M diverge within 100
// optimisation steps": ED (t 1) trained for a few epochs on the toy set
// for every w of o.W and M of o.M, recording the batch loss of every step.
// With w > 0 the loss is bounded below by log(w/M); with w = 0 nothing
// bounds it, and divergence shows as the loss running off towards −∞ long
// before it stops being a finite float32. Writes divergence.csv (per run:
// the loss at steps 1, 10, 100, 1,000 and 10,000, NaN past the run's end,
// the lowest loss and the step of the first non-finite loss, 0 if none),
// divergence_losses.csv and .png (every step's loss; log step axis,
// symmetric log loss axis) and divergence_density.png (each run's final
// density, a band per w from the bottom, M increasing to the right).
func (s Study) Divergence(o DivergenceOptions) error {
	tb, err := s.newToyBench(o.ToySet, [2]string{"-grid-data", "-grid-points"})
	if err != nil {
		return err
	}
	header := []string{"w", "M"}
	for _, step := range divergenceSteps {
		header = append(header, fmt.Sprintf("loss_step%d", step))
	}
	header = append(header, "lowest_loss", "nonfinite_at_step")
	var rows, curveRows [][]float64
	var series []plots.Series
	bands := make([][][]float64, len(o.W))
	for wi, w := range o.W {
		for _, m := range o.M {
			cfg := density.DefaultConfig("ed")
			cfg.ED = losses.EDConfig{T: 1, M: m, W: w}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("flags -grid-values, -grid-m: %w", err)
			}
			history, energies, nonFiniteAt, err := tb.train(cfg)
			if err != nil {
				return err
			}
			if energies != nil {
				energies = energies[2*studyEvalN:] // the picture's grid
			}
			row := []float64{w, float64(m)}
			for _, step := range divergenceSteps {
				row = append(row, stepLoss(history, step))
			}
			lowest := math.Inf(1)
			curve := plots.Series{Name: fmt.Sprintf("w %g, M %d", w, m)}
			for i, loss := range history {
				lowest = math.Min(lowest, loss)
				curve.X, curve.Y = append(curve.X, float64(i+1)), append(curve.Y, loss)
				curveRows = append(curveRows, []float64{w, float64(m), float64(i + 1), loss})
			}
			rows = append(rows, append(row, lowest, float64(nonFiniteAt)))
			series = append(series, curve)
			bands[wi] = append(bands[wi], scaledDensity(energies, tb.grid.Size))
			s.logf("w %g, M %d: loss at steps %v: %.4g; lowest %.4g%s", w, m, divergenceSteps, row[2:], lowest, divergence(nonFiniteAt))
		}
	}
	return writeDivergence(s.Dir, o.Data, header, rows, curveRows, series, bands, tb.grid.Size)
}

// writeDivergence writes the divergence study's tables and pictures into
// dir.
func writeDivergence(dir, data string, header []string, rows, curveRows [][]float64, series []plots.Series, bands [][][]float64, size int) error {
	if err := plots.WriteCSV(filepath.Join(dir, "divergence.csv"), header, rows); err != nil {
		return err
	}
	if err := plots.WriteCSV(filepath.Join(dir, "divergence_losses.csv"), []string{"w", "M", "step", "loss"}, curveRows); err != nil {
		return err
	}
	if err := writeCellPicture(filepath.Join(dir, "divergence_density.png"), bands, size); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(dir, "divergence_losses.png"), plots.LinePlot{
		Title:  fmt.Sprintf("%s: ED's batch loss (t 1) for each w and M", data),
		XLabel: "step", YLabel: "batch loss", LogX: true, SymLogY: true, Series: series,
	})
}

// stepLoss is the loss of step (1-based) in history, NaN past its end.
func stepLoss(history []float64, step int) float64 {
	if step > len(history) {
		return math.NaN()
	}
	return history[step-1]
}
