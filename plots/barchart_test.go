package plots

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// bar is a filled rectangle found in a picture: columns [x0, x1], rows
// [top, bottom].
type bar struct{ x0, x1, top, bottom int }

// findBars returns the rectangles of colour c at least minHeight pixels
// tall, left to right: runs of columns holding such a vertical run.
func findBars(img image.Image, c color.RGBA, minHeight int) []bar {
	var bars []bar
	b := img.Bounds()
	var cur *bar
	for x := b.Min.X; x < b.Max.X; x++ {
		// The longest vertical run of c in this column: a legend swatch
		// above a bar is a separate run.
		top, bottom, runTop := -1, -2, -1
		for y := b.Min.Y; y < b.Max.Y; y++ {
			p := rgbaAt(img, x, y)
			if absDiff(p.R, c.R) <= 8 && absDiff(p.G, c.G) <= 8 && absDiff(p.B, c.B) <= 8 {
				if runTop < 0 {
					runTop = y
				}
				if y-runTop > bottom-top {
					top, bottom = runTop, y
				}
			} else {
				runTop = -1
			}
		}
		if top >= 0 && bottom-top+1 >= minHeight {
			if cur == nil {
				bars = append(bars, bar{x0: x, x1: x, top: top, bottom: bottom})
				cur = &bars[len(bars)-1]
			}
			cur.x1, cur.top, cur.bottom = x, min(cur.top, top), max(cur.bottom, bottom)
		} else {
			cur = nil
		}
	}
	return bars
}

func TestWriteBarChart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bars.png")
	err := WriteBarChart(path, BarChart{Title: "AUPRC", YLabel: "value", Groups: []string{"a", "b"}, Series: []BarSeries{
		{Name: "red", Values: []float64{1, 3}},
		{Name: "green", Values: []float64{2, 0.5}, Low: []float64{1.5, math.NaN()}, High: []float64{2.8, 2}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, path)
	red, green := findBars(img, series0, 25), findBars(img, series1, 25)
	if len(red) != 2 || len(green) != 2 {
		t.Fatalf("found %d red and %d green bars, want 2 of each", len(red), len(green))
	}
	// Bars stand on one baseline, in group order, series in order within a group.
	base := red[0].bottom
	for _, b := range append(red, green...) {
		if abs(b.bottom-base) > 1 {
			t.Errorf("bar %+v ends at row %d, want the baseline %d", b, b.bottom, base)
		}
	}
	if !(red[0].x1 < green[0].x0 && green[0].x1 < red[1].x0 && red[1].x1 < green[1].x0) {
		t.Errorf("bars out of order: red %+v, green %+v", red, green)
	}
	// Heights are proportional to the values: the unit from the tallest bar
	// predicts the others to within two pixels (anti-aliased edges).
	unit := float64(base-red[1].top) / 3
	for _, c := range []struct {
		b     bar
		value float64
	}{{red[0], 1}, {green[0], 2}, {green[1], 0.5}} {
		if got := float64(base - c.b.top); math.Abs(got-c.value*unit) > 2 {
			t.Errorf("bar of value %v is %.0f pixels tall, want %.1f", c.value, got, c.value*unit)
		}
	}
	// The whisker over green's first bar reaches from 1.5 to 2.8 units,
	// drawn in black at the bar's centre column (below the title).
	black := color.RGBA{0, 0, 0, 255}
	x := (green[0].x0 + green[0].x1) / 2
	top, bottom := -1, -1
	for y := range img.Bounds().Max.Y {
		p := rgbaAt(img, x, y)
		if absDiff(p.R, black.R) <= 60 && absDiff(p.G, black.G) <= 60 && absDiff(p.B, black.B) <= 60 {
			if top < 0 {
				top = y
			}
			bottom = y
		}
	}
	if math.Abs(float64(base-top)-2.8*unit) > 2 || math.Abs(float64(base-bottom)-1.5*unit) > 2 {
		t.Errorf("whisker spans rows %d–%d (%.1f–%.1f units), want 1.5–2.8 units", top, bottom, float64(base-bottom)/unit, float64(base-top)/unit)
	}
	// Green's second bar has a NaN Low: no whisker above it.
	x = (green[1].x0 + green[1].x1) / 2
	for y := range green[1].top - 1 {
		if p := rgbaAt(img, x, y); p.R < 100 && p.G < 100 && p.B < 100 {
			t.Fatalf("dark pixel at (%d, %d) above the bar with a NaN whisker", x, y)
		}
	}
}

func abs(x int) int { return max(x, -x) }

func TestWriteBarChartRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		name    string
		chart   BarChart
		mention string
	}{
		{"no groups", BarChart{Series: []BarSeries{{Name: "s"}}}, "0 groups"},
		{"no series", BarChart{Groups: []string{"a"}}, "0 series"},
		{"short series", BarChart{Groups: []string{"a", "b"}, Series: []BarSeries{{Name: "s", Values: []float64{1}}}}, "1 values for 2 groups"},
		{"NaN", BarChart{Groups: []string{"a"}, Series: []BarSeries{{Name: "s", Values: []float64{math.NaN()}}}}, "value 0 is NaN"},
		{"negative", BarChart{Groups: []string{"a"}, Series: []BarSeries{{Name: "s", Values: []float64{-1}}}}, "value 0 is -1"},
		{"low without high", BarChart{Groups: []string{"a"}, Series: []BarSeries{{Name: "s", Values: []float64{1}, Low: []float64{0}}}}, "Low and High"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bars.png")
			err := WriteBarChart(path, c.chart)
			if err == nil || !strings.Contains(err.Error(), c.mention) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want one naming %s and %q", err, path, c.mention)
			}
		})
	}
}
