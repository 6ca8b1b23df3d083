// Command train-table trains energy-based models of your own mixed table —
// a CSV file of numbers and categories (a product type, a country, a grade,
// a month) — with energy discrepancy on heat-equation perturbations of the
// categories (method med) and, as the baseline, contrastive divergence
// with an exact mixed sampler (mcd). Each model is resumable; it scores
// the held-out rows (scores.csv, least typical first), writes synthetic
// rows in the input's columns (samples.csv), and, with -target, classifies
// a categorical column with the energy (accuracy and calibration).
//
//	go run ./cmd/train-table -data penguins.csv -missing drop -target species
//	go run ./cmd/train-table -data sales.csv -column month=categorical:cyclical:Jan,Feb,Mar,Apr,May,Jun,Jul,Aug,Sep,Oct,Nov,Dec -column grade=categorical:ordinal:C,B,A
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

func main() {
	o, flags, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Fatalf("train-table: %v", err)
	}
	o.Stop = training.StopSignals()
	_, err = densityrun.TrainTable(o)
	switch {
	case errors.Is(err, training.ErrStopped):
	case err != nil:
		log.Fatalf("train-table: %v", flags.Explain(err))
	default:
		fmt.Printf("the run's page: %s\n", filepath.Join(o.Out, training.ReportFile))
	}
}

// columnFlags collects -column NAME=KIND[:STRUCTURE[:ORDER]] flags.
type columnFlags map[string]table.ColumnOptions

func (c columnFlags) String() string { return "" }

func (c columnFlags) Set(text string) error {
	name, spec, ok := strings.Cut(text, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want NAME=KIND[:STRUCTURE[:ORDER]], such as month=categorical:cyclical:Jan,Feb,…", text)
	}
	parts := strings.SplitN(spec, ":", 3)
	opts := table.ColumnOptions{Kind: table.Kind(parts[0])}
	if opts.Kind != table.Numeric && opts.Kind != table.Categorical {
		return fmt.Errorf("%q: kind %q, want numeric or categorical", text, parts[0])
	}
	if len(parts) > 1 {
		opts.Structure = parts[1]
	}
	if len(parts) > 2 {
		opts.Order = flagcheck.List(parts[2])
	}
	c[name] = opts
	return nil
}

// parseFlags turns the command line into densityrun.TableOptions, and
// the flags that set each option, for the run layer's errors.
func parseFlags(args []string) (densityrun.TableOptions, flagcheck.Flags, error) {
	var o densityrun.TableOptions
	var methods, drop string
	columns := columnFlags{}
	fs := flag.NewFlagSet("train-table", flag.ContinueOnError)
	fs.StringVar(&o.Data, "data", "", "the CSV file (.csv or .csv.gz) with a header (optional when resuming)")
	fs.Var(columns, "column", "a column's kind, and a categorical column's structure and order: NAME=numeric, NAME=categorical[:uniform|ordinal|cyclical[:A,B,C]] (repeatable)")
	fs.StringVar(&drop, "drop", "", "comma-separated columns to leave out (an identifier, a constant column)")
	fs.StringVar(&o.Read.Missing, "missing", table.MissingError, "a missing value (empty, NA, NaN, ?): error, or drop its row")
	fs.IntVar(&o.Read.MaxCategories, "max-categories", 1000, "most distinct values of a categorical column")
	fs.IntVar(&o.Read.SkipRows, "skip-rows", 0, "lines to skip before the header")
	fs.Float64Var(&o.Read.SpikeShare, "spike-share", table.DefaultSpikeShare, "a numeric column's most frequent value, held by at least this share of the rows, is a spike of its own (1: none)")
	fs.StringVar(&methods, "methods", strings.Join(density.MixedMethods, ","), "comma-separated methods: med (energy discrepancy), mcd (contrastive divergence)")
	fs.StringVar(&o.Target, "target", "", "a categorical column to classify with the energy")
	fs.StringVar(&o.Set, "set", "", "GoMLX context settings of every method's model (\"toy_mixed_t=0.3;learning_rate=3e-4\"): "+strings.Join(density.SettingNames(), ", "))
	fs.StringVar(&o.Out, "out", "", "run folder (default runs/table-NAME, NAME the file's base name)")
	fs.StringVar(&o.Backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.Steps, "steps", densityrun.DefaultTableSteps, "training steps of each method")
	fs.IntVar(&o.Batch, "batch", densityrun.DefaultBatch, "rows per step (unset: all the training rows when they are fewer)")
	fs.Float64Var(&o.TestFraction, "test-fraction", 0.2, "fraction of the rows held out, chosen by -seed")
	fs.Int64Var(&o.Seed, "seed", 1, "random seed: split, initialisation, batches, noise and sampling")
	fs.IntVar(&o.CheckpointEvery, "checkpoint-every", 500, "steps between checkpoints")
	fs.IntVar(&o.Samples, "samples", densityrun.DefaultTableSamples, "synthetic rows written to samples.csv")
	fs.IntVar(&o.Sweeps, "sweeps", densityrun.DefaultTableSweeps, "sampler sweeps per synthetic row, from a training row (20: a fifth of the time and rows as good on a large table; nearer their training rows on a small one: docs/tables.md)")
	var loglik bool
	fs.BoolVar(&loglik, "loglik", true, "estimate each model's log Z by AIS over mixed rows, for the held-out log-likelihood")
	fs.IntVar(&o.AIS.Chains, "ais-chains", sampling.DefaultAISChains, "AIS: independent chains (importance weights)")
	fs.IntVar(&o.AIS.Temperatures, "ais-temperatures", sampling.DefaultAISTemperatures, "AIS: intermediate distributions (a check run takes half as many)")
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	o.NoAIS = !loglik
	flags := flagcheck.FlagsOf(&o, fs)
	flags["NoAIS"] = "loglik"
	flags["Methods"], flags["Read.Columns"], flags["Read.Drop"] = "methods", "column", "drop"
	flags["Missing"], flags["MaxCategories"], flags["SpikeShare"] = "missing", "max-categories", "spike-share" // named so by package table
	if fs.NArg() > 0 {
		return o, flags, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := flagcheck.Check(
		flagcheck.Rule{Name: "ais-chains", Value: o.AIS.Chains, OK: o.AIS.Chains >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "ais-temperatures", Value: o.AIS.Temperatures, OK: o.AIS.Temperatures >= 2, Want: "≥ 2 (a check run takes half as many)"},
	); err != nil {
		return o, flags, err
	}
	o.Methods, o.Read.Drop = flagcheck.List(methods), flagcheck.List(drop)
	if len(columns) > 0 {
		o.Read.Columns = columns
	}
	if o.Out == "" && o.Data != "" {
		base := filepath.Base(o.Data)
		base = strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".csv")
		o.Out = filepath.Join("runs", "table-"+base)
	}
	return o, flags, nil
}
