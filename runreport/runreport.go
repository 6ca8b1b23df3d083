// Package runreport writes report.html, the page that describes a
// train-lebm run to a person: its settings, its latest sample and
// reconstruction grids, its curves, and its evaluation beside the paper's
// numbers where the paper has them. The page is plain HTML with inline
// style, no script and no remote resource: it opens from the file system,
// offline, with pictures linked relative to the run folder.
package runreport

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/training"
)

// Run is what the report shows of a run.
type Run struct {
	// Dir is the run folder; the report is written there and its pictures
	// are found and linked there.
	Dir string
	// Config is the model's configuration (its settings table).
	Config lebm.Config
	// Step is the run's global step, of Total planned (0: unknown).
	Step, Total int64
	// Eval is the run's evaluation (eval-lebm's summary.json), nil if none;
	// EvalDir is the folder of its pictures.
	Eval    *evalfile.Report
	EvalDir string
}

// Load fills the evaluation of a run from Dir/eval when eval-lebm has
// written one there, and leaves it nil otherwise.
func (r *Run) Load() {
	dir := training.Folder{Dir: r.Dir}.Eval()
	if s, err := evalfile.ReadReport(dir); err == nil {
		r.Eval, r.EvalDir = s, dir
	}
}

// Write writes the report to Dir/report.html, atomically.
func Write(r Run) error {
	page, err := r.page()
	if err != nil {
		return err
	}
	path := training.Folder{Dir: r.Dir}.Report()
	if err := atomicfile.Write(path, func(w io.Writer) error { return pageTemplate.Execute(w, page) }); err != nil {
		return fmt.Errorf("runreport: %w", err)
	}
	return nil
}

// page is the template's data.
type page struct {
	Title, Written     string
	Progress           string
	Samples, Recons    string // the latest grids, relative to Dir ("" for none)
	SamplesAt, ReconAt string
	Curves             []string // plots, relative to Dir
	EvalPictures       []string
	Settings           [][2]string
	Eval               []evalRow
	EvalNote           string
}

// evalRow is one metric of the evaluation beside the paper's.
type evalRow struct{ Metric, Ours, Paper string }

func (r Run) page() (page, error) {
	cfg := r.Config
	p := page{
		Title:   fmt.Sprintf("%s-LEBM on %s", strings.ToUpper(cfg.Method), orUnknown(cfg.Data)),
		Written: time.Now().UTC().Format("2006-01-02 15:04 UTC"),
	}
	if cfg.AnomalyHoldout >= 0 {
		p.Title += fmt.Sprintf(", class %d held out", cfg.AnomalyHoldout)
	}
	p.Progress = fmt.Sprintf("step %d", r.Step)
	if r.Total > 0 {
		p.Progress = fmt.Sprintf("step %d of %d (%.0f %%)", r.Step, r.Total, 100*float64(r.Step)/float64(r.Total))
	}
	p.Samples, p.SamplesAt = latest(r.Dir, training.SamplesPattern)
	p.Recons, p.ReconAt = latest(r.Dir, training.ReconstructionsPattern)
	for _, name := range []string{training.LossesPlot, training.EnergiesPlot} {
		if _, err := os.Stat(filepath.Join(r.Dir, name)); err == nil {
			p.Curves = append(p.Curves, name)
		}
	}
	settings, err := flatten(cfg)
	if err != nil {
		return p, err
	}
	p.Settings = settings
	if r.Eval != nil {
		p.Eval, p.EvalNote = evalRows(*r.Eval, cfg)
		for _, name := range evalfile.Pictures() {
			if _, err := os.Stat(filepath.Join(r.EvalDir, name)); err == nil {
				if rel, err := filepath.Rel(r.Dir, filepath.Join(r.EvalDir, name)); err == nil {
					p.EvalPictures = append(p.EvalPictures, filepath.ToSlash(rel))
				}
			}
		}
	}
	return p, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed data set"
	}
	return s
}

// latest returns the newest file of dir matching pattern, by modification
// time, and when it was written.
func latest(dir, pattern string) (name, when string) {
	paths, _ := filepath.Glob(filepath.Join(dir, pattern))
	var newest time.Time
	for _, path := range paths {
		if info, err := os.Stat(path); err == nil && !info.ModTime().Before(newest) {
			newest, name = info.ModTime(), filepath.Base(path)
		}
	}
	if name == "" {
		return "", ""
	}
	return name, newest.UTC().Format("2006-01-02 15:04 UTC")
}

// flatten lists cfg's settings as dotted names and values, sorted.
func flatten(cfg lebm.Config) ([][2]string, error) {
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("runreport: %w", err)
	}
	var tree map[string]any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("runreport: %w", err)
	}
	var rows [][2]string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				walk(strings.TrimPrefix(prefix+"."+k, "."), child)
			}
		default:
			// The template escapes the text; JSON's own HTML escaping
			// (\u003c for <) would show.
			var text strings.Builder
			enc := json.NewEncoder(&text)
			enc.SetEscapeHTML(false)
			enc.Encode(v)
			rows = append(rows, [2]string{prefix, strings.TrimSpace(text.String())})
		}
	}
	walk("", tree)
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	return rows, nil
}

// paperImages is the paper's table of MSE and FID (its Table 2, "MSE and
// FID on SVHN, CIFAR-10 and CelebA"): data set → method → {MSE, FID}.
var paperImages = map[string]map[string][2]float64{
	"svhn":     {"ed": {0.006, 28.10}, "cd": {0.008, 29.44}, "sm": {0.010, 34.44}},
	"cifar10":  {"ed": {0.023, 73.58}, "cd": {0.020, 70.15}, "sm": {0.026, 77.82}},
	"celeba64": {"ed": {0.009, 36.73}, "cd": {0.013, 37.87}, "sm": {0.014, 41.21}},
}

// paperAUPRC is the paper's anomaly-detection table on MNIST (its Table 3):
// method → held-out digit → AUPRC.
var paperAUPRC = map[string]map[int]string{
	"ed": {1: "0.342 ± 0.01", 4: "0.740 ± 0.01", 5: "0.708 ± 0.01", 7: "0.501 ± 0.02", 9: "0.444 ± 0.01"},
	"cd": {1: "0.336 ± 0.01", 4: "0.630 ± 0.02", 5: "0.619 ± 0.01", 7: "0.463 ± 0.01", 9: "0.413 ± 0.01"},
	"sm": {1: "0.285 ± 0.01", 4: "0.663 ± 0.01", 5: "0.610 ± 0.01", 7: "0.471 ± 0.01", 9: "0.422 ± 0.01"},
}

// evalRows lists the evaluation's metrics with the paper's value of the
// same data set and method where the paper reports one.
func evalRows(s evalfile.Report, cfg lebm.Config) ([]evalRow, string) {
	paper := paperImages[s.Data][s.Method]
	has := paper != [2]float64{}
	cell := func(v float64, ok bool) string {
		if !ok {
			return "–"
		}
		return fmt.Sprintf("%.4g", v)
	}
	rows := []evalRow{
		{fmt.Sprintf("test reconstruction MSE (%d images)", s.ReconstructionImages), fmt.Sprintf("%.4f", s.ReconstructionMSE), cell(paper[0], has)},
	}
	if s.FID > 0 {
		rows = append(rows, evalRow{fmt.Sprintf("FID (%d samples; the paper's: 50,000)", s.FIDSamples), fmt.Sprintf("%.2f", s.FID), cell(paper[1], has)})
	}
	if s.ClassifierFID > 0 {
		rows = append(rows, evalRow{fmt.Sprintf("classifier-FID (%d samples)", s.FIDSamples), fmt.Sprintf("%.2f", s.ClassifierFID), "–"})
	}
	if s.AnomalyHeldOut >= 0 {
		ours := fmt.Sprintf("%.3f", s.AnomalyAUPRC)
		if n := len(s.AnomalyAUPRCs); n > 1 {
			ours += fmt.Sprintf(" (mean of %d checkpoints)", n)
		}
		want := "–"
		if s.Data == "mnist" {
			if v, ok := paperAUPRC[s.Method][s.AnomalyHeldOut]; ok {
				want = v
			}
		}
		rows = append(rows, evalRow{fmt.Sprintf("anomaly AUPRC, class %d held out (%d images)", s.AnomalyHeldOut, s.AnomalyImages), ours, want})
	}
	rows = append(rows, evalRow{fmt.Sprintf("prior chains R̂ / split R̂ (%d × %d steps)", s.Chains, s.ChainSteps), fmt.Sprintf("%.3f / %.3f", s.RHat, s.SplitRHat), "–"})
	if s.BulkESS > 0 {
		rows = append(rows, evalRow{"prior chains bulk / tail ESS of U (second halves)", fmt.Sprintf("%.0f / %.0f", s.BulkESS, s.TailESS), "–"})
	}
	if s.GenerationSampler != "" {
		kernel := s.GenerationSampler
		if s.GenerationLeapfrogSteps > 0 {
			kernel += fmt.Sprintf(", %d leapfrog steps", s.GenerationLeapfrogSteps)
		}
		rows = append(rows, evalRow{fmt.Sprintf("generation chains (%s): proposals accepted", kernel), fmt.Sprintf("%.3f", s.GenerationAcceptance), "–"})
	}
	note := fmt.Sprintf("Evaluated at step %d.", s.Step)
	switch {
	case has:
		note += fmt.Sprintf(" The paper's column is its table of %s results for %s-LEBM, after 200 epochs.", s.Data, strings.ToUpper(s.Method))
	case s.AnomalyHeldOut >= 0 && s.Data == "mnist":
		note += " The paper's AUPRC is its MNIST anomaly table, averaged over the last 10 epochs."
	default:
		note += " The paper reports no numbers for this data set and method."
	}
	if math.IsNaN(s.ReconstructionMSE) {
		note += " The reconstruction MSE is NaN: the model diverged."
	}
	return rows, note
}

// pageTemplate is the report. html/template escapes every value.
var pageTemplate = template.Must(template.New(training.ReportFile).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
figure { display: inline-block; margin: 0 1.5em 1em 0; vertical-align: top; }
figcaption { font-size: 0.85em; color: #555; }
img { max-width: 34em; image-rendering: pixelated; border: 1px solid #ddd; }
img.grid { width: 24em; }
table { border-collapse: collapse; } td, th { padding: 0.2em 0.8em; border-bottom: 1px solid #eee; text-align: left; }
td.num { font-variant-numeric: tabular-nums; }
.settings td { font-family: ui-monospace, monospace; font-size: 0.85em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{.Progress}}. This page was written {{.Written}} and is rewritten at the end of every epoch and by eval-lebm.</p>

<h2>Pictures</h2>
{{if .Samples}}<figure><img class="grid" src="{{.Samples}}" alt="generated samples"><figcaption>Samples from the prior ({{.Samples}}, {{.SamplesAt}})</figcaption></figure>{{end}}
{{if .Recons}}<figure><img class="grid" src="{{.Recons}}" alt="test reconstructions"><figcaption>Test images and their reconstructions ({{.Recons}}, {{.ReconAt}})</figcaption></figure>{{end}}
{{if not (or .Samples .Recons)}}<p>No pictures yet: they are written at the end of each epoch and every few minutes within one.</p>{{end}}

<h2>Curves</h2>
{{range .Curves}}<figure><img src="{{.}}" alt="{{.}}"><figcaption>{{.}}</figcaption></figure>{{else}}<p>No curves yet.</p>{{end}}

<h2>Evaluation</h2>
{{if .Eval}}
<table>
<tr><th>metric</th><th>this run</th><th>the paper</th></tr>
{{range .Eval}}<tr><td>{{.Metric}}</td><td class="num">{{.Ours}}</td><td class="num">{{.Paper}}</td></tr>
{{end}}</table>
<p>{{.EvalNote}}</p>
{{range .EvalPictures}}<figure><img src="{{.}}" alt="{{.}}"><figcaption>{{.}}</figcaption></figure>{{end}}
{{else}}<p>Not evaluated yet: <code>eval-lebm -run RUN</code> measures the reconstruction error, the FID, the MCMC diagnostics and, for held-out-class runs, the anomaly AUPRC.</p>{{end}}

<h2>Settings</h2>
<table class="settings">
{{range .Settings}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>
{{end}}</table>
</body>
</html>
`))
