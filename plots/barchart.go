package plots

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarChart describes a grouped bar chart for [WriteBarChart]: one group of
// bars per entry of Groups, one bar per series in each group.
type BarChart struct {
	// Title, XLabel and YLabel are the chart title and the axis labels.
	Title, XLabel, YLabel string
	// Groups names the groups along the x axis.
	Groups []string
	// Series are the bars, one colour each, in the same order in every group.
	Series []BarSeries
}

// BarSeries is one named set of bars of a [BarChart], a value per group.
type BarSeries struct {
	// Name labels the series in the legend.
	Name string
	// Values holds one finite, non-negative value per group.
	Values []float64
	// Low and High, when not nil, draw a whisker from Low[i] to High[i]
	// over bar i (e.g. the range of the values averaged into it); a NaN in
	// either leaves bar i without one.
	Low, High []float64
}

// WriteBarChart writes c as an 800×500 PNG with a legend; the value axis
// starts at 0, so bar heights are proportional to the values.
func WriteBarChart(path string, c BarChart) error {
	if len(c.Groups) == 0 || len(c.Series) == 0 {
		return fmt.Errorf("plots: bar chart %s: %d groups and %d series, want at least one of each", path, len(c.Groups), len(c.Series))
	}
	pl := plot.New()
	pl.Title.Text = c.Title
	pl.X.Label.Text = c.XLabel
	pl.Y.Label.Text = c.YLabel
	pl.Y.Min = 0
	pl.X.Min, pl.X.Max = -0.5, float64(len(c.Groups))-0.5
	pl.Legend.Top = true
	pl.NominalX(c.Groups...)

	// The bars of a group share 80 % of the unit spacing between groups.
	width := vg.Points(0.8 * 560 / float64(len(c.Groups)*len(c.Series)))
	top := 0.0
	for i, s := range c.Series {
		if err := s.check(len(c.Groups)); err != nil {
			return fmt.Errorf("plots: bar chart %s: series %d (%q): %w", path, i, s.Name, err)
		}
		bars, err := plotter.NewBarChart(plotter.Values(s.Values), width)
		if err != nil {
			return fmt.Errorf("plots: bar chart %s: series %d (%q): %w", path, i, s.Name, err)
		}
		bars.Color = plotutil.DarkColors[i%len(plotutil.DarkColors)]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(len(c.Series)-1)/2) * width
		pl.Add(bars)
		pl.Legend.Add(s.Name, bars)
		top = max(top, slices.Max(s.Values))
		for _, h := range s.High {
			if !math.IsNaN(h) {
				top = max(top, h)
			}
		}
		if s.Low != nil {
			if err := addWhiskers(pl, s, float64(i)-float64(len(c.Series)-1)/2, width); err != nil {
				return fmt.Errorf("plots: bar chart %s: series %d (%q): %w", path, i, s.Name, err)
			}
		}
	}

	// Headroom for the legend above the tallest bar.
	pl.Y.Max = max(top*1.2, 1e-9)

	return writePlot(path, pl)
}

// check validates s for a chart of n groups.
func (s BarSeries) check(n int) error {
	if len(s.Values) != n {
		return fmt.Errorf("%d values for %d groups", len(s.Values), n)
	}
	if (s.Low == nil) != (s.High == nil) || (s.Low != nil && (len(s.Low) != n || len(s.High) != n)) {
		return fmt.Errorf("Low and High must both be nil or both hold %d values (got %d, %d)", n, len(s.Low), len(s.High))
	}
	for i, v := range s.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("value %d is %v, want a finite value ≥ 0", i, v)
		}
	}
	return nil
}

// addWhiskers draws s's Low–High ranges as error bars centred on its bars,
// which sit offset bar widths from the group centres.
func addWhiskers(pl *plot.Plot, s BarSeries, offset float64, width vg.Length) error {
	var points plotter.XYs
	var errs plotter.YErrors
	for i, v := range s.Values {
		if math.IsNaN(s.Low[i]) || math.IsNaN(s.High[i]) {
			continue
		}
		points = append(points, plotter.XY{X: float64(i), Y: v})
		errs = append(errs, struct{ Low, High float64 }{v - s.Low[i], s.High[i] - v})
	}
	if len(points) == 0 {
		return nil
	}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYer
		plotter.YErrorer
	}{points, errs})
	if err != nil {
		return err
	}
	bars.CapWidth = width / 3
	// Error bars have no offset of their own: shift the x data instead,
	// converted from the bar offset in points once the axis is known.
	shifted := &offsetYErrorBars{YErrorBars: bars, offset: vg.Length(offset) * width}
	pl.Add(shifted)
	return nil
}

// offsetYErrorBars draws error bars shifted sideways by offset, to sit
// over bars drawn with the same plotter.BarChart Offset.
type offsetYErrorBars struct {
	*plotter.YErrorBars
	offset vg.Length
}

// Plot implements plot.Plotter.
func (e *offsetYErrorBars) Plot(c draw.Canvas, p *plot.Plot) {
	c.Rectangle.Min.X += e.offset
	c.Rectangle.Max.X += e.offset
	e.YErrorBars.Plot(c, p)
}
