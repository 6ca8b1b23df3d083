package plots

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The first two series colours: red and green.
var (
	series0 = color.RGBA{238, 46, 47, 255}
	series1 = color.RGBA{0, 140, 72, 255}
)

// countNear counts the pixels of img within tol of c in every channel.
func countNear(img image.Image, c color.RGBA, tol int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := rgbaAt(img, x, y)
			if absDiff(p.R, c.R) <= tol && absDiff(p.G, c.G) <= tol && absDiff(p.B, c.B) <= tol {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint8) int { return max(int(a)-int(b), int(b)-int(a)) }

func TestWriteLinePlot(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name       string
		plot       LinePlot
		wantColors []color.RGBA // must appear
		noColors   []color.RGBA // must not appear
	}{
		{
			name: "two series",
			plot: LinePlot{Title: "loss", XLabel: "step", YLabel: "value", Series: []Series{
				{Name: "train", X: []float64{0, 1, 2, 3}, Y: []float64{4, 3, 2.5, 2}},
				{Name: "test", X: []float64{0, 1, 2, 3}, Y: []float64{4.2, 3.5, 3.1, 3}},
			}},
			wantColors: []color.RGBA{series0, series1},
		},
		{
			name: "log y skips non-positive and non-finite points",
			plot: LinePlot{LogY: true, Series: []Series{
				{Name: "all non-positive", X: []float64{0, 1, 2}, Y: []float64{-1, 0, nan}},
				{Name: "mixed", X: []float64{0, 1, 2, 3, inf, 5}, Y: []float64{100, nan, 10, 0, 1, 0.5}},
			}},
			wantColors: []color.RGBA{series1},
			noColors:   []color.RGBA{series0},
		},
		{
			name: "log y single value",
			plot: LinePlot{LogY: true, Series: []Series{
				{Name: "flat", X: []float64{0, 1}, Y: []float64{0.3, 0.3}},
			}},
			wantColors: []color.RGBA{series0},
		},
		{
			name: "log x skips non-positive x",
			plot: LinePlot{LogX: true, LogY: true, Series: []Series{
				{Name: "x not positive", X: []float64{0, -1}, Y: []float64{1, 2}},
				{Name: "positive", X: []float64{0, 0.1, 1, 10}, Y: []float64{5, 1, 2, 3}},
			}},
			wantColors: []color.RGBA{series1},
			noColors:   []color.RGBA{series0},
		},
		{
			name: "log x single value",
			plot: LinePlot{LogX: true, Series: []Series{
				{Name: "one x", X: []float64{3, 3}, Y: []float64{1, 2}},
			}},
			wantColors: []color.RGBA{series0},
		},
		{
			name: "log y without drawable points",
			plot: LinePlot{LogY: true, Title: "empty", Series: []Series{
				{Name: "none", X: []float64{0}, Y: []float64{0}},
			}},
			noColors: []color.RGBA{series0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plot.png")
			if err := WriteLinePlot(path, tc.plot); err != nil {
				t.Fatal(err)
			}
			img := readPNG(t, path)
			checkSize(t, img, 800, 500)
			// Axes, ticks and labels alone darken well over a thousand pixels.
			if n := 800*500 - countNear(img, white, 0); n < 1000 {
				t.Errorf("only %d non-white pixels: plot looks blank", n)
			}
			for _, c := range tc.wantColors {
				if n := countNear(img, c, 10); n < 10 {
					t.Errorf("colour %v on %d pixels, want a drawn series", c, n)
				}
			}
			for _, c := range tc.noColors {
				if n := countNear(img, c, 10); n != 0 {
					t.Errorf("colour %v on %d pixels, want none", c, n)
				}
			}
		})
	}
}

// A series of one point (a run that recorded only its end) shows as a dot
// where the point is: here at the plot's bottom left, away from the legend,
// which only draws a line through one point would leave blank.
func TestWriteLinePlotMarksSinglePoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plot.png")
	err := WriteLinePlot(path, LinePlot{LogY: true, Series: []Series{
		{Name: "end only", X: []float64{0}, Y: []float64{1}},
		{Name: "curve", X: []float64{0, 10}, Y: []float64{1, 1000}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, path)
	if n := countNear(subImage(img, image.Rect(0, 250, 400, 500)), series0, 10); n < 20 {
		t.Errorf("one-point series: %d pixels of its colour at the bottom left, want a dot", n)
	}
}

func TestWriteLinePlotRejectsMismatchedSeries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.png")
	err := WriteLinePlot(path, LinePlot{Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("error = %v, want one naming %s and series \"a\"", err, path)
	}
}

// Log axes spanning less than two decades get readable labels: 1, 2 and 5
// times powers of ten, every integer multiple under a factor of 3; wider
// ones a label at each power of ten.
func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi               float64
		labelled, unlabelled string
	}{
		{0.8, 4.5, "1 2", "0.8 0.9 3 4"},
		{0.5, 1.2, "0.5 0.6 0.7 0.8 0.9 1", ""},
		{0.03, 0.5, "0.05 0.1 0.2 0.5", "0.03 0.04 0.06 0.07 0.08 0.09 0.3 0.4"},
		{0.01, 100, "0.01 0.1 1 10 100", ""},
	}
	for _, tc := range tests {
		var labelled, unlabelled []string
		for _, tick := range (logTicks{}).Ticks(tc.lo, tc.hi) {
			if tick.Value < tc.lo || tick.Value > tc.hi {
				t.Errorf("[%g, %g]: tick %g outside the range", tc.lo, tc.hi, tick.Value)
			}
			if tick.Label != "" {
				labelled = append(labelled, tick.Label)
			} else if tc.hi/tc.lo < 100 {
				unlabelled = append(unlabelled, strconv.FormatFloat(tick.Value, 'g', 3, 64))
			}
		}
		if got := strings.Join(labelled, " "); got != tc.labelled {
			t.Errorf("[%g, %g]: labels %q, want %q", tc.lo, tc.hi, got, tc.labelled)
		}
		if got := strings.Join(unlabelled, " "); got != tc.unlabelled {
			t.Errorf("[%g, %g]: unlabelled ticks %q, want %q", tc.lo, tc.hi, got, tc.unlabelled)
		}
	}
}

// On a log x axis from 0.01 to 100, x = 1 is half way across: a one-point
// series there shows as a dot in the middle columns, where a linear axis
// would put it at a hundredth of the width, against the left edge.
func TestWriteLinePlotLogX(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plot.png")
	err := WriteLinePlot(path, LinePlot{LogX: true, Series: []Series{
		{Name: "at x = 1", X: []float64{1}, Y: []float64{0}},
		{Name: "span", X: []float64{0.01, 100}, Y: []float64{1, 1}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, path)
	if n := countNear(subImage(img, image.Rect(330, 250, 530, 500)), series0, 10); n < 20 {
		t.Errorf("x = 1: %d pixels of its colour in the middle columns, want the dot", n)
	}
	if n := countNear(subImage(img, image.Rect(0, 250, 200, 500)), series0, 10); n != 0 {
		t.Errorf("x = 1: %d pixels of its colour at the left, want none", n)
	}
}

// On a symmetric log y axis a level at −10⁴ beside a curve from 1 down to
// −10⁹ sits about half way down the data area (log₁₀ 10⁴ of ≈ 9 decades),
// where a linear axis draws it against 0, at the top.
func TestWriteLinePlotSymLogY(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plot.png")
	err := WriteLinePlot(path, LinePlot{SymLogY: true, Series: []Series{
		{Name: "level", X: []float64{0, 1}, Y: []float64{-1e4, -1e4}},
		{Name: "runaway", X: []float64{0, 0.5, 1}, Y: []float64{1, -10, -1e9}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, path)
	// Columns left of the legend (top right), where its sample line is.
	rows := func(top, bottom int) int {
		return countNear(subImage(img, image.Rect(0, top, 600, bottom)), series0, 10)
	}
	if n := rows(170, 330); n < 100 {
		t.Errorf("−10⁴: %d pixels of its colour in the middle rows, want its line", n)
	}
	if n := rows(0, 120) + rows(380, 500); n != 0 {
		t.Errorf("−10⁴: %d pixels of its colour near the top or bottom, want none", n)
	}
}

// symLog is odd, the identity's slope at 0, log₁₀ for large values, and
// symLogInverse undoes it; the ticks are 0 and the powers of ten in range,
// with at most about a dozen labels.
func TestSymLog(t *testing.T) {
	for _, v := range []float64{0, 1e-3, 0.5, 1, 9, 1e4, 1e9} {
		if got := symLog(-v); got != -symLog(v) {
			t.Errorf("symLog(−%v) = %v, want −symLog(%v) = %v", v, got, v, -symLog(v))
		}
		if back := symLogInverse(symLog(v)); math.Abs(back-v) > 1e-9*max(1, v) {
			t.Errorf("symLogInverse(symLog(%v)) = %v", v, back)
		}
	}
	if got := symLog(9); got != 1 {
		t.Errorf("symLog(9) = %v, want log₁₀ 10 = 1", got)
	}
	if got := symLog(1e-6) / 1e-6; math.Abs(got-1/math.Ln10) > 1e-6 {
		t.Errorf("symLog'(0) ≈ %v, want 1/ln 10", got)
	}
	ticks := symLogTicks{}.Ticks(-2e9, 5)
	var values []string
	labels := 0
	for _, tk := range ticks {
		values = append(values, strconv.FormatFloat(tk.Value, 'g', -1, 64))
		if tk.Label != "" {
			labels++
		}
	}
	want := "0 1 -1 -10 -100 -1000 -10000 -100000 -1e+06 -1e+07 -1e+08 -1e+09"
	if got := strings.Join(values, " "); got != want {
		t.Errorf("ticks on [−2·10⁹, 5] at %s, want %s", got, want)
	}
	if labels < 4 || labels > 13 {
		t.Errorf("%d labelled ticks, want between 4 and 13", labels)
	}
}
