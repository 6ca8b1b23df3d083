package plots

import (
	"fmt"
	"math"
)

// WriteScatterDensity writes 2-D samples as a size×size histogram, each bin
// drawn as a scale×scale block of pixels (scale 0 means 1), the picture used
// for Langevin samples. points holds flat (x, y) pairs and
// extent is {xmin, xmax, ymin, ymax}: the square image covers that box with y
// increasing upwards. Each pixel is a bin coloured with [Viridis] by
// log(1+count)/log(1+maxCount), so empty bins are dark purple and the fullest
// bin yellow. Points outside the box (or not finite) are left out.
func WriteScatterDensity(path string, points []float32, extent [4]float64, size, scale int) error {
	if len(points)%2 != 0 {
		return fmt.Errorf("plots: scatter density %s: len(points) = %d, want an even number (x, y pairs)", path, len(points))
	}
	if size <= 0 {
		return fmt.Errorf("plots: scatter density %s: size = %d, want > 0", path, size)
	}
	xmin, xmax, ymin, ymax := extent[0], extent[1], extent[2], extent[3]
	if !(xmin < xmax && ymin < ymax) || math.IsInf(xmax-xmin, 0) || math.IsInf(ymax-ymin, 0) {
		return fmt.Errorf("plots: scatter density %s: extent = %v, want finite xmin < xmax and ymin < ymax", path, extent)
	}

	counts := make([]float64, size*size)
	for i := 0; i < len(points); i += 2 {
		ix, okx := bin(float64(points[i]), xmin, xmax, size)
		iy, oky := bin(float64(points[i+1]), ymin, ymax, size)
		if okx && oky {
			counts[iy*size+ix]++
		}
	}
	peak := 0.0
	for i, c := range counts {
		counts[i] = math.Log1p(c)
		peak = max(peak, counts[i])
	}
	// A fixed range from 0 keeps empty bins at the bottom of the colormap even
	// when every non-empty bin holds the same count.
	return WriteHeatmap(path, counts, size, size, HeatmapOptions{Min: 0, Max: peak, Scale: scale})
}

// bin returns the index of the one of n equal bins over [lo, hi] holding v;
// hi itself falls in the last bin. ok is false for v outside [lo, hi] or NaN.
func bin(v, lo, hi float64, n int) (i int, ok bool) {
	f := (v - lo) / (hi - lo)
	if !(f >= 0 && f <= 1) {
		return 0, false
	}
	return min(int(f*float64(n)), n-1), true
}
