// Package evalcompare puts the reports of several evaluations
// (lebmeval.Evaluate's, eval-lebm's summary.json) side by side, as
// cmd/compare-evals does: a Markdown table of every metric the reports
// hold and, when they hold anomaly-detection results, a table and a bar
// chart of the AUPRC by held-out class and run label.
//
// Reports of one label for different held-out classes fill one column of
// the anomaly table. Where eval-lebm saved the anomaly scores beside a
// report, each AUPRC gets a 95 % bootstrap interval over the scored images
// (the chart's whiskers; otherwise they span the averaged snapshots) and a
// second table gives the paired differences between labels, resampling
// the same images for all labels of a class. Where several reports share a
// label (seeds of one method, say), a table gives each label's mean and
// range. Reports of eval-lebm -each-epoch add curves over the epochs, one
// per run (epochs_reconstruction_mse.png, epochs_classifier_fid.png, …),
// and their tables. Errors about settings name cmd/compare-evals' flags.
package evalcompare

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/evalfile"
)

// labelled is one report and the label it is shown under.
type labelled struct {
	label, path string
	link        string // path as a Markdown link from the comparison's folder
	report      *evalfile.Report
}

// relativeLink is a Markdown link to path from the folder out, where the
// comparison is written, so that the link works wherever the two folders
// move together (docs/results/…); the path as given when no relative path
// leads there.
func relativeLink(out, path string) string {
	absOut, errOut := filepath.Abs(out)
	absPath, errPath := filepath.Abs(path)
	rel, err := filepath.Rel(absOut, absPath)
	if errOut != nil || errPath != nil || err != nil {
		return path
	}
	rel = filepath.ToSlash(rel)
	return fmt.Sprintf("[%s](%s)", rel, rel)
}

// Options say what Compare reads and writes (cmd/compare-evals' flags and
// arguments in brackets).
type Options struct {
	// Reports are the evaluations compared, each [LABEL=]PATH: PATH an
	// eval-lebm output folder or its summary.json, LABEL the column it is
	// shown under (default: the report's prior update, ed, cd or sm)
	// (the arguments).
	Reports []string
	// Out is the folder for comparison.md and the pictures (-out).
	Out string
	// Title is the anomaly chart's title (default: "anomaly AUPRC" and
	// the data set) (-title).
	Title string
	// Bootstrap is the number of resamples of the scored images for the
	// AUPRC intervals and paired differences; 0 for none (-bootstrap).
	Bootstrap int
}

// Compare puts the reports of o.Reports side by side in
// o.Out/comparison.md, whose Markdown it also returns: see the package
// comment for what it holds.
func Compare(o Options) (string, error) {
	md, err := compare(o.Reports, o.Out, o.Title, o.Bootstrap)
	if err != nil {
		return "", err
	}
	return md, atomicfile.Write(filepath.Join(o.Out, "comparison.md"), func(w io.Writer) error {
		_, err := io.WriteString(w, md)
		return err
	})
}

// compare writes the pictures into out and returns the comparison's
// Markdown.
func compare(args []string, out, title string, resamples int) (string, error) {
	if resamples < 0 {
		return "", fmt.Errorf("Options.Bootstrap %d: want ≥ 0 (0: no intervals)", resamples)
	}
	runs, err := readReports(args)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", fmt.Errorf("Options.Out: %w", err)
	}
	for i := range runs {
		runs[i].link = relativeLink(out, runs[i].path)
	}
	md := metricsTable(runs) + labelSummary(runs)
	curves, err := epochCurves(runs, out)
	if err != nil {
		return "", err
	}
	md += curves
	anomaly, err := newAnomalyTable(runs)
	if err != nil || anomaly == nil {
		return md, err
	}
	if resamples > 0 {
		if err := anomaly.bootstrap(resamples); err != nil {
			return "", err
		}
	}
	md += "\n" + anomaly.markdown()
	if title == "" {
		title = strings.TrimSpace("anomaly AUPRC " + anomaly.data)
	}
	return md, anomaly.writeChart(filepath.Join(out, "anomaly_auprc.png"), title)
}

// readReports parses the [LABEL=]PATH arguments and reads their reports.
func readReports(args []string) ([]labelled, error) {
	if len(args) == 0 {
		return nil, errors.New("no reports: give eval-lebm output folders or summary.json files as arguments ([LABEL=]PATH)")
	}
	runs := make([]labelled, 0, len(args))
	for _, arg := range args {
		label, path, hasLabel := strings.Cut(arg, "=")
		if !hasLabel {
			label, path = "", arg
		}
		if hasLabel && label == "" {
			return nil, fmt.Errorf("argument %q: empty label before '=' (want LABEL=PATH or PATH)", arg)
		}
		r, err := evalfile.ReadReport(path)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", arg, err)
		}
		if label == "" {
			label = r.Method
		}
		if label == "" {
			return nil, fmt.Errorf("argument %q: the report names no method (an older eval-lebm): give a label, LABEL=%s", arg, path)
		}
		runs = append(runs, labelled{label: label, path: path, report: r})
	}
	return runs, nil
}
