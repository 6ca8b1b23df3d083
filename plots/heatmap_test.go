package plots

import (
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// Viridis reference colours (matplotlib's viridis at t = 0, 0.5, 1).
var (
	viridisLow  = color.RGBA{0x44, 0x01, 0x54, 0xff}
	viridisMid  = color.RGBA{0x21, 0x91, 0x8c, 0xff}
	viridisHigh = color.RGBA{0xfd, 0xe7, 0x25, 0xff}
	nanGray     = color.RGBA{0x80, 0x80, 0x80, 0xff}
)

func TestViridis(t *testing.T) {
	tests := []struct {
		t    float64
		want color.RGBA
	}{
		{0, viridisLow},
		{0.5, viridisMid},
		{1, viridisHigh},
		{-3, viridisLow},
		{7, viridisHigh},
		{math.NaN(), nanGray},
		// Halfway between the stops at 0.2 (#414487) and 0.3 (#355f8d):
		// ((65+53)/2, (68+95)/2, (135+141)/2) = (59, 81.5, 138), rounded.
		{0.25, color.RGBA{59, 82, 138, 255}},
	}
	for _, tc := range tests {
		if got := Viridis(tc.t); got != tc.want {
			t.Errorf("Viridis(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}

func TestWriteHeatmap(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name         string
		values       []float64
		rows, cols   int
		opts         HeatmapOptions
		wantW, wantH int
		want         map[[2]int]color.RGBA
	}{
		{
			// Row 0 = {0, 1, 2} at the bottom, row 1 = {3, 4, 5} on top;
			// 2.5 is the midpoint of [0, 5] and does not occur.
			name:   "row zero at the bottom, upscaled",
			values: []float64{0, 1, 2, 3, 4, 5},
			rows:   2, cols: 3,
			opts:  HeatmapOptions{Scale: 2},
			wantW: 6, wantH: 4,
			want: map[[2]int]color.RGBA{
				{0, 2}: viridisLow, {1, 3}: viridisLow, // value 0: bottom-left block
				{4, 0}: viridisHigh, {5, 1}: viridisHigh, // value 5: top-right block
			},
		},
		{
			name:   "row zero at the top",
			values: []float64{0, 1, 2, 3, 4, 5},
			rows:   2, cols: 3,
			opts:  HeatmapOptions{RowZeroAtTop: true},
			wantW: 3, wantH: 2,
			want: map[[2]int]color.RGBA{{0, 0}: viridisLow, {2, 1}: viridisHigh},
		},
		{
			name:   "non-finite cells are gray and ignored by the range",
			values: []float64{nan, 1, inf, 3},
			rows:   1, cols: 4,
			wantW: 4, wantH: 1,
			want: map[[2]int]color.RGBA{
				{0, 0}: nanGray, {1, 0}: viridisLow, {2, 0}: nanGray, {3, 0}: viridisHigh,
			},
		},
		{
			name:   "fixed range clamps",
			values: []float64{-5, 10, 30},
			rows:   1, cols: 3,
			opts:  HeatmapOptions{Min: 0, Max: 20},
			wantW: 3, wantH: 1,
			want: map[[2]int]color.RGBA{{0, 0}: viridisLow, {1, 0}: viridisMid, {2, 0}: viridisHigh},
		},
		{
			name:   "constant values use the lowest colour",
			values: []float64{7, 7},
			rows:   2, cols: 1,
			wantW: 1, wantH: 2,
			want: map[[2]int]color.RGBA{{0, 0}: viridisLow, {0, 1}: viridisLow},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "heat.png")
			if err := WriteHeatmap(path, tc.values, tc.rows, tc.cols, tc.opts); err != nil {
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

func TestWriteHeatmapRejectsBadShapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.png")
	tests := []struct {
		name       string
		values     []float64
		rows, cols int
		opts       HeatmapOptions
	}{
		{"zero rows", nil, 0, 3, HeatmapOptions{}},
		{"length mismatch", []float64{1, 2, 3}, 2, 2, HeatmapOptions{}},
		{"negative scale", []float64{1}, 1, 1, HeatmapOptions{Scale: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteHeatmap(path, tc.values, tc.rows, tc.cols, tc.opts)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("error = %v, want one naming %s", err, path)
			}
		})
	}
}
