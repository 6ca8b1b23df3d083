// Command train-binary is the paper's binary-image experiment (appendix,
// "Generated samples on discrete image modelling"): an energy network on
// binarised 28×28 images — Fashion-MNIST from Debian by default, or
// Omniglot, Caltech-101 Silhouettes or MNIST from their files — trained
// with energy discrepancy under Bernoulli bit flips (density method "bed")
// and, as the baseline, with contrastive divergence on persistent chains of
// Gibbs with gradients ("bcd"). The energy is an MLP plus the Bernoulli
// base of the training data's pixel means, as Grathwohl et al. (2021)
// build theirs.
//
// For each method it writes, in OUT/METHOD: samples.png (the final states
// of the annealing chains), metrics.jsonl and losses.png, and a checkpoint
// that a run started again resumes from; and in OUT: data.png and
// results.md, the test log-likelihood of each method estimated by
// annealed importance sampling, with its 95 % interval.
//
//	go run ./cmd/train-binary -binarize dynamic -steps 3000
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/mnist"
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
	command                               string
	data, dataDir, binarize, out, backend string
	steps, batch, trainSize, testSize     int
	aisChains, aisTemperatures            int
	seed                                  int64
	checkpointEvery                       time.Duration
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("train-binary", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "fashion-mnist", "data set: "+strings.Join(densityrun.BinarySets, ", "))
	fs.StringVar(&o.dataDir, "data-dir", "", "folder of the data set's files (default for fashion-mnist: "+mnist.DefaultFashionDir+"; docs/datasets.md)")
	fs.StringVar(&o.binarize, "binarize", "dynamic", "static (one fixed draw of the training set) or dynamic (a fresh draw at every visit); the test set is binarised once")
	fs.StringVar(&o.methods, "methods", "bed,bcd", "comma-separated methods: bed (energy discrepancy, Bernoulli flips), bcd (contrastive divergence, persistent Gibbs-with-gradients chains)")
	fs.StringVar(&o.out, "out", "out/binary", "output folder (a folder per method is made in it)")
	fs.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.steps, "steps", 3000, "training steps per method")
	fs.IntVar(&o.batch, "batch", 100, "images per step")
	fs.IntVar(&o.trainSize, "train-size", 0, "use only the first N training images (0: all)")
	fs.IntVar(&o.testSize, "test-size", 2000, "test images whose log-likelihood is estimated (0: all)")
	fs.IntVar(&o.aisChains, "ais-chains", 100, "annealed importance sampling chains")
	fs.IntVar(&o.aisTemperatures, "ais-temperatures", 20000, "annealed importance sampling temperatures (a check run takes half as many)")
	fs.Int64Var(&o.seed, "seed", 1, "random seed (initialisation, batches, binarisation and noise)")
	defaults := density.DefaultConfig("bed")
	commandDefaults(&defaults)
	o.model = density.DeclareFlags(fs, defaults)
	fs.StringVar(&o.set, "set", "", "GoMLX context settings of the models, after the flags: \"toy_bed_epsilon=0.05;toy_gwg_steps=20\"; the settings: "+
		strings.Join(density.SettingNames(), ", "))
	fs.DurationVar(&o.checkpointEvery, "checkpoint-every", 5*time.Minute, "time between checkpoints")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.command = strings.Join(append([]string{"train-binary"}, args...), " ")
	if _, err := o.configs(); err != nil {
		return o, err
	}
	return o, flagcheck.Check(
		flagcheck.Rule{Name: "data", Value: o.data, OK: slices.Contains(densityrun.BinarySets, o.data), Want: "one of " + strings.Join(densityrun.BinarySets, ", ")},
		flagcheck.Rule{Name: "data-dir", Value: o.dataDir, OK: o.dataDir != "" || o.data == "fashion-mnist", Want: "the folder of " + o.data + "'s files"},
		flagcheck.Rule{Name: "binarize", Value: o.binarize, OK: o.binarize == "static" || o.binarize == "dynamic", Want: "static or dynamic"},
		flagcheck.Rule{Name: "steps", Value: o.steps, OK: o.steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "batch", Value: o.batch, OK: o.batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "train-size", Value: o.trainSize, OK: o.trainSize >= 0, Want: "≥ 0"},
		flagcheck.Rule{Name: "test-size", Value: o.testSize, OK: o.testSize >= 0, Want: "≥ 0"},
		flagcheck.Rule{Name: "ais-chains", Value: o.aisChains, OK: o.aisChains >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "ais-temperatures", Value: o.aisTemperatures, OK: o.aisTemperatures >= 2, Want: "≥ 2 (a check run takes half as many)"},
		flagcheck.Rule{Name: "checkpoint-every", Value: o.checkpointEvery, OK: o.checkpointEvery > 0, Want: "> 0"},
	)
}

// imageFlipProbability is energy discrepancy's bit-flip probability ε on
// images. The Gray-code default, 0.1, flips about 2·0.1·784 = 157 of 784
// pixels: every negative is then far less likely than the data (under the
// Bernoulli base alone), the loss sits at its floor −log M and no gradient
// flows (measured: −3.47 = −log 32 for the first 300 steps). 0.001 flips
// one or two.
const imageFlipProbability = 0.001

// commandDefaults are train-binary's settings where they differ from
// density's: Grathwohl et al.'s network (256, 256, swish) and learning
// rate (1e-4), ε for images, and contrastive divergence's chains moved by
// Gibbs with gradients (a Gibbs sweep of 784 bits costs 1568 energies).
func commandDefaults(c *density.Config) error {
	c.MLP = nets.MLPConfig{Hidden: []int{256, 256}, Activation: nets.ActSwish}
	c.LearningRate, c.EMADecay = 1e-4, 0.999
	c.BED.Epsilon, c.CDSampler = imageFlipProbability, "gwg"
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
		log.Fatalf("train-binary: %v", err)
	}
	o.stop = training.StopSignals()
	if err := run(o); err != nil && !errors.Is(err, training.ErrStopped) {
		log.Fatalf("train-binary: %v", err)
	}
}

// run trains the models of o (densityrun.Binary).
func run(o options) error {
	configs, err := o.configs()
	if err != nil {
		return err
	}
	return flagcheck.Flags{"Data": "data", "DataDir": "data-dir", "Batch": "batch", "Out": "out"}.Explain(densityrun.Binary(densityrun.BinaryOptions{
		Data: o.data, DataDir: o.dataDir, Dynamic: o.binarize == "dynamic", Configs: configs,
		Out: o.out, Backend: o.backend, Steps: o.steps, Batch: o.batch, TrainSize: o.trainSize, TestSize: o.testSize,
		AISChains: o.aisChains, AISTemperatures: o.aisTemperatures, Seed: o.seed, CheckpointEvery: o.checkpointEvery,
		Command: o.command,
		Stop:    o.stop,
	}))
}
