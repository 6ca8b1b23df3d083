package evalcompare

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/plots"
)

// epochMetric is one measure of eval-lebm -each-epoch, plotted and
// tabulated over epochs when any report holds it.
type epochMetric struct {
	name, title, format string
	value               func(evalfile.EpochReport) float64 // 0: not measured
}

var epochMetrics = []epochMetric{
	{"reconstruction_mse", "test reconstruction MSE", "%.4f", func(e evalfile.EpochReport) float64 { return e.ReconstructionMSE }},
	{"classifier_fid", "classifier-FID", "%.2f", func(e evalfile.EpochReport) float64 { return e.ClassifierFID }},
	{"fid", "FID", "%.2f", func(e evalfile.EpochReport) float64 { return e.FID }},
	{"r_hat", "R̂ of the prior chains", "%.3f", func(e evalfile.EpochReport) float64 { return e.RHat }},
}

// runName names a run in the curves and per-epoch tables: its label and,
// to tell apart runs of one label (seeds, say), the folder of its
// checkpoint.
func runName(l labelled) string {
	return fmt.Sprintf("%s (%s)", l.label, filepath.Base(filepath.Dir(l.report.Checkpoint)))
}

// epochCurves writes, for each measure the reports' per-epoch results
// hold, epochs_NAME.png into out (one curve per run, over epochs) and
// returns a Markdown table of them (one row per epoch, one column per run);
// "" when no report has per-epoch results.
func epochCurves(runs []labelled, out string) (string, error) {
	var withEpochs []labelled
	for _, l := range runs {
		if len(l.report.Epochs) > 0 {
			withEpochs = append(withEpochs, l)
		}
	}
	if len(withEpochs) == 0 {
		return "", nil
	}
	var md strings.Builder
	for _, m := range epochMetrics {
		var series []plots.Series
		rows := map[int64][]string{} // epoch → one cell per run
		for i, l := range withEpochs {
			s := plots.Series{Name: runName(l)}
			for _, e := range l.report.Epochs {
				if v := m.value(e); v != 0 {
					s.X, s.Y = append(s.X, float64(e.Epoch)), append(s.Y, v)
					if rows[e.Epoch] == nil {
						rows[e.Epoch] = slices.Repeat([]string{none}, len(withEpochs))
					}
					rows[e.Epoch][i] = fmt.Sprintf(m.format, v)
				}
			}
			if len(s.X) > 0 {
				series = append(series, s)
			}
		}
		if len(series) == 0 {
			continue
		}
		file := "epochs_" + m.name + ".png"
		if err := plots.WriteLinePlot(filepath.Join(out, file), plots.LinePlot{
			Title: m.title + " after each epoch", XLabel: "epoch", YLabel: m.title, Series: series,
		}); err != nil {
			return "", err
		}
		fmt.Fprintf(&md, "\n%s after each epoch ([%s](%s)):\n\n", capitalise(m.title), file, file)
		headers := []string{"epoch"}
		for _, l := range withEpochs {
			headers = append(headers, runName(l))
		}
		writeHeader(&md, headers)
		epochs := make([]int64, 0, len(rows))
		for e := range rows {
			epochs = append(epochs, e)
		}
		slices.Sort(epochs)
		for _, e := range epochs {
			fmt.Fprintf(&md, "| %d | %s |\n", e, strings.Join(rows[e], " | "))
		}
	}
	return md.String(), nil
}

// capitalise upper-cases the first letter of s.
func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
