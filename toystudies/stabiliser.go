package toystudies

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
	"github.com/edlebm/edlebm/plots"
)

// StabiliserOptions are the settings of [Study.Stabiliser] (cmd/toy-studies'
// flags in brackets).
type StabiliserOptions struct {
	// W are the values of ED's stabiliser w (-w).
	W []float64
	// Epochs over the 4,096 N(0,1) points, in batches of 128 (-epochs).
	Epochs int
	// LearningRate is Adam's (-w-lr).
	LearningRate float64
}

// DefaultStabiliserOptions are the paper's settings.
func DefaultStabiliserOptions() StabiliserOptions {
	return StabiliserOptions{W: []float64{0, 0.05, 0.25, 2}, Epochs: 50, LearningRate: 1e-2}
}

// Stabiliser trains a tiny MLP energy (two hidden layers of 2 swish units)
// with ED (t 1, M 4) on 4,096 points of N(0,1) for each w of o.W, and
// writes the learned energies on [−4, 4], each shifted to minimum 0, beside
// the data's x²/2 (w_energies.png and .csv) and every step's loss
// (w_losses.png). A run that fails (a non-finite loss, as w = 0 may reach)
// is reported and drawn as far as it went.
func (s Study) Stabiliser(o StabiliserOptions) error {
	if err := s.makeDir(); err != nil {
		return err
	}
	const points, batch = 4096, 128
	rng := rand.New(rand.NewPCG(s.Seed, 2))
	data := make([]float32, points)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	grid := make([]float32, 161)
	for i := range grid {
		grid[i] = float32(-4 + 0.05*float64(i))
	}
	var energySeries, lossSeries []plots.Series
	for _, w := range o.W {
		cfg := density.DefaultConfig("ed")
		cfg.ED = losses.EDConfig{T: 1, M: 4, W: w}
		cfg.MLP = nets.MLPConfig{Hidden: []int{2, 2}, Activation: "swish"}
		cfg.EMADecay = 0 // evaluate the parameters themselves
		cfg.LearningRate = o.LearningRate
		history, energies, err := density.TrainOnPoints(s.Backend, cfg, int64(s.Seed), data, 1, batch, o.Epochs, grid)
		name := fmt.Sprintf("w = %g", w)
		if err != nil {
			s.logf("%s: %v", name, err)
		}
		ls := plots.Series{Name: name}
		for i, l := range history {
			ls.X, ls.Y = append(ls.X, float64(i+1)), append(ls.Y, l)
		}
		lossSeries = append(lossSeries, ls)
		if energies != nil {
			es := plots.Series{Name: name}
			lowest := math.Inf(1)
			for _, e := range energies {
				lowest = math.Min(lowest, e)
			}
			for i, e := range energies {
				es.X, es.Y = append(es.X, float64(grid[i])), append(es.Y, e-lowest)
			}
			energySeries = append(energySeries, es)
		}
	}
	if err := writeStabiliserEnergies(s.Dir, grid, energySeries); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(s.Dir, "w_losses.png"), plots.LinePlot{
		Title: "ED loss per step", XLabel: "step", YLabel: "loss", Series: lossSeries,
	})
}

// writeStabiliserEnergies writes the learned energies on grid beside the
// data's x²/2 (dir/w_energies.png) and as a table (dir/w_energies.csv).
func writeStabiliserEnergies(dir string, grid []float32, energySeries []plots.Series) error {
	truth := plots.Series{Name: "data: x²/2"}
	for _, x := range grid {
		truth.X, truth.Y = append(truth.X, float64(x)), append(truth.Y, float64(x*x)/2)
	}
	if err := plots.WriteLinePlot(filepath.Join(dir, "w_energies.png"), plots.LinePlot{
		Title: "Energies learned by ED (t 1, M 4) from N(0,1) data", XLabel: "x", YLabel: "E(x) − min E",
		Series: append(energySeries, truth),
	}); err != nil {
		return err
	}
	var rows [][]float64
	for i := range grid {
		row := []float64{float64(grid[i])}
		for _, s := range energySeries {
			row = append(row, s.Y[i])
		}
		rows = append(rows, row)
	}
	header := []string{"x"}
	for _, s := range energySeries {
		header = append(header, strings.ReplaceAll(s.Name, " ", ""))
	}
	return plots.WriteCSV(filepath.Join(dir, "w_energies.csv"), header, rows)
}
