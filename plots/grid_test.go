package plots

import (
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

var white = color.RGBA{255, 255, 255, 255}

func gray(v uint8) color.RGBA { return color.RGBA{v, v, v, 255} }

// Gray levels by hand: byte = round((v+1)/2 * 255).
//
//	v = -1   -> 0
//	v = 0    -> 127.5  -> 128
//	v = 0.5  -> 191.25 -> 191
//	v = 1    -> 255
func TestWriteImageGrid(t *testing.T) {
	const h, w = 3, 4
	tests := []struct {
		name         string
		pixels       []float32
		n, channels  int
		cols         int
		wantW, wantH int
		// want maps pixel positions to their expected colour.
		want map[[2]int]color.RGBA
	}{
		{
			name:   "two constant gray tiles side by side",
			pixels: append(filled(h*w, -1), filled(h*w, 0.5)...),
			n:      2, channels: 1, cols: 2,
			wantW: 2*w + 2, wantH: h,
			want: map[[2]int]color.RGBA{
				{0, 0}: gray(0), {w - 1, h - 1}: gray(0), // tile 0
				{w, 0}: white, {w + 1, h - 1}: white, // padding
				{w + 2, 0}: gray(191), {2*w + 1, h - 1}: gray(191), // tile 1
			},
		},
		{
			name:   "three tiles wrap to a second row",
			pixels: append(append(filled(h*w, 1), filled(h*w, 0)...), filled(h*w, -1)...),
			n:      3, channels: 1, cols: 2,
			wantW: 2*w + 2, wantH: 2*h + 2,
			want: map[[2]int]color.RGBA{
				{0, 0}: gray(255), {w + 2, 0}: gray(128),
				{0, h}: white, {0, h + 1}: white, // padding row
				{0, h + 2}: gray(0), {w - 1, 2*h + 1}: gray(0), // tile 2
				{w + 2, h + 2}: white, // empty slot
			},
		},
		{
			name:   "cols larger than n shrinks",
			pixels: filled(h*w, 0.5),
			n:      1, channels: 1, cols: 5,
			wantW: w, wantH: h,
			want: map[[2]int]color.RGBA{{0, 0}: gray(191)},
		},
		{
			name: "rgb with clipping and NaN",
			pixels: func() []float32 {
				p := filled(h*w*3, 0)
				copy(p, []float32{1, -1, 0}) // pixel (0,0)
				copy(p[3:], []float32{2, -3, float32(math.NaN())})
				return p
			}(),
			n: 1, channels: 3, cols: 1,
			wantW: w, wantH: h,
			want: map[[2]int]color.RGBA{
				{0, 0}: {255, 0, 128, 255},
				{1, 0}: {255, 0, 0, 255},
				{2, 0}: gray(128),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "grid.png")
			if err := WriteImageGrid(path, tc.pixels, tc.n, h, w, tc.channels, tc.cols); err != nil {
				t.Fatal(err)
			}
			img := readPNG(t, path)
			checkSize(t, img, tc.wantW, tc.wantH)
			for p, want := range tc.want {
				if got := rgbaAt(img, p[0], p[1]); got != want {
					t.Errorf("pixel %v = %v, want %v", p, got, want)
				}
			}
		})
	}
}

func TestWriteImagePairs(t *testing.T) {
	const h, w = 2, 3
	// Pair i: original all origVals[i], reconstruction all recVals[i].
	origVals := []float32{-1, 0, 1}
	recVals := []float32{0.5, -1, 0}
	wantOrig := []uint8{0, 128, 255}
	wantRec := []uint8{191, 0, 128}
	var orig, rec []float32
	for i := range origVals {
		orig = append(orig, filled(h*w, origVals[i])...)
		rec = append(rec, filled(h*w, recVals[i])...)
	}
	tests := []struct {
		name         string
		cols         int
		wantW, wantH int
	}{
		{"one pair per row", 1, 2*w + 2, 3*h + 4},
		{"two pairs per row", 2, 4*w + 6, 2*h + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pairs.png")
			if err := WriteImagePairs(path, orig, rec, len(origVals), h, w, 1, tc.cols); err != nil {
				t.Fatal(err)
			}
			img := readPNG(t, path)
			checkSize(t, img, tc.wantW, tc.wantH)
			for i := range origVals {
				// Pair i sits in tile row i/cols, pair column i%cols; the
				// original takes tile column 2*(i%cols), the reconstruction the next.
				y := (i / tc.cols) * (h + 2)
				xo := 2 * (i % tc.cols) * (w + 2)
				if got := rgbaAt(img, xo, y); got != gray(wantOrig[i]) {
					t.Errorf("original %d at (%d,%d) = %v, want %v", i, xo, y, got, gray(wantOrig[i]))
				}
				if got := rgbaAt(img, xo+w+2, y+h-1); got != gray(wantRec[i]) {
					t.Errorf("reconstruction %d at (%d,%d) = %v, want %v", i, xo+w+2, y+h-1, got, gray(wantRec[i]))
				}
			}
		})
	}
}

func TestImageWritersRejectBadShapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.png")
	tests := []struct {
		name  string
		write func() error
	}{
		{"short pixels", func() error { return WriteImageGrid(path, filled(5, 0), 1, 2, 3, 1, 1) }},
		{"two channels", func() error { return WriteImageGrid(path, filled(12, 0), 1, 2, 3, 2, 1) }},
		{"zero images", func() error { return WriteImageGrid(path, nil, 0, 2, 3, 1, 1) }},
		{"zero cols", func() error { return WriteImageGrid(path, filled(6, 0), 1, 2, 3, 1, 0) }},
		{"short reconstructions", func() error { return WriteImagePairs(path, filled(6, 0), filled(5, 0), 1, 2, 3, 1, 1) }},
		{"pairs zero cols", func() error { return WriteImagePairs(path, filled(6, 0), filled(6, 0), 1, 2, 3, 1, 0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.write()
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("error = %v, want one naming %s", err, path)
			}
		})
	}
}
