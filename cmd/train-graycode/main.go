// Command train-graycode is the paper's discrete density-estimation
// experiment (appendix, after Dai et al. 2020): the 2-D toy sets mapped to
// {0,1}³² by Gray codes (datasets/graycode), an MLP energy on the bits
// trained with energy discrepancy under Bernoulli bit flips (density
// method "bed") and, as the baseline, with contrastive divergence on
// persistent Gibbs chains ("bcd"). densityrun.GrayCode says what it
// writes: per set and method the learned distribution as a heat map beside
// the data's, and in results.md the MMD² between data and the model's
// samples with its floor and ceiling. A stopped run (Ctrl-C) resumes from
// its checkpoints.
//
//	go run ./cmd/train-graycode -data pinwheel,8gaussians -steps 20000
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/nets"
	"github.com/edlebm/edlebm/training"
)

type options struct {
	// stop ends the run after the step it receives in, saved
	// (training.Steps); nil: never.
	stop <-chan os.Signal
	// methods and set are -methods and -set; model applies the short
	// flags of density's settings table that were given (-hidden, -lr,
	// -bed-epsilon, …).
	methods, set string
	model        func(*density.Config) error
	// command is the command line, for results.md.
	command                  string
	checkpointEvery          time.Duration
	data, out, backend       string
	steps, batch, grid, mmdN int
	seed                     int64
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("train-graycode", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "pinwheel", "comma-separated 2-D sets: "+strings.Join(toy2d.Names(), ", "))
	fs.StringVar(&o.methods, "methods", "bed,bcd", "comma-separated methods: bed (energy discrepancy, Bernoulli flips), bcd (contrastive divergence, persistent Gibbs chains)")
	fs.StringVar(&o.out, "out", "out/graycode", "output folder (a folder per set and method is made in it)")
	fs.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.steps, "steps", 20000, "training steps")
	fs.IntVar(&o.batch, "batch", 128, "fresh data samples per step")
	fs.Int64Var(&o.seed, "seed", 1, "random seed (initialisation, data and noise)")
	defaults := density.DefaultConfig("bed")
	commandDefaults(&defaults)
	o.model = density.DeclareFlags(fs, defaults)
	fs.StringVar(&o.set, "set", "", "GoMLX context settings of the model, after the flags: \"toy_bed_epsilon=0.05;toy_bed_m=16\"; the settings: "+
		strings.Join(density.SettingNames(), ", "))
	fs.IntVar(&o.grid, "grid", 100, "heat-map cells per axis (the model's samples are drawn from these cells)")
	fs.IntVar(&o.mmdN, "mmd-n", 2000, "samples on each side of an MMD")
	fs.DurationVar(&o.checkpointEvery, "checkpoint-every", 5*time.Minute, "time between checkpoints (a stopped run resumes from its last)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.command = strings.Join(append([]string{"train-graycode"}, args...), " ")
	if _, err := o.configs(); err != nil {
		return o, err
	}
	return o, flagcheck.Check(
		flagcheck.Rule{Name: "steps", Value: o.steps, OK: o.steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "batch", Value: o.batch, OK: o.batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "grid", Value: o.grid, OK: o.grid >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "mmd-n", Value: o.mmdN, OK: o.mmdN >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "checkpoint-every", Value: o.checkpointEvery, OK: o.checkpointEvery > 0, Want: "> 0"},
	)
}

// commandDefaults are train-graycode's settings where they differ from
// density's: the authors' network (256, 256, 256, swish) and learning rate
// (2e-3).
func commandDefaults(c *density.Config) error {
	c.MLP = nets.MLPConfig{Hidden: []int{256, 256, 256}, Activation: nets.ActSwish}
	c.LearningRate, c.EMADecay = 2e-3, 0.999
	return nil
}

// configs are the models' configurations: density's defaults, the
// command's, the short flags given, then -set.
func (o options) configs() ([]density.Config, error) {
	return density.MethodConfigs(o.methods, density.BinaryMethods, o.set, commandDefaults, o.model)
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Fatalf("train-graycode: %v", err)
	}
	o.stop = training.StopSignals()
	if err := run(o); err != nil && !errors.Is(err, training.ErrStopped) {
		log.Fatalf("train-graycode: %v", err)
	}
}

// run trains the models of o (densityrun.GrayCode).
func run(o options) error {
	configs, err := o.configs()
	if err != nil {
		return err
	}
	return flagcheck.Flags{"Data": "data", "Out": "out"}.Explain(densityrun.GrayCode(densityrun.GrayCodeOptions{
		Data: strings.Split(o.data, ","), Configs: configs, Out: o.out, Backend: o.backend,
		Steps: o.steps, Batch: o.batch, Seed: o.seed, Grid: o.grid, MMDN: o.mmdN, CheckpointEvery: o.checkpointEvery,
		Command: o.command,
		Stop:    o.stop,
	}))
}
