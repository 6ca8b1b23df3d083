// Command compare-evals puts the reports of several eval-lebm runs side by
// side: a Markdown table of every metric the reports hold and, when they
// hold anomaly-detection results, a table and a bar chart of the AUPRC by
// held-out class and run label.
//
//	go run ./cmd/compare-evals -out docs/results/cmp ed=runs/ed/eval cd=runs/cd/eval sm=runs/sm/eval
//
// Each argument is [LABEL=]PATH, PATH an eval-lebm output folder or its
// summary.json; LABEL defaults to the report's prior update (ed, cd, sm).
// Reports of one label for different held-out classes fill one column of
// the anomaly table. Where eval-lebm saved the anomaly scores beside a
// report, each AUPRC gets a 95 % bootstrap interval over the scored images
// (the chart's whiskers; otherwise they span the averaged snapshots) and a
// second table gives the paired differences between labels, resampling
// the same images for all labels of a class. Where several reports share a
// label (seeds of one method, say), a table gives each label's mean and
// range. Reports of eval-lebm -each-epoch add curves over the epochs, one
// per run (epochs_reconstruction_mse.png, epochs_classifier_fid.png, …),
// and their tables. Writes comparison.md (also printed) and, with anomaly
// results, anomaly_auprc.png into -out.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/evalfile"
)

func main() {
	fs := flag.NewFlagSet("compare-evals", flag.ExitOnError)
	out := fs.String("out", ".", "folder for comparison.md and anomaly_auprc.png")
	title := fs.String("title", "", "title of the anomaly chart (default: \"anomaly AUPRC\" and the data set)")
	resamples := fs.Int("bootstrap", 2000, "bootstrap resamples of the scored images for the AUPRC intervals and paired differences (0: none)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: compare-evals [-out DIR] [-title T] [LABEL=]EVAL_DIR_OR_SUMMARY ...")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	if err := run(fs.Args(), *out, *title, *resamples); err != nil {
		fmt.Fprintln(os.Stderr, "compare-evals:", err)
		os.Exit(1)
	}
}

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

func run(args []string, out, title string, resamples int) error {
	if resamples < 0 {
		return fmt.Errorf("flag -bootstrap %d: want ≥ 0 (0: no intervals)", resamples)
	}
	runs, err := readReports(args)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("flag -out: %w", err)
	}
	for i := range runs {
		runs[i].link = relativeLink(out, runs[i].path)
	}
	md := metricsTable(runs) + labelSummary(runs)
	curves, err := epochCurves(runs, out)
	if err != nil {
		return err
	}
	md += curves
	anomaly, err := newAnomalyTable(runs)
	if err != nil {
		return err
	}
	if anomaly != nil {
		if resamples > 0 {
			if err := anomaly.bootstrap(resamples); err != nil {
				return err
			}
		}
		md += "\n" + anomaly.markdown()
		if title == "" {
			title = strings.TrimSpace("anomaly AUPRC " + anomaly.data)
		}
		if err := anomaly.writeChart(filepath.Join(out, "anomaly_auprc.png"), title); err != nil {
			return err
		}
	}
	fmt.Print(md)
	return atomicfile.Write(filepath.Join(out, "comparison.md"), func(w io.Writer) error {
		_, err := io.WriteString(w, md)
		return err
	})
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
