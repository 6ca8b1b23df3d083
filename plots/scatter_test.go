package plots

import (
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteScatterDensity(t *testing.T) {
	nan := float32(math.NaN())
	// extent [0,4]×[0,4] on a 4×4 image: bin (ix, iy) covers
	// [ix, ix+1)×[iy, iy+1) and, y pointing up, is pixel (ix, 3-iy).
	points := []float32{
		0.5, 3.5, 0.2, 3.9, 0.9, 3.0, // 3 points in bin (0,3): pixel (0,0)
		2.5, 0.5, // 1 point in bin (2,0): pixel (2,3)
		4, 4, // the upper corner belongs to bin (3,3): pixel (3,0)
		5, 1, -0.1, 2, nan, 1, // outside or NaN: dropped
	}
	path := filepath.Join(t.TempDir(), "scatter.png")
	if err := WriteScatterDensity(path, points, [4]float64{0, 4, 0, 4}, 4, 0); err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, path)
	checkSize(t, img, 4, 4)
	// Brightness is log(1+count)/log(1+3): 1 for 3 points, log 2/log 4 = 1/2
	// for 1 point, 0 for empty bins.
	want := map[[2]int]color.RGBA{{0, 0}: viridisHigh, {2, 3}: viridisMid, {3, 0}: viridisMid}
	for y := range 4 {
		for x := range 4 {
			w, ok := want[[2]int{x, y}]
			if !ok {
				w = viridisLow
			}
			if got := rgbaAt(img, x, y); got != w {
				t.Errorf("pixel (%d,%d) = %v, want %v", x, y, got, w)
			}
		}
	}
}

func TestWriteScatterDensityEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.png")
	if err := WriteScatterDensity(path, nil, [4]float64{-1, 1, -1, 1}, 3, 0); err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, path)
	checkSize(t, img, 3, 3)
	if got := rgbaAt(img, 1, 1); got != viridisLow {
		t.Errorf("empty histogram pixel = %v, want %v", got, viridisLow)
	}
}

func TestWriteScatterDensityRejectsBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.png")
	tests := []struct {
		name   string
		points []float32
		extent [4]float64
		size   int
	}{
		{"odd length", []float32{1, 2, 3}, [4]float64{0, 1, 0, 1}, 4},
		{"zero size", []float32{1, 2}, [4]float64{0, 1, 0, 1}, 0},
		{"reversed x", []float32{1, 2}, [4]float64{1, 0, 0, 1}, 4},
		{"empty y", []float32{1, 2}, [4]float64{0, 1, 1, 1}, 4},
		{"infinite", []float32{1, 2}, [4]float64{0, math.Inf(1), 0, 1}, 4},
		{"NaN", []float32{1, 2}, [4]float64{0, 1, math.NaN(), 1}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteScatterDensity(path, tc.points, tc.extent, tc.size, 0)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("error = %v, want one naming %s", err, path)
			}
		})
	}
}
