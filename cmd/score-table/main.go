// Command score-table asks a train-table model which rows of a CSV file
// are unlike the table it was trained on: it ranks the rows by energy,
// least typical first (scores.csv), each with its conformal p-value
// against the run's held-out rows (and the target's prediction, for a run
// with one), and, when a label column says which rows are anomalies,
// measures the ranking's AUPRC with its 95 % bootstrap interval — the
// table counterpart of score-images. The file needs the
// run's columns (by header name, in any order; others are carried along);
// a category training never saw is an error naming file, line and column,
// or, with -unseen anomalous, makes its row the least typical (probability
// 0 under the model: ranked first, the category named in the last column).
//
//	go run ./cmd/score-table -run runs/table-transactions -data new.csv
//	go run ./cmd/score-table -run runs/table-transactions -data labelled.csv -label fraud -anomalies yes
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/flagcheck"
)

func main() {
	o, flags, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Fatalf("score-table: %v", err)
	}
	r, err := densityrun.ScoreTable(o)
	if err != nil {
		log.Fatalf("score-table: %v", flags.Explain(err))
	}
	fmt.Printf("%d rows of %s scored by %s (step %d)", r.N, r.Data, r.Method, r.Step)
	if r.Dropped > 0 {
		fmt.Printf(", %d dropped for a missing value", r.Dropped)
	}
	fmt.Println()
	if r.Unseen > 0 {
		fmt.Printf("%d rows with a category training never saw, ranked first: %s\n", r.Unseen, strings.Join(r.UnseenCategories, ", "))
	}
	fmt.Println(r.FlaggedSummary())
	if r.AUPRCInterval != nil {
		fmt.Printf("AUPRC %.4f (95 %% interval %.4f–%.4f), %d anomalies of %d rows\n", r.AUPRC, r.AUPRCInterval.Lo, r.AUPRCInterval.Hi, r.Anomalies, r.N)
	}
	fmt.Printf("ranked rows and report in %s\n", r.Out)
}

// parseFlags turns the command line into densityrun.TableScoreOptions,
// and the flags that set each option, for the run layer's errors.
func parseFlags(args []string) (densityrun.TableScoreOptions, flagcheck.Flags, error) {
	var o densityrun.TableScoreOptions
	var anomalies string
	fs := flag.NewFlagSet("score-table", flag.ContinueOnError)
	fs.StringVar(&o.Run, "run", "", "the train-table run folder (required)")
	fs.StringVar(&o.Method, "method", density.MixedMethods[0], "the run's model that scores: "+strings.Join(density.MixedMethods, " or "))
	fs.StringVar(&o.Data, "data", "", "the CSV file (.csv or .csv.gz) of rows to score, with a header (required)")
	fs.StringVar(&o.Read.Missing, "missing", table.MissingError, "a missing value (empty, NA, NaN, ?): error, or drop its row")
	fs.StringVar(&o.Read.Unseen, "unseen", table.UnseenError, "a category training never saw: error, or anomalous (the row ranked first, energy +Inf)")
	fs.IntVar(&o.Read.SkipRows, "skip-rows", 0, "lines to skip before the header")
	fs.StringVar(&o.Label, "label", "", "a column of -data saying which rows are anomalies (with -anomalies)")
	fs.StringVar(&anomalies, "anomalies", "", "comma-separated values of -label that mark an anomaly")
	fs.StringVar(&o.Out, "out", "", "output folder (default RUN/METHOD/scores-BASE, BASE the base name of -data)")
	fs.StringVar(&o.Backend, "backend", "auto", backend.FlagUsage)
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the AUPRC's bootstrap")
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	flags := flagcheck.FlagsOf(&o, fs)
	flags["Anomalies"], flags["Missing"], flags["Unseen"] = "anomalies", "missing", "unseen"
	if fs.NArg() > 0 {
		return o, flags, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.Anomalies = flagcheck.List(anomalies)
	return o, flags, nil
}
