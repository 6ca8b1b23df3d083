package plots

import (
	"fmt"
	"math"
)

// WritePairs draws the pairwise marginals of the first dims coordinates of
// two sets of d-dimensional points (flat, row by row) as a dims×dims grid
// of 2-D histograms of panel×panel bins: below the diagonal set a (panel
// row i, column j: x_j across, x_i up), above it set b, so that each panel
// faces its counterpart across the diagonal. Each panel is coloured by
// log(1+count) relative to its own fullest bin, with [Viridis]; the
// diagonal and the gaps between panels are left dark. extent bounds every
// coordinate; points outside it are left out.
func WritePairs(path string, a, b []float32, d, dims int, extent [2]float64, panel, scale int) error {
	switch {
	case d < 2 || dims < 2 || dims > d:
		return fmt.Errorf("plots: pairs %s: %d coordinates of %d, want 2 ≤ dims ≤ d", path, dims, d)
	case len(a)%d != 0 || len(b)%d != 0:
		return fmt.Errorf("plots: pairs %s: %d and %d values, want whole %d-dimensional points", path, len(a), len(b), d)
	case panel < 1 || !(extent[0] < extent[1]):
		return fmt.Errorf("plots: pairs %s: panel %d, extent %v: want ≥ 1 and lo < hi", path, panel, extent)
	}
	const gap = 2
	side := dims*panel + (dims-1)*gap
	grid := make([]float64, side*side)
	for i := range dims {
		for j := range dims {
			if i == j {
				continue
			}
			points := a
			if j > i {
				points = b
			}
			counts := make([]float64, panel*panel)
			peak := 0.0
			for p := 0; p+d <= len(points); p += d {
				x, okx := bin(float64(points[p+j]), extent[0], extent[1], panel)
				y, oky := bin(float64(points[p+i]), extent[0], extent[1], panel)
				if okx && oky {
					counts[y*panel+x]++
					peak = max(peak, counts[y*panel+x])
				}
			}
			// Row 0 of the picture is at the bottom: panel row i sits
			// dims−1−i panels up, so that row 0 is the top row of panels.
			top := (dims - 1 - i) * (panel + gap)
			left := j * (panel + gap)
			for y := range panel {
				for x := range panel {
					if peak > 0 {
						grid[(top+y)*side+left+x] = math.Log1p(counts[y*panel+x]) / math.Log1p(peak)
					}
				}
			}
		}
	}
	return WriteHeatmap(path, grid, side, side, HeatmapOptions{Min: 0, Max: 1, Scale: scale})
}
