package toystudies

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/plots"
)

// DSMOptions are the settings of [Study.DSM] (cmd/toy-studies' flags in
// brackets).
type DSMOptions struct {
	// ToySet is the training data (-dsm-data, -dsm-points, -dsm-epochs).
	ToySet
	// T are the noise scales: ED's perturbation t and DSM's noise variance
	// (-dsm-t).
	T []float64
}

// DefaultDSMOptions are the paper's settings: 130 epochs of 20,000 points
// are about 20,000 steps, and ED on 25gaussians needs about 10,000 to
// settle.
func DefaultDSMOptions() DSMOptions {
	return DSMOptions{ToySet: ToySet{Data: "25gaussians", Points: 20000, Epochs: 130}, T: []float64{0.01, 0.03, 0.1, 0.3, 1, 3}}
}

// DSM trains ED (t, M 4, w 1) and denoising score matching (noise
// variance t) on points of the toy set for every t of o.T, and writes each
// run's log-density MSE against the exact density (dsm.csv, dsm.png; NaN
// where training diverged) and the learned densities (dsm_density.png:
// ED's band at the bottom, DSM's above, t increasing to the right).
func (s Study) DSM(o DSMOptions) error {
	tb, err := s.newToyBench(o.ToySet, [2]string{"-dsm-data", "-dsm-points"})
	if err != nil {
		return err
	}
	methods := []string{"ed", "dsm"}
	series := make([]plots.Series, len(methods))
	bands := make([][][]float64, len(methods))
	var rows [][]float64
	for _, t := range o.T {
		row := []float64{t}
		for i, method := range methods {
			cfg := density.DefaultConfig(method)
			cfg.ED.T = t
			if method == "dsm" {
				cfg.DSMVariance = t
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("DSMOptions.T %v: %w", t, err)
			}
			mse, energies, divergedAt, err := tb.cell(filepath.Join(s.Dir, "cells"), cfg)
			if err != nil {
				return err
			}
			s.logf("%s, t = %g: log-density MSE %.4f%s", method, t, mse, divergence(divergedAt))
			row = append(row, mse)
			series[i].Name = method
			series[i].X, series[i].Y = append(series[i].X, t), append(series[i].Y, mse)
			bands[i] = append(bands[i], scaledDensity(energies, tb.grid.Size))
		}
		rows = append(rows, row)
	}
	if err := plots.WriteCSV(filepath.Join(s.Dir, "dsm.csv"), []string{"t", "ed_mse", "dsm_mse"}, rows); err != nil {
		return err
	}
	if err := writeCellPicture(filepath.Join(s.Dir, "dsm_density.png"), bands, tb.grid.Size); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(s.Dir, "dsm.png"), plots.LinePlot{
		Title:  fmt.Sprintf("%s: log-density MSE against the noise scale t (%d epochs of %d points)", o.Data, o.Epochs, o.Points),
		XLabel: "t", YLabel: "log-density MSE", LogX: true, LogY: true, Series: series,
	})
}

// divergence describes a run that stopped at a non-finite loss.
func divergence(step int) string {
	if step == 0 {
		return ""
	}
	return fmt.Sprintf(" (diverged: loss not finite at step %d)", step)
}

// GridOptions are the settings of [Study.Grid] (cmd/toy-studies' flags in
// brackets).
type GridOptions struct {
	// Kind is "tm" (t against M, w 1) or "wm" (w against M, t 1) (-study).
	Kind string
	// ToySet is the training data (-grid-data, -grid-points,
	// -grid-epochs).
	ToySet
	// Values are those of the first setting, t or w (-grid-values); M
	// those of M (-grid-m).
	Values []float64
	M      []int
}

// DefaultGridOptions are the paper's settings for kind "tm" or "wm", but
// for M 128, whose cells take about 17 minutes of a core each (about 1½
// hours a grid instead of ½; scripts/toy-grids.sh adds it): 65 epochs of
// 20,000 points, about 10,000 steps a cell.
func DefaultGridOptions(kind string) GridOptions {
	values := map[string][]float64{"tm": {0.0025, 0.25, 1, 4}, "wm": {0, 0.25, 1}}[kind]
	return GridOptions{Kind: kind, ToySet: ToySet{Data: "25gaussians", Points: 20000, Epochs: 65}, Values: values, M: []int{1, 4, 32}}
}

// Grid is the paper's "Effect of t, M, and w": ED trained on the toy set
// for every pair of o.Values (t with w 1 for kind "tm", w with t 1 for
// "wm") and o.M. It writes grid_KIND.csv (the log-density MSE of each
// cell, and the step at which a run diverged, 0 if none) and grid_KIND.png
// (each cell's density exp(−E), scaled to its maximum; one band of cells
// per value of the first setting, increasing upwards like a plot's y axis,
// so the first value is the bottom band; columns by M, increasing to the
// right; grey cells diverged).
func (s Study) Grid(o GridOptions) error {
	if o.Kind != "tm" && o.Kind != "wm" {
		return fmt.Errorf("grid kind %q: want tm or wm", o.Kind)
	}
	tb, err := s.newToyBench(o.ToySet, [2]string{"-grid-data", "-grid-points"})
	if err != nil {
		return err
	}
	bands := make([][][]float64, len(o.Values))
	var rows [][]float64
	for ri, v := range o.Values {
		for _, m := range o.M {
			cfg := density.DefaultConfig("ed")
			cfg.ED = losses.EDConfig{T: 1, M: m, W: 1}
			if o.Kind == "tm" {
				cfg.ED.T = v
			} else {
				cfg.ED.W = v
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("flags -grid-values, -grid-m: %w", err)
			}
			mse, energies, divergedAt, err := tb.cell(filepath.Join(s.Dir, "cells"), cfg)
			if err != nil {
				return err
			}
			s.logf("t %g, M %d, w %g: log-density MSE %.4f%s", cfg.ED.T, cfg.ED.M, cfg.ED.W, mse, divergence(divergedAt))
			rows = append(rows, []float64{v, float64(m), mse, float64(divergedAt)})
			bands[ri] = append(bands[ri], scaledDensity(energies, tb.grid.Size))
		}
	}
	first := map[string]string{"tm": "t", "wm": "w"}[o.Kind]
	if err := plots.WriteCSV(filepath.Join(s.Dir, "grid_"+o.Kind+".csv"), []string{first, "M", "mse", "diverged_at_step"}, rows); err != nil {
		return err
	}
	return writeCellPicture(filepath.Join(s.Dir, "grid_"+o.Kind+".png"), bands, tb.grid.Size)
}

// writeCellPicture draws bands of size×size cells (densities scaled to
// [0, 1], NaN grey) as one heat map: band 0 at the bottom, like a plot's
// y axis, each band's cells left to right, one grey row or column between
// neighbours, 2 pixels a cell point. Every band holds the same number of
// cells.
func writeCellPicture(path string, bands [][][]float64, size int) error {
	if len(bands) == 0 || len(bands[0]) == 0 {
		return fmt.Errorf("%s: no cells to draw", path)
	}
	cols := len(bands[0])*(size+1) - 1
	picture := make([]float64, 0, len(bands)*(size+1)*cols)
	for bi, cells := range bands {
		if len(cells) != len(bands[0]) {
			return fmt.Errorf("%s: band %d has %d cells, band 0 %d", path, bi, len(cells), len(bands[0]))
		}
		for r := range size {
			for ci, cell := range cells {
				picture = append(picture, cell[r*size:(r+1)*size]...)
				if ci < len(cells)-1 {
					picture = append(picture, math.NaN())
				}
			}
		}
		if bi < len(bands)-1 {
			for range cols {
				picture = append(picture, math.NaN())
			}
		}
	}
	return plots.WriteHeatmap(path, picture, len(picture)/cols, cols, plots.HeatmapOptions{Scale: 2, Min: 0, Max: 1, RowZeroAtTop: false})
}

// scaledDensity is exp(−E) over a size×size grid scaled to maximum 1, or
// NaN everywhere (drawn grey) for a diverged run.
func scaledDensity(energies []float64, size int) []float64 {
	out := make([]float64, size*size)
	if energies == nil {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	lowest := math.Inf(1)
	for _, e := range energies {
		lowest = math.Min(lowest, e)
	}
	for i, e := range energies {
		out[i] = math.Exp(lowest - e)
	}
	return out
}
