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
// of the annealing chains), losses.png and losses.csv, and a checkpoint
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
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/ui/commandline"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/cmd/internal/binaryflags"
	"github.com/edlebm/edlebm/cmd/internal/flagcheck"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/discrete"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// binarySets are the -data sets: 28×28 gray images.
var binarySets = []string{"fashion-mnist", "mnist", "omniglot", "caltech101"}

// testBinarizationSeed fixes the test set's one binarisation, whatever
// -seed (the VampPrior code's 777).
const testBinarizationSeed = 777

type options struct {
	// stop ends the run after the step it receives in, saved
	// (training.StopOn); nil: never.
	stop <-chan os.Signal
	binaryflags.Flags
	data, dataDir, binarize, out, backend string
	steps, batch, trainSize, testSize     int
	aisChains, aisTemperatures            int
	seed                                  int64
	checkpointEvery                       time.Duration
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("train-binary", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "fashion-mnist", "data set: "+strings.Join(binarySets, ", "))
	fs.StringVar(&o.dataDir, "data-dir", "", "folder of the data set's files (default for fashion-mnist: "+mnist.DefaultFashionDir+"; docs/datasets.md)")
	fs.StringVar(&o.binarize, "binarize", "dynamic", "static (one fixed draw of the training set) or dynamic (a fresh draw at every visit); the test set is binarised once")
	fs.StringVar(&o.Methods, "methods", "bed,bcd", "comma-separated methods: bed (energy discrepancy, Bernoulli flips), bcd (contrastive divergence, persistent Gibbs-with-gradients chains)")
	fs.StringVar(&o.out, "out", "out/binary", "output folder (a folder per method is made in it)")
	fs.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.steps, "steps", 3000, "training steps per method")
	fs.IntVar(&o.batch, "batch", 100, "images per step")
	fs.IntVar(&o.trainSize, "train-size", 0, "use only the first N training images (0: all)")
	fs.IntVar(&o.testSize, "test-size", 2000, "test images whose log-likelihood is estimated (0: all)")
	fs.IntVar(&o.aisChains, "ais-chains", 100, "annealed importance sampling chains")
	fs.IntVar(&o.aisTemperatures, "ais-temperatures", 20000, "annealed importance sampling temperatures")
	fs.Int64Var(&o.seed, "seed", 1, "random seed (initialisation, batches, binarisation and noise)")
	fs.Float64Var(&o.LearningRate, "lr", 1e-4, "Adam learning rate (Grathwohl et al.'s)")
	fs.Float64Var(&o.EMADecay, "ema", 0.999, "decay of the parameter average that is evaluated and sampled")
	fs.StringVar(&o.Hidden, "hidden", "256,256", "hidden layer widths of the energy MLP (swish)")
	fs.StringVar(&o.Set, "set", "", "GoMLX context settings of the models, after the flags: \"toy_bed_epsilon=0.05;toy_gwg_steps=20\"; the settings: "+
		strings.Join(density.SettingNames(), ", "))
	fs.DurationVar(&o.checkpointEvery, "checkpoint-every", 5*time.Minute, "time between checkpoints")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if _, err := o.configs(); err != nil {
		return o, err
	}
	return o, flagcheck.Check(
		flagcheck.Rule{Flag: "data", Value: o.data, OK: slices.Contains(binarySets, o.data), Want: "one of " + strings.Join(binarySets, ", ")},
		flagcheck.Rule{Flag: "data-dir", Value: o.dataDir, OK: o.dataDir != "" || o.data == "fashion-mnist", Want: "the folder of " + o.data + "'s files"},
		flagcheck.Rule{Flag: "binarize", Value: o.binarize, OK: o.binarize == "static" || o.binarize == "dynamic", Want: "static or dynamic"},
		flagcheck.Rule{Flag: "steps", Value: o.steps, OK: o.steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "batch", Value: o.batch, OK: o.batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "train-size", Value: o.trainSize, OK: o.trainSize >= 0, Want: "≥ 0"},
		flagcheck.Rule{Flag: "test-size", Value: o.testSize, OK: o.testSize >= 0, Want: "≥ 0"},
		flagcheck.Rule{Flag: "ais-chains", Value: o.aisChains, OK: o.aisChains >= 2, Want: "≥ 2"},
		flagcheck.Rule{Flag: "ais-temperatures", Value: o.aisTemperatures, OK: o.aisTemperatures >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "checkpoint-every", Value: o.checkpointEvery, OK: o.checkpointEvery > 0, Want: "> 0"},
	)
}

// imageFlipProbability is energy discrepancy's bit-flip probability ε on
// images. The Gray-code default, 0.1, flips about 2·0.1·784 = 157 of 784
// pixels: every negative is then far less likely than the data (under the
// Bernoulli base alone), the loss sits at its floor −log M and no gradient
// flows (measured: −3.47 = −log 32 for the first 300 steps). 0.001 flips
// one or two.
const imageFlipProbability = 0.001

// configs are the models' configurations: ε for images, and contrastive
// divergence's chains moved by Gibbs with gradients (a Gibbs sweep of 784
// bits costs 1568 energies).
func (o options) configs() ([]density.Config, error) {
	return o.Configs(func(c *density.Config) { c.BED.Epsilon, c.CDSampler = imageFlipProbability, "gwg" })
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

// data is the experiment's images: the training set (static: binarised
// once; dynamic: as loaded), the test bits, and the base means.
type data struct {
	train    *datasets.Images
	dynamic  bool
	testBits []float32
	means    []float64
}

// loadData reads and binarises the -data set.
func loadData(o options) (data, error) {
	dir := o.dataDir
	if dir == "" {
		dir = mnist.DefaultFashionDir
	}
	load := func(split string, n int) (*datasets.Images, error) {
		im, err := byname.Load(o.data, dir, split, 0)
		if err != nil {
			return nil, fmt.Errorf("flag -data-dir %s: %w", dir, err)
		}
		if im.Height != 28 || im.Width != 28 || im.Channels != 1 {
			return nil, fmt.Errorf("%s: images of %d×%d×%d, want 28×28 gray", im.Name, im.Height, im.Width, im.Channels)
		}
		return im.Head(n), nil
	}
	train, err := load("train", o.trainSize)
	if err != nil {
		return data{}, err
	}
	test, err := load("test", o.testSize)
	if err != nil {
		return data{}, err
	}
	if o.batch > train.N {
		return data{}, fmt.Errorf("flag -batch %d: more than the %d training images", o.batch, train.N)
	}
	d := data{train: train, dynamic: o.binarize == "dynamic",
		testBits: datasets.Bits(datasets.StaticBinarization(test, testBinarizationSeed))}
	if !d.dynamic {
		d.train = datasets.StaticBinarization(train, uint64(o.seed))
	}
	// The base: each pixel's probability of being on, over the training
	// set (for a static set, of its one draw).
	size := train.ImageSize()
	d.means = make([]float64, size)
	for i, v := range d.train.Pixels {
		d.means[i%size] += (float64(v) + 1) / 2 / float64(train.N)
	}
	return d, nil
}

func run(o options) error {
	configs, err := o.configs()
	if err != nil {
		return err
	}
	d, err := loadData(o)
	if err != nil {
		return err
	}
	writer, err := training.Folder{Dir: o.out}.Claim()
	if err != nil {
		return fmt.Errorf("flag -out: %w", err)
	}
	defer writer.Release()
	shown := datasets.StaticBinarization(d.train.Head(64), uint64(o.seed))
	if err := plots.WriteImageGrid(filepath.Join(o.out, "data.png"), shown.Pixels, shown.N, 28, 28, 1, 8); err != nil {
		return err
	}
	b, err := backend.OpenForCommand(o.backend)
	if err != nil {
		return err
	}
	defer b.Finalize()
	var rows []result
	for _, cfg := range configs {
		r, err := trainOne(b, d, cfg, o)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Method, err)
		}
		rows = append(rows, r)
	}
	return writeResults(filepath.Join(o.out, "results.md"), o, d, rows)
}

// result is one method's evaluation.
type result struct {
	method                    string
	steps                     int64
	logLikelihood, low, high  float64
	logZ, acceptance, seconds float64
}

// trainOne trains (or resumes) one method's model to o.steps, then
// evaluates it and draws its samples.
func trainOne(b backends.Backend, d data, cfg density.Config, o options) (result, error) {
	dir := filepath.Join(o.out, cfg.Method)
	model, history, err := openModel(b, d, cfg, o, dir)
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if history, err = trainSteps(model, d, cfg, o, dir, history); err != nil {
		return result{}, err
	}
	return evaluate(b, model, d, cfg, o, dir, history, time.Since(start).Seconds())
}

// openModel resumes the method's model from dir's checkpoint, with the
// losses of its steps so far, or makes a new one whose Bernoulli base has
// the training pixels' means.
func openModel(b backends.Backend, d data, cfg density.Config, o options, dir string) (*density.Model, []float32, error) {
	ckptDir := training.Folder{Dir: dir}.Checkpoints()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	model, err := density.New(b, cfg, o.seed)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(ckptDir); err == nil {
		if err := model.Restore(ckptDir); err != nil {
			return nil, nil, err
		}
		fmt.Printf("%s: resuming from step %d\n", cfg.Method, model.Step())
	} else if err := model.SetBernoulliBase(d.means); err != nil {
		return nil, nil, err
	}
	history, err := readLosses(filepath.Join(dir, "losses.csv"), model.Step())
	return model, history, err
}

// trainSteps trains model up to o.steps, checkpointing into dir every
// o.checkpointEvery and at the end, and returns the losses of every step.
func trainSteps(model *density.Model, d data, cfg density.Config, o options, dir string, history []float32) ([]float32, error) {
	if model.Step() >= int64(o.steps) {
		return history, nil
	}
	batches, err := datasets.NewBatches(d.train, o.batch, datasets.WithSeed(uint64(o.seed)))
	if err != nil {
		return nil, err
	}
	perEpoch := int64(batches.BatchesPerEpoch())
	if err := batches.Seek(int(model.Step()/perEpoch), int(model.Step()%perEpoch)); err != nil {
		return nil, err
	}
	fmt.Printf("training %s on %s (%s binarisation, %d images) for %d steps → %s\n",
		cfg.Method, d.train.Name, o.binarize, d.train.N, o.steps, dir)
	loop := model.NewLoop()
	commandline.AttachProgressBar(loop)
	ckptDir := training.Folder{Dir: dir}.Checkpoints()
	lastSave := time.Now()
	save := func() error {
		if err := model.Save(ckptDir); err != nil {
			return err
		}
		lastSave = time.Now()
		return writeLosses(dir, history)
	}
	loop.OnStep("losses and checkpoints", 100, func(_ *train.Loop, metrics []*tensors.Tensor) error {
		history = append(history, tensors.ToScalar[float32](metrics[0]))
		if time.Since(lastSave) >= o.checkpointEvery {
			return save()
		}
		return nil
	})
	training.StopOn(loop, o.stop, save)
	if _, err := loop.RunToGlobalStep(datasets.Endless(datasets.NewBinaryBatches(batches, d.dynamic, uint64(o.seed))), o.steps); err != nil {
		return nil, err
	}
	return history, save()
}

// evaluate estimates the model's test log-likelihood with annealed
// importance sampling and draws its samples and its loss curve into dir.
func evaluate(b backends.Backend, model *density.Model, d data, cfg density.Config, o options, dir string, history []float32, trainSeconds float64) (result, error) {
	fmt.Printf("%s: annealed importance sampling, %d chains × %d temperatures\n", cfg.Method, o.aisChains, o.aisTemperatures)
	ais, err := discrete.AIS(b, model.Context(), func(ctx *context.Context) losses.EnergyFn { return density.AveragedEnergy(ctx, cfg) },
		d.means, discrete.AISConfig{Chains: o.aisChains, Temperatures: o.aisTemperatures, Seed: o.seed})
	if err != nil {
		return result{}, err
	}
	energies, err := model.Energies(d.testBits, len(d.means))
	if err != nil {
		return result{}, err
	}
	mean, se := meanAndStdErr(energies)
	r := result{method: cfg.Method, steps: model.Step(), logZ: ais.LogZ, acceptance: ais.Acceptance, seconds: trainSeconds,
		logLikelihood: -mean - ais.LogZ,
		// Both uncertainties at once: the test mean's 95 % and the
		// bootstrap interval of log Z.
		low: -mean - 1.96*se - ais.High, high: -mean + 1.96*se - ais.Low}
	fmt.Printf("%s: test log-likelihood %.2f nats [%.2f, %.2f]\n", cfg.Method, r.logLikelihood, r.low, r.high)

	n := min(64, o.aisChains)
	pixels := make([]float32, n*len(d.means))
	for i, v := range ais.Samples[:len(pixels)] {
		pixels[i] = 2*v - 1
	}
	if err := plots.WriteImageGrid(filepath.Join(dir, "samples.png"), pixels, n, 28, 28, 1, 8); err != nil {
		return r, err
	}
	steps := make([]float64, len(history))
	values := make([]float64, len(history))
	for i, v := range history {
		steps[i], values[i] = float64(i+1), float64(v)
	}
	return r, plots.WriteLinePlot(filepath.Join(dir, "losses.png"), plots.LinePlot{
		Title: cfg.Method + " training loss", XLabel: "step", YLabel: "loss",
		Series: []plots.Series{{Name: cfg.Method, X: steps, Y: values}},
	})
}

// meanAndStdErr returns the mean of v and its standard error.
func meanAndStdErr(v []float64) (mean, se float64) {
	for _, x := range v {
		mean += x / float64(len(v))
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
}

// writeLosses writes the loss of every step so far, one per line.
func writeLosses(dir string, history []float32) error {
	rows := make([][]float64, len(history))
	for i, v := range history {
		rows[i] = []float64{float64(i + 1), float64(v)}
	}
	return plots.WriteCSV(filepath.Join(dir, "losses.csv"), []string{"step", "loss"}, rows)
}

// readLosses reads the losses of steps 1..upTo written by writeLosses (the
// file may run ahead of the checkpoint); none when the file is absent.
func readLosses(path string, upTo int64) ([]float32, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if upTo > 0 {
			return nil, fmt.Errorf("%s is missing: the checkpoint is at step %d", path, upTo)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var out []float32
	for i, line := range lines[1:] {
		if int64(i) >= upTo {
			break
		}
		_, value, ok := strings.Cut(line, ",")
		v, err := strconv.ParseFloat(value, 32)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s line %d: %q, want STEP,LOSS", path, i+2, line)
		}
		out = append(out, float32(v))
	}
	if int64(len(out)) < upTo {
		return nil, fmt.Errorf("%s holds %d steps, the checkpoint %d", path, len(out), upTo)
	}
	return out, nil
}

// writeResults writes the log-likelihood table.
func writeResults(path string, o options, d data, rows []result) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		fmt.Fprintf(w, "Command: `train-binary -data %s -binarize %s -methods %s -steps %d -batch %d -train-size %d -test-size %d -hidden %s -lr %g -ema %g -ais-chains %d -ais-temperatures %d -seed %d -set %q`\n\n",
			o.data, o.binarize, o.Methods, o.steps, o.batch, o.trainSize, o.testSize, o.Hidden, o.LearningRate, o.EMADecay, o.aisChains, o.aisTemperatures, o.seed, o.Set)
		fmt.Fprintf(w, "%d training images, %d test images (binarised once, seed %d).\n\n", d.train.N, len(d.testBits)/len(d.means), testBinarizationSeed)
		fmt.Fprintf(w, "| method | steps | test log-likelihood (nats) | 95 %% interval | AIS log Z | AIS acceptance | training seconds (this run) |\n|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %d | %.2f | [%.2f, %.2f] | %.2f | %.3f | %.0f |\n", r.method, r.steps, r.logLikelihood, r.low, r.high, r.logZ, r.acceptance, r.seconds)
		}
		return nil
	})
}
