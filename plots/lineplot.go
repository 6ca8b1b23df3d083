package plots

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/edlebm/edlebm/atomicfile"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Line plot size in pixels and the resolution used to convert it to lengths.
const (
	linePlotWidth  = 800
	linePlotHeight = 500
	linePlotDPI    = 96
)

// LinePlot describes a line chart for [WriteLinePlot].
type LinePlot struct {
	// Title, XLabel and YLabel are the chart title and axis labels.
	Title, XLabel, YLabel string
	// LogX and LogY put the x or the y axis on a logarithmic scale.
	LogX, LogY bool
	// SymLogY puts the y axis on a symmetric logarithmic scale, linear
	// within ±1 and logarithmic beyond, for values of both signs over many
	// decades (a loss running off to −10⁹ beside losses near 0). LogY wins
	// if both are set.
	SymLogY bool
	// Series are the curves, drawn in order, each in its own colour.
	Series []Series
}

// Series is one named curve of a [LinePlot]; X and Y are paired by index.
type Series struct {
	// Name labels the curve in the legend.
	Name string
	// X and Y are the point coordinates and must have equal lengths.
	X, Y []float64
}

// WriteLinePlot writes p as an 800×500 PNG with a legend. Points with a NaN
// or infinite coordinate, and on a log axis points whose coordinate on it is
// not positive, are skipped rather than failing the plot; a series left with no points is
// omitted, one left with a single point is drawn as a dot. Series get
// distinct colours, and dash patterns too once the colours run out. The y
// axis reaches above the data by the legend's height, so the legend (top
// right) does not hide the curves' ends.
func WriteLinePlot(path string, p LinePlot) error {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Legend.Top = true
	if p.LogX {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = logTicks{}
	}
	if p.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{}
	} else if p.SymLogY {
		pl.Y.Scale = symLogScale{}
		pl.Y.Tick.Marker = symLogTicks{}
	}

	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	entries := 0 // legend entries
	for i, s := range p.Series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plots: line plot %s: series %d (%q) has len(X) = %d, want len(Y) = %d",
				path, i, s.Name, len(s.X), len(s.Y))
		}
		xys := drawablePoints(s, p.LogX, p.LogY)
		if len(xys) == 0 {
			continue
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("plots: line plot %s: series %d (%q): %w", path, i, s.Name, err)
		}
		n := len(plotutil.DarkColors)
		line.Color = plotutil.DarkColors[i%n]
		line.Dashes = plotutil.Dashes(i / n)
		line.Width = vg.Points(1.5)
		pl.Add(line)
		var legend plot.Thumbnailer = line
		if len(xys) == 1 {
			// A line through one point draws nothing: mark the point.
			mark, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("plots: line plot %s: series %d (%q): %w", path, i, s.Name, err)
			}
			mark.GlyphStyle = draw.GlyphStyle{Color: line.Color, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
			pl.Add(mark)
			legend = mark
		}
		pl.Legend.Add(s.Name, legend)
		entries++
		for _, xy := range xys {
			xlo, xhi = min(xlo, xy.X), max(xhi, xy.X)
			ylo, yhi = min(ylo, xy.Y), max(yhi, xy.Y)
		}
	}
	if p.LogX {
		padLogAxis(&pl.X, xlo, xhi)
	}
	if p.LogY {
		padLogAxis(&pl.Y, ylo, yhi)
	}
	if entries > 0 && pl.Y.Min < pl.Y.Max {
		// Extend the axis so that the legend's share of the height is free.
		share := min(0.5, legendEntryShare*float64(entries))
		room := share / (1 - share)
		switch {
		case p.LogY:
			pl.Y.Max *= math.Pow(pl.Y.Max/pl.Y.Min, room)
		case p.SymLogY:
			pl.Y.Max = symLogInverse(symLog(pl.Y.Max) + room*(symLog(pl.Y.Max)-symLog(pl.Y.Min)))
		default:
			pl.Y.Max += room * (pl.Y.Max - pl.Y.Min)
		}
	}

	return writePlot(path, pl)
}

// padLogAxis sets the range of a log axis whose data are empty (lo > hi)
// or one value: gonum pads such an axis by ±1, which can reach zero or
// below and make the log scale panic, so pad by a factor instead.
func padLogAxis(axis *plot.Axis, lo, hi float64) {
	switch {
	case lo > hi:
		axis.Min, axis.Max = 1, 10
	case lo == hi:
		axis.Min, axis.Max = lo/2, hi*2
	}
}

// legendEntryShare is about the share of a line plot's data area that one
// legend entry takes, top to bottom.
const legendEntryShare = 0.045

// logTicks marks a log axis: gonum's ticks (a label at each power of ten)
// for ranges over two decades; below that, where those leave one label or
// none, labels at 1, 2 and 5 times powers of ten, and at every integer
// multiple when the range is under a factor of 3.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi/lo >= 100 {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi) // "10", not "1e+01"
	}
	labelled := func(m int) bool { return m == 1 || m == 2 || m == 5 || hi/lo < 3 }
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled(m) {
				t.Label = strconv.FormatFloat(v, 'g', 3, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// symLog is sign(v)·log₁₀(1 + |v|): the identity's slope near 0 and
// log₁₀|v| for large |v|, odd and increasing.
func symLog(v float64) float64 {
	return math.Copysign(math.Log10(1+math.Abs(v)), v)
}

// symLogInverse is symLog's inverse.
func symLogInverse(u float64) float64 {
	return math.Copysign(math.Pow(10, math.Abs(u))-1, u)
}

// symLogScale is a plot.Normalizer that places values by symLog.
type symLogScale struct{}

// Normalize implements plot.Normalizer.
func (symLogScale) Normalize(lo, hi, v float64) float64 {
	return (symLog(v) - symLog(lo)) / (symLog(hi) - symLog(lo))
}

// symLogTicks marks a symmetric log axis at 0 and ±10ᵏ (k ≥ 0), labelling
// every power when there are few and every second or third when many.
type symLogTicks struct{}

// Ticks implements plot.Ticker.
func (symLogTicks) Ticks(lo, hi float64) []plot.Tick {
	var values []float64
	if lo <= 0 && hi >= 0 {
		values = append(values, 0)
	}
	for e := 0; e <= 308; e++ {
		v := math.Pow10(e)
		if v > max(-lo, hi) {
			break
		}
		if v <= hi {
			values = append(values, v)
		}
		if -v >= lo {
			values = append(values, -v)
		}
	}
	every := 1 + len(values)/12 // about a dozen labels at most
	ticks := make([]plot.Tick, len(values))
	for i, v := range values {
		ticks[i].Value = v
		if e := int(math.Round(math.Log10(math.Abs(v)))); v == 0 || e%every == 0 {
			ticks[i].Label = strconv.FormatFloat(v, 'g', 3, 64)
		}
	}
	return ticks
}

// writePlot draws pl on an 800×500 canvas and writes it as a PNG, atomically.
func writePlot(path string, pl *plot.Plot) error {
	c := vgimg.NewWith(
		vgimg.UseWH(linePlotWidth*vg.Inch/linePlotDPI, linePlotHeight*vg.Inch/linePlotDPI),
		vgimg.UseDPI(linePlotDPI),
	)
	pl.Draw(draw.New(c))
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	})
}

// drawablePoints returns the points of s that can be drawn: both coordinates
// finite and, on a log axis, positive.
func drawablePoints(s Series, logX, logY bool) plotter.XYs {
	xys := make(plotter.XYs, 0, len(s.X))
	for j, x := range s.X {
		y := s.Y[j]
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) || (logX && x <= 0) || (logY && y <= 0) {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: y})
	}
	return xys
}
