// Command train-toy reproduces the paper's density-estimation experiments:
// it trains the energy MLP on a 2-D toy data set with energy discrepancy,
// score matching and/or contrastive divergence, and writes, per method, the
// learned energy and density as heat maps, Langevin samples, and — for data
// with an exact density — the log-density MSE over training as CSV and
// plot; and the held-out log-likelihood of every method on the plotted
// square, by annealed importance sampling, beside the data's own
// (loglik.csv).
//
//	go run ./cmd/train-toy -data 25gaussians -methods ed,sm,cd -steps 50000
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

type options struct {
	// stop ends the run after the step it receives in, saved
	// (training.Steps); nil: never.
	stop                                          <-chan os.Signal
	data, methods, out, backend, set              string
	steps, batch, evalEvery, evalN, grid, samples int
	seed                                          int64
	extent                                        float64
	cdEps, sampleEps                              float64
	sampleSteps                                   int
	aisChains, aisTemperatures, testN             int
	// model applies the short flags of density's settings table (-ed-t,
	// -hidden, -lr, …) that were given.
	model func(*density.Config) error
	// cdEpsGiven tells whether -cd-eps was given.
	cdEpsGiven bool
}

// parseFlags parses args and checks every setting, naming the flag at
// fault in any error.
func parseFlags(args []string) (options, error) {
	o, fs, err := parseOnly(args)
	if err != nil {
		return o, err
	}
	if _, err := o.configs(); err != nil {
		return o, flagcheck.Blame(fs, err, []string{"methods"}, func(args []string) error {
			alone, _, err := parseOnly(args)
			if err == nil {
				_, err = alone.configs()
			}
			return err
		})
	}
	return o, flagcheck.Check(
		flagcheck.Rule{Name: "steps", Value: o.steps, OK: o.steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "batch", Value: o.batch, OK: o.batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "eval-every", Value: o.evalEvery, OK: o.evalEvery >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "eval-n", Value: o.evalN, OK: o.evalN >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "samples", Value: o.samples, OK: o.samples >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "grid", Value: o.grid, OK: o.grid >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "ais-chains", Value: o.aisChains, OK: o.aisChains == 0 || o.aisChains >= 2, Want: "0 (none) or ≥ 2"},
		flagcheck.Rule{Name: "ais-temperatures", Value: o.aisTemperatures, OK: o.aisTemperatures >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "test-n", Value: o.testN, OK: o.testN >= 2, Want: "≥ 2"},
	)
}

// parseOnly parses args into options without checking them.
func parseOnly(args []string) (options, *flag.FlagSet, error) {
	var o options
	def := density.DefaultConfig("ed")
	fs := flag.NewFlagSet("train-toy", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "25gaussians", "2-D data set: "+strings.Join(toy2d.Names(), ", "))
	fs.StringVar(&o.methods, "methods", "ed,sm,cd", "comma-separated training methods: ed, sm, cd, dsm")
	fs.StringVar(&o.out, "out", "out/toy", "output directory (a folder per data set and method is made in it)")
	fs.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.steps, "steps", 50000, "training steps")
	fs.IntVar(&o.batch, "batch", 128, "fresh data samples per step")
	fs.Int64Var(&o.seed, "seed", 1, "random seed (initialisation, data and noise)")
	o.model = density.DeclareFlags(fs, density.DefaultConfig("dsm")) // dsm's, to show -dsm-t's default
	fs.Float64Var(&o.cdEps, "cd-eps", def.CD.Langevin.StepSize*def.CD.Langevin.StepSize, "CD: Langevin step ε (x += ε/2 ∇log p + √ε ξ; the setting toy_cd_step_size is √ε)")
	fs.StringVar(&o.set, "set", "", "GoMLX context settings of each method's model, applied after the flags: \"toy_ed_t=0.5;learning_rate=3e-4\" or \"file:settings.txt\"; the settings: "+
		strings.Join(density.SettingNames(), ", "))
	fs.IntVar(&o.evalEvery, "eval-every", 1000, "steps between log-density MSE evaluations")
	fs.IntVar(&o.evalN, "eval-n", 5000, "samples for the importance-sampled normaliser and for the MSE")
	fs.IntVar(&o.grid, "grid", 200, "heat-map resolution (points per axis)")
	fs.Float64Var(&o.extent, "extent", 4.5, "heat maps and samples cover [-extent, extent]²")
	fs.IntVar(&o.samples, "samples", 5000, "Langevin samples drawn for the samples picture")
	fs.IntVar(&o.sampleSteps, "sample-steps", 100, "Langevin steps for the samples picture")
	fs.IntVar(&o.aisChains, "ais-chains", sampling.DefaultAISChains, "annealed importance sampling chains for the held-out log-likelihood on the plotted square (0: none)")
	fs.IntVar(&o.aisTemperatures, "ais-temperatures", sampling.DefaultAISTemperatures, "annealed importance sampling temperatures (a check run takes half as many)")
	fs.IntVar(&o.testN, "test-n", 5000, "fresh held-out points whose log-likelihood is averaged")
	// Step size 0.1 in the losses.LangevinConfig sense (noise std 0.1): a
	// larger ε's noise is wider than the 25 Gaussians' modes and smears them.
	fs.Float64Var(&o.sampleEps, "sample-eps", 0.01, "Langevin step ε for the samples picture (x += ε/2 ∇log p + √ε ξ)")
	if err := fs.Parse(args); err != nil {
		return o, fs, err
	}
	if fs.NArg() > 0 {
		return o, fs, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { o.cdEpsGiven = o.cdEpsGiven || f.Name == "cd-eps" })
	return o, fs, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Fatalf("train-toy: %v", err)
	}
	o.stop = training.StopSignals()
	if err := run(o); err != nil && !errors.Is(err, training.ErrStopped) {
		log.Fatalf("train-toy: %v", err)
	}
}

// run trains the models of o (densityrun.Toy).
func run(o options) error {
	configs, err := o.configs()
	if err != nil {
		return err
	}
	return flagcheck.Flags{"Data": "data", "Out": "out"}.Explain(densityrun.Toy(densityrun.ToyOptions{
		Data: o.data, Configs: configs, Out: o.out, Backend: o.backend,
		Steps: o.steps, Batch: o.batch, Seed: o.seed, EvalEvery: o.evalEvery, EvalN: o.evalN,
		Grid: o.grid, Extent: o.extent, Samples: o.samples, SampleSteps: o.sampleSteps, SampleEps: o.sampleEps,
		// The base N(0, (extent/2)²I) puts about 95 % of its mass on the square.
		AIS: sampling.AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: o.aisChains, Temperatures: o.aisTemperatures, Seed: o.seed},
			BaseStd: o.extent / 2},
		TestN: o.testN,
		Stop:  o.stop,
	}))
}

// configs builds one validated config per requested method: the
// method's defaults, the short flags given, then -set.
func (o options) configs() ([]density.Config, error) {
	methods := strings.Split(o.methods, ",")
	for i, method := range methods {
		methods[i] = strings.TrimSpace(method)
		if slices.Contains(density.BinaryMethods, methods[i]) {
			return nil, fmt.Errorf("method %s is for binary data, not the points of the plane: want one of %v", methods[i], density.Methods)
		}
	}
	return density.Configs(methods, o.set, o.model, func(c *density.Config) error {
		if o.cdEpsGiven {
			c.CD.Langevin.StepSize = math.Sqrt(o.cdEps)
		}
		return nil
	})
}
