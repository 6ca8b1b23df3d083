package densityrun

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// ColumnShape is how one column of a method's synthetic rows compares
// with the training rows'.
type ColumnShape struct {
	Column string     `json:"column"`
	Kind   table.Kind `json:"kind"`
	// Score is the column's shape score as SDMetrics' Column Shapes has
	// it: the KS complement of a numeric column (eval.KSComplement), the
	// TV complement of a categorical one (eval.TVComplement); 1 for rows
	// of the training rows' law.
	Score float64 `json:"score"`
	// Chart is the picture of both, relative to the method's folder.
	Chart string `json:"chart"`
}

// columnsFolder holds a method's column charts.
const columnsFolder = "columns"

// chartCategories is the most categories a column's chart shows apart;
// the rest are one bar.
const chartCategories = 24

// histogramBins are the bins of a numeric column's chart of n training
// rows: √n, from 10 to 40.
func histogramBins(n int) int { return min(max(int(math.Sqrt(float64(n))), 10), 40) }

// columnShapes compares every column of the synthetic rows with the
// training rows' and charts both in folder's columnsFolder.
func columnShapes(train, synthetic *table.Table, folder string) ([]ColumnShape, error) {
	if err := os.MkdirAll(filepath.Join(folder, columnsFolder), 0o755); err != nil {
		return nil, err
	}
	var out []ColumnShape
	for c, col := range train.Schema.Columns {
		shape := ColumnShape{Column: col.Name, Kind: col.Kind, Chart: filepath.ToSlash(filepath.Join(columnsFolder, chartName(c, col.Name)))}
		path := filepath.Join(folder, shape.Chart)
		trainNumbers, trainCodes := train.Column(c)
		synthNumbers, synthCodes := synthetic.Column(c)
		var err error
		if col.Kind == table.Numeric {
			if shape.Score, err = eval.KSComplement(trainNumbers, synthNumbers); err == nil {
				err = plots.WriteLinePlot(path, numericChart(col.Name, trainNumbers, synthNumbers))
			}
		} else {
			if shape.Score, err = eval.TVComplement(trainCodes, synthCodes, len(col.Categories)); err == nil {
				err = plots.WriteBarChart(path, categoricalChart(col, trainCodes, synthCodes))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", col.Name, err)
		}
		out = append(out, shape)
	}
	return out, nil
}

// chartName is the file of column c's chart: its place and its name's
// letters and digits.
func chartName(c int, name string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	return fmt.Sprintf("%02d-%s.png", c+1, safe)
}

// numericChart is the share of rows in each of histogramBins bins over
// the training rows' range, training and synthetic (those outside it in
// the end bins).
func numericChart(name string, train, synthetic []float64) plots.LinePlot {
	bins := histogramBins(len(train))
	lo, hi := slices.Min(train), slices.Max(train)
	width := (hi - lo) / float64(bins)
	centres := make([]float64, bins)
	for b := range centres {
		centres[b] = lo + (float64(b)+0.5)*width
	}
	shares := func(values []float64) []float64 {
		out := make([]float64, bins)
		for _, v := range values {
			b := 0
			if width > 0 {
				b = min(max(int((v-lo)/width), 0), bins-1)
			}
			out[b] += 1 / float64(len(values))
		}
		return out
	}
	return plots.LinePlot{Title: name, XLabel: name, YLabel: "share of rows",
		Series: []plots.Series{{Name: "training rows", X: centres, Y: shares(train)}, {Name: "synthetic rows", X: centres, Y: shares(synthetic)}}}
}

// categoricalChart is each category's share of the training and the
// synthetic rows; past chartCategories, the training rows' most frequent
// ones and the rest as one bar.
func categoricalChart(col table.Column, train, synthetic []int) plots.BarChart {
	k := len(col.Categories)
	count := func(codes []int) []float64 {
		out := make([]float64, k)
		for _, c := range codes {
			out[c] += 1 / float64(len(codes))
		}
		return out
	}
	trainShares, synthShares := count(train), count(synthetic)
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	if k > chartCategories {
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case trainShares[a] > trainShares[b]:
				return -1
			case trainShares[a] < trainShares[b]:
				return 1
			}
			return 0
		})
	}
	chart := plots.BarChart{Title: col.Name, XLabel: col.Name, YLabel: "share of rows",
		Series: []plots.BarSeries{{Name: "training rows"}, {Name: "synthetic rows"}}}
	for i, c := range order {
		if i == chartCategories-1 && k > chartCategories {
			var restTrain, restSynth float64
			for _, r := range order[i:] {
				restTrain, restSynth = restTrain+trainShares[r], restSynth+synthShares[r]
			}
			chart.Groups = append(chart.Groups, fmt.Sprintf("%d others", k-i))
			chart.Series[0].Values = append(chart.Series[0].Values, restTrain)
			chart.Series[1].Values = append(chart.Series[1].Values, restSynth)
			break
		}
		chart.Groups = append(chart.Groups, col.Categories[c])
		chart.Series[0].Values = append(chart.Series[0].Values, trainShares[c])
		chart.Series[1].Values = append(chart.Series[1].Values, synthShares[c])
	}
	return chart
}

// writeTableReport writes the run folder's report.html: the table, then
// each method's results, loss curve and synthetic rows against the
// training rows, column by column.
func writeTableReport(out string, rec tableRecord, summary string, results []TableResults) error {
	p := tablePage{Title: "train-table: " + filepath.Base(rec.File), File: rec.File, Rows: rec.N, Train: len(rec.Train), Test: len(rec.Test),
		Summary: summary, Written: time.Now().UTC().Format("2006-01-02 15:04 UTC")}
	for _, r := range results {
		m := tableMethod{Name: r.Method, Long: methodNames[r.Method], Results: r, Losses: filepath.ToSlash(filepath.Join(r.Method, training.LossesPlot))}
		for _, c := range r.Columns {
			c.Chart = filepath.ToSlash(filepath.Join(r.Method, c.Chart))
			m.Columns = append(m.Columns, c)
		}
		p.Methods = append(p.Methods, m)
	}
	path := filepath.Join(out, training.ReportFile)
	return atomicfile.Write(path, func(w io.Writer) error { return tablePageTemplate.Execute(w, p) })
}

// methodNames are the mixed methods' names on the page.
var methodNames = map[string]string{"med": "energy discrepancy", "mcd": "contrastive divergence"}

// tablePage is the report's template data.
type tablePage struct {
	Title, File, Summary, Written string
	Rows, Train, Test             int
	Methods                       []tableMethod
}

// tableMethod is one method's section of the report.
type tableMethod struct {
	Name, Long, Losses string
	Results            TableResults
	Columns            []ColumnShape // charts relative to the run folder
}

var tablePageTemplate = template.Must(template.New(training.ReportFile).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { font-size: 1em; }
figure { display: inline-block; margin: 0 1em 1em 0; vertical-align: top; }
figcaption { font-size: 0.85em; color: #555; }
img { width: 30em; border: 1px solid #ddd; } img.loss { width: 34em; }
table { border-collapse: collapse; } td, th { padding: 0.2em 0.8em; border-bottom: 1px solid #eee; text-align: left; }
td.num { font-variant-numeric: tabular-nums; text-align: right; }
pre { font-size: 0.85em; background: #f7f7f7; padding: 0.8em; overflow-x: auto; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{.Rows}} rows of {{.File}}: {{.Train}} to train on, {{.Test}} held out. This page was written {{.Written}}, when the run last measured its models.</p>
<pre>{{.Summary}}</pre>
{{range .Methods}}
<h2>{{.Long}} ({{.Name}}), step {{.Results.Step}}</h2>
<table>
<tr><td>mean energy of the held-out rows, of the training rows</td><td class="num">{{printf "%.4f" .Results.TestEnergy}}, {{printf "%.4f" .Results.TrainEnergy}}</td></tr>
{{if .Results.AIS}}<tr><td>held-out log-likelihood, nats a row (95 % interval; training rows), through AIS's log Z {{printf "%.3f" .Results.LogZ}}{{if not .Results.AIS.Converged}} — AIS warned: {{range .Results.AIS.Warnings}}{{.}} {{end}}{{end}}</td><td class="num">{{printf "%.4f" .Results.TestLogLikelihood}} [{{printf "%.4f" .Results.TestInterval.Lo}}, {{printf "%.4f" .Results.TestInterval.Hi}}] ({{printf "%.4f" .Results.TrainLogLikelihood}})</td></tr>{{end}}
<tr><td>held-out rows above training rows (share of pairs; 0.5: unseen rows scored as training rows)</td><td class="num">{{printf "%.3f" .Results.HeldOutAbove}} ({{printf "%.1f" .Results.HeldOutAboveZ}} standard errors)</td></tr>
{{if .Results.Target}}<tr><td>{{.Results.Target}} classified by the energy: accuracy (majority), expected calibration error</td><td class="num">{{printf "%.4f" .Results.TargetAccuracy}} ({{printf "%.4f" .Results.MajorityShare}}), {{printf "%.4f" .Results.TargetECE}}</td></tr>{{end}}
<tr><td>synthetic rows' column shapes (mean of the scores below; 1: the training rows' law)</td><td class="num">{{printf "%.4f" .Results.ColumnShapes}}</td></tr>
<tr><td>seconds to train, to measure and sample</td><td class="num">{{printf "%.0f" .Results.TrainSeconds}}, {{printf "%.0f" .Results.MeasureSeconds}}</td></tr>
</table>
<p>Files: <a href="{{.Name}}/samples.csv">synthetic rows</a>, <a href="{{.Name}}/scores.csv">held-out rows ranked by energy</a>, <a href="{{.Name}}/results.json">results</a>.</p>
<figure><img class="loss" src="{{.Losses}}" alt="the training loss"><figcaption>The training loss ({{.Losses}})</figcaption></figure>
<h3>Synthetic rows against the training rows, column by column</h3>
<table>
<tr><th>column</th><th>kind</th><th>shape score</th></tr>
{{range .Columns}}<tr><td>{{.Column}}</td><td>{{.Kind}}</td><td class="num">{{printf "%.4f" .Score}}</td></tr>
{{end}}</table>
{{range .Columns}}<figure><img src="{{.Chart}}" alt="{{.Column}}"><figcaption>{{.Column}}: {{printf "%.4f" .Score}} ({{if eq .Kind "numeric"}}1 − Kolmogorov–Smirnov{{else}}1 − total variation{{end}})</figcaption></figure>
{{end}}
{{end}}
</body>
</html>
`))
