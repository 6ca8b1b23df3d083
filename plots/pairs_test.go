package plots

import (
	"image/color"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritePairs draws 3-D points as a 3×3 grid of 2×2-bin panels, one
// pixel a bin, with gaps of 2: set a is one point at (0.5, 1.5, 1.5) and
// set b one at (1.5, 0.5, 0.5), extent [0, 2]. Panel (row i, column j)
// starts at pixel x = 4j and, row 0 of panels at the top, y = 4i; in it,
// bin (bx, by) — x_j across, x_i up — is pixel (4j+bx, 4i+1−by). Below
// the diagonal a's bin is full, above it b's; the rest is dark.
func TestWritePairs(t *testing.T) {
	a := []float32{0.5, 1.5, 1.5}
	b := []float32{1.5, 0.5, 0.5}
	path := filepath.Join(t.TempDir(), "pairs.png")
	if err := WritePairs(path, a, b, 3, 3, [2]float64{0, 2}, 2, 1); err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, path)
	checkSize(t, img, 10, 10)
	binOf := func(v float32) int { return int(v) }
	want := map[[2]int]color.RGBA{}
	for i := range 3 {
		for j := range 3 {
			if i == j {
				continue
			}
			p := a
			if j > i {
				p = b
			}
			want[[2]int{4*j + binOf(p[j]), 4*i + 1 - binOf(p[i])}] = viridisHigh
		}
	}
	if len(want) != 6 {
		t.Fatalf("%d full bins worked out, want 6", len(want))
	}
	for y := range 10 {
		for x := range 10 {
			w, ok := want[[2]int{x, y}]
			if !ok {
				w = viridisLow
			}
			if got := rgbaAt(img, x, y); got != w {
				t.Errorf("pixel (%d,%d) = %v, want %v", x, y, got, w)
			}
		}
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"one coordinate", WritePairs(path, a, b, 3, 1, [2]float64{0, 2}, 2, 1), "want 2 ≤ dims ≤ d"},
		{"ragged points", WritePairs(path, a[:2], b, 3, 3, [2]float64{0, 2}, 2, 1), "whole 3-dimensional points"},
		{"empty extent", WritePairs(path, a, b, 3, 3, [2]float64{2, 2}, 2, 1), "lo < hi"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}
