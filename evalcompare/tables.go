package evalcompare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/plots"
)

// none marks a metric a report does not hold.
const none = "—"

// column is one metric of the runs table: shown when any report has it.
type column struct {
	header string
	has    func(*evalfile.Report) bool
	format func(*evalfile.Report) string
}

var columns = []column{
	{"data", func(r *evalfile.Report) bool { return r.Data != "" }, func(r *evalfile.Report) string { return r.Data }},
	{"step", func(r *evalfile.Report) bool { return true }, func(r *evalfile.Report) string { return fmt.Sprint(r.Step) }},
	{"recon. MSE (images)", func(r *evalfile.Report) bool { return r.ReconstructionImages > 0 },
		func(r *evalfile.Report) string {
			return fmt.Sprintf("%.4f%s (%d)", r.ReconstructionMSE, bracket("%.4f", r.ReconstructionMSEInterval), r.ReconstructionImages)
		}},
	{"FID (samples)", func(r *evalfile.Report) bool { return r.Inception != "" },
		func(r *evalfile.Report) string {
			return fmt.Sprintf("%.2f%s (%d)", r.FID, bracket("%.2f", r.FIDInterval), r.FIDSamples)
		}},
	{"classifier-FID (samples)", func(r *evalfile.Report) bool { return r.Classifier != "" },
		func(r *evalfile.Report) string {
			return fmt.Sprintf("%.2f%s (%d)", r.ClassifierFID, bracket("%.2f", r.ClassifierFIDInterval), r.FIDSamples)
		}},
	{"anomaly AUPRC (class; images; snapshots)", (*evalfile.Report).HasAnomaly, func(r *evalfile.Report) string {
		return fmt.Sprintf("%.3f (%d; %d; %d)", r.AnomalyAUPRC, r.AnomalyHeldOut, r.AnomalyImages, len(r.AnomalyAUPRCs))
	}},
	{"R̂ / split R̂ (chains × steps)", func(r *evalfile.Report) bool { return r.Chains > 0 },
		func(r *evalfile.Report) string {
			return fmt.Sprintf("%.2f / %.2f (%d × %d)", r.RHat, r.SplitRHat, r.Chains, r.ChainSteps)
		}},
	// Shown for exact generation (MALA, HMC); a run generating by the
	// paper's Langevin, which accepts every proposal, has "—" there.
	{"generation (proposals accepted)", func(r *evalfile.Report) bool { return r.GenerationSampler != "" && r.GenerationSampler != "langevin" },
		func(r *evalfile.Report) string {
			return fmt.Sprintf("%s (%.3f)", r.GenerationSampler, r.GenerationAcceptance)
		}},
}

// writeHeader writes a Markdown table's header row of headers and its rule.
func writeHeader(b *strings.Builder, headers []string) {
	b.WriteString("| " + strings.Join(headers, " | ") + " |\n|" + strings.Repeat("---|", len(headers)) + "\n")
}

// bracket formats iv as " [lo, hi]" in format, or "" for none.
func bracket(format string, iv *eval.Interval) string {
	if iv == nil {
		return ""
	}
	return fmt.Sprintf(" ["+format+", "+format+"]", iv.Lo, iv.Hi)
}

// metricsTable is a Markdown table of every run and each metric any of
// them holds.
func metricsTable(runs []labelled) string {
	var shown []column
	for _, c := range columns {
		if slices.ContainsFunc(runs, func(l labelled) bool { return c.has(l.report) }) {
			shown = append(shown, c)
		}
	}
	var b strings.Builder
	headers := []string{"run", "report"}
	for _, c := range shown {
		headers = append(headers, c.header)
	}
	writeHeader(&b, headers)
	for _, l := range runs {
		fmt.Fprintf(&b, "| %s | %s |", l.label, l.link)
		for _, c := range shown {
			cell := none
			if c.has(l.report) {
				cell = c.format(l.report)
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// anomalyTable holds the anomaly results by held-out class and label.
type anomalyTable struct {
	data    string // the data set, when the reports name it
	classes []int
	labels  []string
	cells   map[anomalyKey]*evalfile.Report
	scores  map[anomalyKey]*scoreSet // the cells' scored images, where saved
	draws   map[anomalyKey][]float64 // bootstrap AUPRCs (see bootstrap)
}

type anomalyKey struct {
	class int
	label string
}

// newAnomalyTable gathers the reports with anomaly results and the scores
// saved beside them; nil when none has any. Two reports for one class and
// label, or anomaly reports of different data sets, are errors.
func newAnomalyTable(runs []labelled) (*anomalyTable, error) {
	t := &anomalyTable{cells: map[anomalyKey]*evalfile.Report{}, scores: map[anomalyKey]*scoreSet{}}
	where := map[anomalyKey]string{}
	for _, l := range runs {
		r := l.report
		if !r.HasAnomaly() {
			continue
		}
		if t.data != "" && r.Data != "" && r.Data != t.data {
			return nil, fmt.Errorf("%s: anomaly results on %s beside results on %s: compare one data set at a time", l.path, r.Data, t.data)
		}
		if r.Data != "" {
			t.data = r.Data
		}
		key := anomalyKey{r.AnomalyHeldOut, l.label}
		if other, dup := where[key]; dup {
			return nil, fmt.Errorf("%s and %s: both hold %q's anomaly result for held-out class %d; give them different labels", other, l.path, l.label, key.class)
		}
		scores, err := readScores(l.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.path, err)
		}
		where[key], t.cells[key], t.scores[key] = l.path, r, scores
		if !slices.Contains(t.classes, key.class) {
			t.classes = append(t.classes, key.class)
		}
		if !slices.Contains(t.labels, key.label) {
			t.labels = append(t.labels, key.label)
		}
	}
	if len(t.cells) == 0 {
		return nil, nil
	}
	slices.Sort(t.classes)
	return t, nil
}

// labelMean is a label's AUPRC averaged over the classes it has and how
// many those are.
func (t *anomalyTable) labelMean(label string) (mean float64, n int) {
	for _, c := range t.classes {
		if r, ok := t.cells[anomalyKey{c, label}]; ok {
			mean += r.AnomalyAUPRC
			n++
		}
	}
	return mean / float64(n), n
}

// markdown is the AUPRC table — a row per held-out class, the chance level
// where the reports give it, a last row averaging over the classes — and,
// with bootstrap draws, the table of paired differences between labels.
// A cell's brackets hold its 95 % bootstrap interval over the scored
// images or, without saved scores, the range over its snapshots.
func (t *anomalyTable) markdown() string {
	var b strings.Builder
	writeHeader(&b, append(append([]string{"held-out class"}, t.labels...), "chance (anomaly share)"))
	for _, c := range t.classes {
		fmt.Fprintf(&b, "| %d |", c)
		chance := none
		for _, l := range t.labels {
			key := anomalyKey{c, l}
			r, ok := t.cells[key]
			if !ok {
				b.WriteString(" " + none + " |")
				continue
			}
			cell := fmt.Sprintf("%.3f", r.AnomalyAUPRC)
			if d := t.draws[key]; d != nil {
				cell += interval(d)
			} else if len(r.AnomalyAUPRCs) > 1 {
				cell += fmt.Sprintf(" (%.3f–%.3f)", slices.Min(r.AnomalyAUPRCs), slices.Max(r.AnomalyAUPRCs))
			}
			b.WriteString(" " + cell + " |")
			if r.AnomalyPositives > 0 {
				chance = fmt.Sprintf("%.3f", float64(r.AnomalyPositives)/float64(r.AnomalyImages))
			}
		}
		b.WriteString(" " + chance + " |\n")
	}
	b.WriteString("| mean |")
	for _, l := range t.labels {
		mean, n := t.labelMean(l)
		cell := fmt.Sprintf("**%.3f**", mean)
		if n < len(t.classes) {
			cell += fmt.Sprintf(" (%d of %d classes)", n, len(t.classes))
		}
		b.WriteString(" " + cell + interval(t.meanDraws(l)) + " |")
	}
	b.WriteString(" |\n")
	if len(t.draws) > 0 {
		b.WriteString(fmt.Sprintf("\nBrackets: %.0f %% bootstrap intervals over the scored images (%d resamples).\n", 100*level, t.resamples()))
		b.WriteString(t.differences())
	}
	return b.String()
}

// resamples is the number of bootstrap draws of any cell.
func (t *anomalyTable) resamples() int {
	for _, d := range t.draws {
		return len(d)
	}
	return 0
}

// differences tabulates the paired bootstrap of AUPRC differences between
// each pair of labels, per class and averaged over the classes; intervals
// that exclude 0 are in bold.
func (t *anomalyTable) differences() string {
	type pair struct{ a, b string }
	var pairs []pair
	for i, a := range t.labels {
		for _, b := range t.labels[i+1:] {
			pairs = append(pairs, pair{a, b})
		}
	}
	if len(pairs) == 0 {
		return ""
	}
	// The reports' difference, bold when its interval excludes 0.
	cell := func(point float64, draws []float64) string {
		lo, hi, err := eval.PercentileInterval(draws, level)
		if err != nil {
			return none
		}
		text := fmt.Sprintf("%+.3f [%+.3f, %+.3f]", point, lo, hi)
		if lo > 0 || hi < 0 {
			text = "**" + text + "**"
		}
		return text
	}
	var b strings.Builder
	b.WriteString("\nPaired differences of AUPRC (95 % bootstrap interval, the same resampled images for both):\n\n")
	headers := []string{"held-out class"}
	for _, p := range pairs {
		headers = append(headers, p.a+" − "+p.b)
	}
	writeHeader(&b, headers)
	for _, c := range t.classes {
		fmt.Fprintf(&b, "| %d |", c)
		for _, p := range pairs {
			a, b2 := anomalyKey{c, p.a}, anomalyKey{c, p.b}
			text := none
			if t.cells[a] != nil && t.cells[b2] != nil {
				text = cell(t.cells[a].AnomalyAUPRC-t.cells[b2].AnomalyAUPRC, difference(t.draws[a], t.draws[b2]))
			}
			b.WriteString(" " + text + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("| mean |")
	for _, p := range pairs {
		meanA, _ := t.labelMean(p.a)
		meanB, _ := t.labelMean(p.b)
		b.WriteString(" " + cell(meanA-meanB, difference(t.meanDraws(p.a), t.meanDraws(p.b))) + " |")
	}
	b.WriteString("\n")
	return b.String()
}

// writeChart draws the table as grouped bars, the classes and their mean
// along the x axis; whiskers span the bootstrap interval or, without saved
// scores, the snapshots' range.
func (t *anomalyTable) writeChart(path, title string) error {
	chart := plots.BarChart{Title: title, XLabel: "held-out class", YLabel: "AUPRC"}
	for _, c := range t.classes {
		chart.Groups = append(chart.Groups, fmt.Sprint(c))
	}
	chart.Groups = append(chart.Groups, "mean")
	whisker := func(draws, fallback []float64) (lo, hi float64) {
		if lo, hi, err := eval.PercentileInterval(draws, level); err == nil {
			return lo, hi
		}
		if len(fallback) > 0 {
			return slices.Min(fallback), slices.Max(fallback)
		}
		return math.NaN(), math.NaN()
	}
	for _, l := range t.labels {
		s := plots.BarSeries{Name: l}
		for _, c := range t.classes {
			key := anomalyKey{c, l}
			v, lo, hi := 0.0, math.NaN(), math.NaN()
			if r, ok := t.cells[key]; ok {
				v = r.AnomalyAUPRC
				lo, hi = whisker(t.draws[key], r.AnomalyAUPRCs)
			}
			s.Values, s.Low, s.High = append(s.Values, v), append(s.Low, lo), append(s.High, hi)
		}
		mean, _ := t.labelMean(l)
		lo, hi := whisker(t.meanDraws(l), nil)
		s.Values, s.Low, s.High = append(s.Values, mean), append(s.Low, lo), append(s.High, hi)
		chart.Series = append(chart.Series, s)
	}
	return plots.WriteBarChart(path, chart)
}

// summaryMetric is one column of the per-label summary.
type summaryMetric struct {
	header, format string
	has            func(*evalfile.Report) bool
	value          func(*evalfile.Report) float64
}

var summaryMetrics = []summaryMetric{
	{"recon. MSE", "%.4f", func(r *evalfile.Report) bool { return r.ReconstructionImages > 0 }, func(r *evalfile.Report) float64 { return r.ReconstructionMSE }},
	{"FID", "%.2f", func(r *evalfile.Report) bool { return r.Inception != "" }, func(r *evalfile.Report) float64 { return r.FID }},
	{"classifier-FID", "%.2f", func(r *evalfile.Report) bool { return r.Classifier != "" }, func(r *evalfile.Report) float64 { return r.ClassifierFID }},
	{"R̂", "%.3f", func(r *evalfile.Report) bool { return r.Chains > 0 }, func(r *evalfile.Report) float64 { return r.RHat }},
}

// labelSummary is a Markdown table of each label's runs (seeds, say): the
// mean of each metric over the runs holding it, and their range; "" when
// no label has more than one run.
func labelSummary(runs []labelled) string {
	var labels []string
	byLabel := map[string][]*evalfile.Report{}
	for _, l := range runs {
		if byLabel[l.label] == nil {
			labels = append(labels, l.label)
		}
		byLabel[l.label] = append(byLabel[l.label], l.report)
	}
	if len(labels) == len(runs) {
		return ""
	}
	var shown []summaryMetric
	for _, m := range summaryMetrics {
		if slices.ContainsFunc(runs, func(l labelled) bool { return m.has(l.report) }) {
			shown = append(shown, m)
		}
	}
	if len(shown) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nBy label: the mean over its runs (their range).\n\n")
	headers := []string{"label", "runs"}
	for _, m := range shown {
		headers = append(headers, m.header)
	}
	writeHeader(&b, headers)
	for _, label := range labels {
		reports := byLabel[label]
		fmt.Fprintf(&b, "| %s | %d |", label, len(reports))
		for _, m := range shown {
			var values []float64
			for _, r := range reports {
				if m.has(r) {
					values = append(values, m.value(r))
				}
			}
			b.WriteString(" " + summaryCell(m.format, values) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// summaryCell formats the mean of values and, for more than one, their
// range in brackets.
func summaryCell(format string, values []float64) string {
	if len(values) == 0 {
		return none
	}
	cell := fmt.Sprintf(format, stat.Mean(values, nil))
	if len(values) > 1 {
		cell += fmt.Sprintf(" ("+format+"–"+format+")", slices.Min(values), slices.Max(values))
	}
	return cell
}
