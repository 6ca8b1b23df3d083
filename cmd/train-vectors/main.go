// Command train-vectors trains energy-based density models of your own
// table of vectors — a CSV file (gzipped or not, with a header and a label
// column if you like), a NumPy .npy array or an .npz archive — with energy
// discrepancy, score matching, contrastive divergence and denoising score
// matching, and measures each by its held-out log-likelihood (annealed
// importance sampling, with intervals). Each method's model is resumable;
// its samples are written back in the input's format and scale, beside
// pictures of data against samples.
//
// A column that holds one value in every training row (the blank border
// pixels of scikit-learn's digits) is set aside: the models see the other
// columns, the log-likelihood is theirs given the constant ones (a point
// mass, with no density to add), the run's data.json records the columns
// and values, and the samples get the value back in its column.
// -constant-columns model models them as the others, as runs did before
// (a density piled onto one value: a log-likelihood without limit).
//
//	go run ./cmd/train-vectors -data measurements.csv -label-column last -out runs/measurements
//	go run ./cmd/train-vectors -data /usr/lib/python3/dist-packages/sklearn/datasets/data/wine_data.csv -skip-rows 1 -label-column last
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
	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Fatalf("train-vectors: %v", err)
	}
	o.Stop = training.StopSignals()
	if _, err := densityrun.Train(o); err != nil && !errors.Is(err, training.ErrStopped) {
		log.Fatalf("train-vectors: %v", optionFlags.Explain(pointToTables(err)))
	}
}

// optionFlags names the flag that sets each of densityrun.Options' fields
// (parseFlags fills it), for the run layer's errors.
var optionFlags flagcheck.Flags

// pointToTables adds to an error of a word among the numbers where a table
// with categories goes.
func pointToTables(err error) error {
	if errors.Is(err, vectors.ErrNotANumber) {
		return fmt.Errorf("%w (train-vectors reads numbers only; a table with categories is train-table's: go run ./cmd/train-table -data FILE, docs/tables.md)", err)
	}
	return err
}

// parseFlags turns the command line into densityrun.Options.
func parseFlags(args []string) (densityrun.Options, error) {
	var o densityrun.Options
	var methods string
	fs := flag.NewFlagSet("train-vectors", flag.ContinueOnError)
	defer func() {
		optionFlags = flagcheck.FlagsOf(&o, fs)
		optionFlags["Methods"] = "methods" // parsed from one string
	}()
	fs.StringVar(&o.Data, "data", "", "the file of vectors: .csv, .csv.gz, .npy or .npz (optional when resuming)")
	fs.StringVar(&o.Read.Label, "label-column", "", "a CSV file's label column, set aside: its header name, its number from 1, or last; for .npz, the label array")
	fs.IntVar(&o.Read.SkipRows, "skip-rows", 0, "lines to skip at the start of a CSV file (before its header, if it has one)")
	fs.StringVar(&o.Read.Array, "array", "", "the .npz array holding the vectors (default: its only array, or x, X or data)")
	fs.StringVar(&methods, "methods", strings.Join(density.Methods, ","), "comma-separated methods: ed, sm, cd, dsm")
	o.Model = density.DeclareFlags(fs, density.DefaultConfig("dsm")) // -hidden, -ed-t, -lr, …; dsm's defaults show -dsm-t's
	fs.StringVar(&o.Set, "set", "", "GoMLX context settings of every method's model, applied after the flags (\"toy_ed_t=0.5;learning_rate=3e-4\"): "+strings.Join(density.SettingNames(), ", "))
	fs.StringVar(&o.Out, "out", "", "run folder (default runs/vectors-NAME, NAME the file's base name)")
	fs.StringVar(&o.Backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.Steps, "steps", 5000, "training steps of each method")
	fs.IntVar(&o.Batch, "batch", densityrun.DefaultBatch, "rows per step (unset: all the training rows when they are fewer)")
	fs.Float64Var(&o.TestFraction, "test-fraction", 0.2, "fraction of the rows held out, chosen by -seed (recorded in the run's "+densityrun.DataFile+")")
	fs.Int64Var(&o.Seed, "seed", 1, "random seed: split, initialisation, batches, noise, AIS and sampling")
	fs.Float64Var(&o.BaseStd, "base-std", 3, "σ of the models' Gaussian base N(0, σ²I) on the standardised scale")
	fs.IntVar(&o.AIS.Chains, "ais-chains", sampling.DefaultAISChains, "AIS: independent chains (importance weights)")
	fs.IntVar(&o.AIS.Temperatures, "ais-temperatures", sampling.DefaultAISTemperatures, "AIS: intermediate distributions (a check run takes half as many)")
	fs.IntVar(&o.AIS.Transitions, "ais-transitions", sampling.DefaultAISTransitions, "AIS: transitions at each temperature")
	fs.StringVar(&o.AIS.Kernel, "ais-kernel", sampling.KernelMALA, "AIS: transitions, mala or hmc")
	fs.Float64Var(&o.AIS.StepSize, "ais-step", 0, "AIS: every temperature's step, untuned (0: tuned at each temperature toward the kernel's optimal acceptance)")
	fs.StringVar(&o.AIS.Metric, "ais-metric", "", "AIS: preconditioner, full, diagonal or identity (default full up to 128 columns, diagonal above)")
	fs.StringVar(&o.AIS.Spacing, "ais-spacing", sampling.SpacingAdaptive, "AIS: temperatures, adaptive (equal steps of thermodynamic length, from a pilot run) or linear (equal steps of β)")
	fs.StringVar(&o.AISBase, "ais-base", densityrun.AISBaseData, "AIS: base, data (the training rows' Gaussian) or isotropic (N(0, σ²I), σ = -base-std)")
	fs.StringVar(&o.ConstantColumns, "constant-columns", densityrun.ConstantSetAside, "a column with one value in every training row: set-aside (not modelled; the log-likelihood is the other columns' given it; samples get the value back) or model (modelled like the others, as before this option); a resumed run keeps its own choice")
	fs.IntVar(&o.Samples, "samples", 1000, "samples written back, in the input's format and scale")
	fs.IntVar(&o.SampleSteps, "sample-steps", 500, "MALA steps per sample, the first half a warm-up tuning the step size")
	fs.IntVar(&o.CheckpointEvery, "checkpoint-every", 500, "steps between checkpoints")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.Methods = flagcheck.List(methods)
	if o.Out == "" {
		if o.Data == "" {
			return o, errors.New("flag -data: required (or -out naming a run to resume)")
		}
		base := filepath.Base(o.Data)
		o.Out = filepath.Join("runs", "vectors-"+strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), filepath.Ext(strings.TrimSuffix(base, ".gz"))))
	}
	batchSet := false
	fs.Visit(func(f *flag.Flag) { batchSet = batchSet || f.Name == "batch" })
	err := flagcheck.Check(
		flagcheck.Rule{Name: "steps", Value: o.Steps, OK: o.Steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "batch", Value: o.Batch, OK: o.Batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "test-fraction", Value: o.TestFraction, OK: o.TestFraction > 0 && o.TestFraction < 1, Want: "in (0, 1)"},
		flagcheck.Rule{Name: "skip-rows", Value: o.Read.SkipRows, OK: o.Read.SkipRows >= 0, Want: "≥ 0"},
		flagcheck.Rule{Name: "samples", Value: o.Samples, OK: o.Samples >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "sample-steps", Value: o.SampleSteps, OK: o.SampleSteps >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "ais-chains", Value: o.AIS.Chains, OK: o.AIS.Chains >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "ais-temperatures", Value: o.AIS.Temperatures, OK: o.AIS.Temperatures >= 2, Want: "≥ 2 (a check run takes half as many)"},
	)
	if !batchSet {
		o.Batch = 0 // densityrun fits the default to a small table
	}
	return o, err
}
