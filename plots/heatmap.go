package plots

import (
	"fmt"
	"image"
	"math"
)

// HeatmapOptions controls how [WriteHeatmap] renders a value grid. The zero
// value draws one pixel per cell, scales colours to the data's range and puts
// row 0 at the bottom.
type HeatmapOptions struct {
	// Scale is the side, in pixels, of the square drawn for each cell;
	// 0 means 1.
	Scale int
	// Min and Max, when Min < Max, fix the value range spread over the
	// colormap (values outside are clamped), so that several heatmaps share
	// one scale. Otherwise the range of the finite values is used.
	Min, Max float64
	// RowZeroAtTop draws row 0 at the top, as in an image, instead of at the
	// bottom, as in a plot whose y axis increases upwards.
	RowZeroAtTop bool
}

// WriteHeatmap writes a rows×cols grid of values, row-major (values[r*cols+c]
// is row r, column c), as a PNG coloured with [Viridis]: the smallest value
// is dark purple and the largest yellow. By default row 0 is the bottom row of
// the picture, so a grid evaluated at increasing y shows y increasing
// upwards; see [HeatmapOptions.RowZeroAtTop]. NaN and infinite values are
// drawn in [NaNColor] and ignored when finding the range. If all finite
// values are equal, they are drawn in the lowest colour.
func WriteHeatmap(path string, values []float64, rows, cols int, opts HeatmapOptions) error {
	if rows <= 0 || cols <= 0 {
		return fmt.Errorf("plots: heatmap %s: rows, cols = %d, %d, want both > 0", path, rows, cols)
	}
	if len(values) != rows*cols {
		return fmt.Errorf("plots: heatmap %s: len(values) = %d, want rows*cols = %d", path, len(values), rows*cols)
	}
	if opts.Scale < 0 {
		return fmt.Errorf("plots: heatmap %s: Scale = %d, want >= 0", path, opts.Scale)
	}
	scale := max(opts.Scale, 1)
	lo, hi := opts.Min, opts.Max
	if !(lo < hi) {
		lo, hi = finiteRange(values)
	}

	img := image.NewRGBA(image.Rect(0, 0, cols*scale, rows*scale))
	for r := range rows {
		top := (rows - 1 - r) * scale
		if opts.RowZeroAtTop {
			top = r * scale
		}
		for c := range cols {
			v := values[r*cols+c]
			col := NaNColor
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				t := 0.0
				if hi > lo {
					t = (v - lo) / (hi - lo)
				}
				col = Viridis(t)
			}
			for y := top; y < top+scale; y++ {
				for x := c * scale; x < (c+1)*scale; x++ {
					img.SetRGBA(x, y, col)
				}
			}
		}
	}
	return writePNG(path, img)
}

// finiteRange returns the smallest and largest finite values, or 0, 0 if
// there are none.
func finiteRange(values []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}
