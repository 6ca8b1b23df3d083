package densityrun

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/discrete"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// BinarySets are the data sets Binary trains on: 28×28 gray images.
var BinarySets = []string{"fashion-mnist", "mnist", "omniglot", "caltech101"}

// testBinarizationSeed fixes the test set's one binarisation, whatever
// the seed (the VampPrior code's 777).
const testBinarizationSeed = 777

// BinaryOptions say what Binary trains: the paper's binary-image
// experiment, as cmd/train-binary runs it.
type BinaryOptions struct {
	// Data is one of BinarySets, read from DataDir (default for
	// fashion-mnist: mnist.DefaultFashionDir).
	Data, DataDir string
	// Dynamic binarises the training images afresh at every visit; else
	// once (with Seed). The test set is binarised once, with its own seed.
	Dynamic bool
	// Configs are the models to train, one per method (density.BinaryMethods),
	// each in its own folder Out/METHOD.
	Configs []density.Config
	// Out is the output folder; Backend the GoMLX backend
	// (backend.Resolve's syntax; "" for auto).
	Out, Backend string
	// Steps and Batch are each method's training steps and images per step.
	Steps, Batch int
	// TrainSize and TestSize keep only the first images of each split (0:
	// all).
	TrainSize, TestSize int
	// AIS estimates log Z with AISChains chains over AISTemperatures
	// temperatures.
	AISChains, AISTemperatures int
	Seed                       int64
	// CheckpointEvery is the time between checkpoints.
	CheckpointEvery time.Duration
	// Command is the command line written at the top of results.md.
	Command string
	// Stop ends the run at the end of the step it receives in, saved, with
	// training.ErrStopped; nil: never.
	Stop <-chan os.Signal
}

// binaryData is the experiment's images: the training set (static:
// binarised once; dynamic: as loaded), the test bits, and the base means.
type binaryData struct {
	train    *datasets.Images
	dynamic  bool
	testBits []float32
	means    []float64
}

// loadBinaryData reads and binarises the -data set.
func loadBinaryData(o BinaryOptions) (binaryData, error) {
	if !slices.Contains(BinarySets, o.Data) {
		return binaryData{}, fmt.Errorf("Options.Data %s: want one of %s", o.Data, strings.Join(BinarySets, ", "))
	}
	dir := o.DataDir
	if dir == "" {
		dir = mnist.DefaultFashionDir
	}
	load := func(split string, n int) (*datasets.Images, error) {
		im, err := byname.Load(o.Data, dir, split, 0)
		if err != nil {
			return nil, fmt.Errorf("Options.DataDir %s: %w", dir, err)
		}
		if im.Height != 28 || im.Width != 28 || im.Channels != 1 {
			return nil, fmt.Errorf("%s: images of %d×%d×%d, want 28×28 gray", im.Name, im.Height, im.Width, im.Channels)
		}
		return im.Head(n), nil
	}
	train, err := load("train", o.TrainSize)
	if err != nil {
		return binaryData{}, err
	}
	test, err := load("test", o.TestSize)
	if err != nil {
		return binaryData{}, err
	}
	if o.Batch > train.N {
		return binaryData{}, fmt.Errorf("Options.Batch %d: more than the %d training images", o.Batch, train.N)
	}
	d := binaryData{train: train, dynamic: o.Dynamic,
		testBits: datasets.Bits(datasets.StaticBinarization(test, testBinarizationSeed))}
	if !d.dynamic {
		d.train = datasets.StaticBinarization(train, uint64(o.Seed))
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

// Binary trains every configuration of o and writes, for each method in
// Out/METHOD, samples.png (the final states of the annealing chains), its
// metrics log and losses.png, and a checkpoint that a run started again
// resumes from; and in Out, data.png and results.md, the test
// log-likelihood of each method estimated by annealed importance
// sampling, with its 95 % interval.
func Binary(o BinaryOptions) error {
	d, err := loadBinaryData(o)
	if err != nil {
		return err
	}
	b, done, err := openRun(o.Backend, o.Out)
	if err != nil {
		return err
	}
	defer done()
	shown := datasets.StaticBinarization(d.train.Head(64), uint64(o.Seed))
	if err := plots.WriteImageGrid(filepath.Join(o.Out, "data.png"), shown.Pixels, shown.N, 28, 28, 1, 8); err != nil {
		return err
	}
	var rows []binaryResult
	for _, cfg := range o.Configs {
		r, err := trainBinary(b, d, cfg, o)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Method, err)
		}
		rows = append(rows, r)
	}
	return writeBinaryResults(filepath.Join(o.Out, "results.md"), o, d, rows)
}

// binaryResult is one method's evaluation.
type binaryResult struct {
	method                    string
	steps                     int64
	logLikelihood, low, high  float64
	logZ, acceptance, seconds float64
	ais                       sampling.AISResult
}

// trainBinary trains (or resumes) one method's model to o.Steps, then
// evaluates it and draws its samples.
func trainBinary(b backends.Backend, d binaryData, cfg density.Config, o BinaryOptions) (binaryResult, error) {
	folder := methodFolder(o.Out, cfg.Method)
	model, err := openBinaryModel(b, d, cfg, o, folder)
	if err != nil {
		return binaryResult{}, err
	}
	start := time.Now()
	batches, err := datasets.NewBatches(d.train, o.Batch, datasets.WithSeed(uint64(o.Seed)))
	if err != nil {
		return binaryResult{}, err
	}
	perEpoch := int64(batches.BatchesPerEpoch())
	if err := batches.Seek(int(model.Step()/perEpoch), int(model.Step()%perEpoch)); err != nil {
		return binaryResult{}, err
	}
	if model.Step() < int64(o.Steps) {
		fmt.Printf("training %s on %s (%s binarisation, %d images) for %d steps → %s\n",
			cfg.Method, d.train.Name, map[bool]string{true: "dynamic", false: "static"}[d.dynamic], d.train.N, o.Steps, folder.Dir)
	}
	history, err := Fit(model, datasets.Endless(datasets.NewBinaryBatches(batches, d.dynamic, uint64(o.Seed))), FitOptions{
		Folder: folder, To: int64(o.Steps), Interval: o.CheckpointEvery, Stop: o.Stop,
		Legacy: func(upTo int64) ([]Record, error) { return readLosses(folder.Path(lossesFile), upTo) },
	})
	if err != nil {
		return binaryResult{}, err
	}
	if err := plotLoss(folder, cfg.Method+" training loss", history); err != nil {
		return binaryResult{}, err
	}
	return evaluateBinary(b, model, d, cfg, o, folder, time.Since(start).Seconds())
}

// openBinaryModel resumes the method's model from its checkpoint, or makes
// a new one whose Bernoulli base has the training pixels' means.
func openBinaryModel(b backends.Backend, d binaryData, cfg density.Config, o BinaryOptions, folder training.Folder) (*density.Model, error) {
	if err := os.MkdirAll(folder.Dir, 0o755); err != nil {
		return nil, err
	}
	model, err := density.New(b, cfg, o.Seed)
	if err != nil {
		return nil, err
	}
	if isFresh(folder) {
		return model, model.SetBernoulliBase(d.means)
	}
	if err := model.Restore(folder.Checkpoints()); err != nil {
		return nil, err
	}
	fmt.Printf("%s: resuming from step %d\n", cfg.Method, model.Step())
	return model, nil
}

// evaluateBinary estimates the model's test log-likelihood with annealed
// importance sampling and draws its samples.
func evaluateBinary(b backends.Backend, model *density.Model, d binaryData, cfg density.Config, o BinaryOptions, folder training.Folder, trainSeconds float64) (binaryResult, error) {
	fmt.Printf("%s: annealed importance sampling, %d chains × %d temperatures\n", cfg.Method, o.AISChains, o.AISTemperatures)
	ais, err := discrete.AIS(b, model.Context(), func(ctx *context.Context) losses.EnergyFn { return density.AveragedEnergy(ctx, cfg) },
		d.means, discrete.AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: o.AISChains, Temperatures: o.AISTemperatures, Seed: o.Seed}})
	if err != nil {
		return binaryResult{}, err
	}
	energies, err := model.Energies(d.testBits, len(d.means))
	if err != nil {
		return binaryResult{}, err
	}
	mean, se := meanAndStdErr(energies)
	reportAIS(cfg.Method, ais)
	r := binaryResult{method: cfg.Method, steps: model.Step(), logZ: ais.LogZ, acceptance: ais.Acceptance, seconds: trainSeconds, ais: ais,
		logLikelihood: -mean - ais.LogZ,
		// Both uncertainties at once: the test mean's 95 % and the
		// bootstrap interval of log Z.
		low: -mean - 1.96*se - ais.Interval.Hi, high: -mean + 1.96*se - ais.Interval.Lo}
	fmt.Printf("%s: test log-likelihood %.2f nats [%.2f, %.2f]\n", cfg.Method, r.logLikelihood, r.low, r.high)

	n := min(64, o.AISChains)
	pixels := make([]float32, n*len(d.means))
	for i, v := range ais.Samples[:len(pixels)] {
		pixels[i] = float32(2*v - 1)
	}
	return r, plots.WriteImageGrid(folder.Path("samples.png"), pixels, n, 28, 28, 1, 8)
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

// lossesFile held a binary run's losses, one per step, before its metrics
// log: read to resume such a run.
const lossesFile = "losses.csv"

// readLosses reads the losses of steps 1..upTo from a losses.csv (the file
// may run ahead of the checkpoint).
func readLosses(path string, upTo int64) ([]Record, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing: the checkpoint is at step %d", path, upTo)
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var out []Record
	for i, line := range lines[1:] {
		if int64(i) >= upTo {
			break
		}
		_, value, ok := strings.Cut(line, ",")
		v, err := strconv.ParseFloat(value, 32)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s line %d: %q, want STEP,LOSS", path, i+2, line)
		}
		out = append(out, Record{Step: int64(i + 1), Loss: v})
	}
	if int64(len(out)) < upTo {
		return nil, fmt.Errorf("%s holds %d steps, the checkpoint %d", path, len(out), upTo)
	}
	return out, nil
}

// writeBinaryResults writes the log-likelihood table.
func writeBinaryResults(path string, o BinaryOptions, d binaryData, rows []binaryResult) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		fmt.Fprintf(w, "Command: `%s`\n\n", o.Command)
		fmt.Fprintf(w, "%d training images, %d test images (binarised once, seed %d).\n\n", d.train.N, len(d.testBits)/len(d.means), testBinarizationSeed)
		fmt.Fprintf(w, "| method | steps | test log-likelihood (nats) | 95 %% interval | AIS log Z | AIS acceptance | log Z at half the temperatures | reverse (upper) | AIS converged | training seconds (this run) |\n|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %d | %.2f | [%.2f, %.2f] | %.2f | %.3f | %.2f | %.2f | %v | %.0f |\n", r.method, r.steps, r.logLikelihood, r.low, r.high, r.logZ, r.acceptance,
				r.ais.Check.LogZ, r.ais.Upper.LogZ, r.ais.Converged, r.seconds)
		}
		return nil
	})
}
