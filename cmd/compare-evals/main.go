// Command compare-evals puts the reports of several eval-lebm runs side by
// side (package evalcompare): a Markdown table of every metric the reports
// hold and, when they hold anomaly-detection results, a table and a bar
// chart of the AUPRC by held-out class and run label; with intervals,
// paired differences, means over the runs of one label and curves over
// the epochs where the reports have them.
//
//	go run ./cmd/compare-evals -out docs/results/cmp ed=runs/ed/eval cd=runs/cd/eval sm=runs/sm/eval
//
// Each argument is [LABEL=]PATH, PATH an eval-lebm output folder or its
// summary.json; LABEL defaults to the report's prior update (ed, cd, sm).
// Writes comparison.md (also printed) and, with anomaly results,
// anomaly_auprc.png into -out.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/edlebm/edlebm/evalcompare"
	"github.com/edlebm/edlebm/internal/flagcheck"
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
	md, err := evalcompare.Compare(evalcompare.Options{Reports: fs.Args(), Out: *out, Title: *title, Bootstrap: *resamples})
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare-evals:", flagcheck.Flags{"Bootstrap": "bootstrap", "Out": "out"}.Explain(err))
		os.Exit(1)
	}
	fmt.Print(md)
}
