// Command train-classifier trains the small Fashion-MNIST (or MNIST)
// classifier whose features eval-lebm uses for classifier-FID, and caches
// the training set's feature statistics beside it:
//
//	go run ./cmd/train-classifier -out runs/classifier-fashion-mnist
//
// It writes, in -out: checkpoint/ (resumable: a stopped run continues from
// its last epoch), classifier.StatsFile (mean and covariance of the training
// images' features, eval.SaveStats format) and summary.json (test accuracy,
// the test split's classifier-FID against the training statistics — the
// floor a perfect generator would reach with that many samples).
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/ui/commandline"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/training"
)

type options struct {
	// stop ends the run after the step it receives in, saved
	// (training.StopOn); nil: never.
	stop                  <-chan os.Signal
	dataDir, out, backend string
	// set are GoMLX context settings of the classifier (-set).
	set                   string
	epochs, batch, trainN int
}

// summary is what summary.json holds.
type summary struct {
	Data         string  `json:"data"`
	Steps        int64   `json:"steps"`
	FeatureDim   int     `json:"feature_dim"`
	TestAccuracy float64 `json:"test_accuracy"`
	// TestFID is the Fréchet distance between the test split's features and
	// the training statistics.
	TestFID float64 `json:"test_fid"`
}

func main() {
	var o options
	flag.StringVar(&o.dataDir, "data-dir", mnist.DefaultFashionDir, "MNIST-format folder (train and test IDX files)")
	flag.StringVar(&o.out, "out", "runs/classifier-fashion-mnist", "output folder")
	flag.IntVar(&o.epochs, "epochs", 5, "training epochs")
	flag.IntVar(&o.batch, "batch", 128, "batch size")
	flag.IntVar(&o.trainN, "train-n", 0, "use only the first N training images (0: all)")
	flag.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	flag.StringVar(&o.set, "set", "", "GoMLX context settings of the classifier: \"classifier_hidden=256,64;learning_rate=3e-4\" or \"file:settings.txt\"; the settings: "+
		strings.Join(classifier.SettingNames(), ", "))
	flag.Parse()
	o.stop = training.StopSignals()
	if err := run(o); err != nil && !errors.Is(err, training.ErrStopped) {
		log.Fatalf("train-classifier: %v", err)
	}
}

func run(o options) error {
	if o.epochs < 1 || o.batch < 1 || o.trainN < 0 {
		return fmt.Errorf("want -epochs ≥ 1, -batch ≥ 1 and -train-n ≥ 0 (got %d, %d, %d)", o.epochs, o.batch, o.trainN)
	}
	defaults := classifier.DefaultConfig()
	cfg, err := defaults.WithSettings(o.set)
	if err != nil {
		return fmt.Errorf("flag -set: %w", err)
	}
	trainSet, err := mnist.Load(o.dataDir, "train")
	if err != nil {
		return fmt.Errorf("flag -data-dir: %w", err)
	}
	if o.trainN > 0 && o.trainN < trainSet.N {
		if trainSet, err = trainSet.Subset(firstN(o.trainN)); err != nil {
			return err
		}
	}
	testSet, err := mnist.Load(o.dataDir, "test")
	if err != nil {
		return fmt.Errorf("flag -data-dir: %w", err)
	}
	b, err := backend.OpenForCommand(o.backend)
	if err != nil {
		return err
	}
	defer b.Finalize()

	cfg.Height, cfg.Width, cfg.Channels = trainSet.Height, trainSet.Width, trainSet.Channels
	defaults.Height, defaults.Width, defaults.Channels = cfg.Height, cfg.Width, cfg.Channels
	if changes := cfg.Changes(defaults); len(changes) > 0 {
		fmt.Printf("settings changed from the defaults: %s\n", strings.Join(changes, ", "))
	}
	writer, err := training.Folder{Dir: o.out}.Claim()
	if err != nil {
		return fmt.Errorf("flag -out: %w", err)
	}
	defer writer.Release()
	ckpt := training.Folder{Dir: o.out}.Checkpoints()
	model, err := openModel(b, cfg, ckpt)
	if err != nil {
		return err
	}
	batches, err := datasets.NewBatches(trainSet, o.batch, datasets.WithSeed(uint64(model.Config().Seed)))
	if err != nil {
		return fmt.Errorf("flag -batch: %w", err)
	}
	perEpoch := int64(batches.BatchesPerEpoch())
	if step := model.Step(); step > 0 {
		if err := batches.Seek(int(step/perEpoch), int(step%perEpoch)); err != nil {
			return err
		}
		fmt.Printf("resuming from step %d (%s)\n", step, ckpt)
	}

	loop := train.NewLoop(model.Trainer())
	commandline.AttachProgressBar(loop)
	train.EveryNSteps(loop, int(perEpoch), "checkpoint", 1, func(*train.Loop, []*tensors.Tensor) error {
		return model.Save(ckpt)
	})
	training.StopOn(loop, o.stop, func() error { return model.Save(ckpt) })
	if done := int(model.Step() / perEpoch); done < o.epochs {
		if _, err := loop.RunEpochs(batches, o.epochs-done); err != nil {
			return err
		}
	}
	if err := model.Save(ckpt); err != nil {
		return err
	}
	return writeSummary(model, trainSet, testSet, o)
}

// openModel resumes the classifier saved in ckpt — refusing one with other
// settings than cfg — or makes a new one.
func openModel(b backends.Backend, cfg classifier.Config, ckpt string) (*classifier.Model, error) {
	if _, err := checkpoint.Latest(ckpt); errors.Is(err, os.ErrNotExist) {
		return classifier.New(b, cfg)
	}
	model, err := classifier.Load(b, ckpt)
	if err != nil {
		return nil, err
	}
	if diff := cfg.Changes(model.Config()); len(diff) > 0 {
		return nil, fmt.Errorf("%s holds a classifier with other settings (this run asks for %s); use another -out, or the -set that run used",
			ckpt, strings.Join(diff, ", "))
	}
	return model, nil
}

// evalBatch is the most images evaluated at once (fewer when a set is
// smaller).
const evalBatch = 500

// writeSummary saves the Gaussian statistics of the training images'
// features (classifier.StatsFile, for classifier-FID) and summary.json:
// the test accuracy and the test split's classifier-FID against them.
func writeSummary(model *classifier.Model, trainSet, testSet *datasets.Images, o options) error {
	s := summary{Data: o.dataDir, Steps: model.Step(), FeatureDim: model.Config().FeatureDim()}
	trainEval, err := model.Evaluate(trainSet, min(evalBatch, trainSet.N))
	if err != nil {
		return err
	}
	mu, sigma, err := eval.GaussianStatsFlat(trainEval.Features, s.FeatureDim)
	if err != nil {
		return fmt.Errorf("training features: %w", err)
	}
	if err := eval.SaveStats(filepath.Join(o.out, classifier.StatsFile), mu, sigma); err != nil {
		return err
	}
	testEval, err := model.Evaluate(testSet, min(evalBatch, testSet.N))
	if err != nil {
		return err
	}
	if s.TestAccuracy, err = testEval.Accuracy(testSet.Labels); err != nil {
		return err
	}
	if s.TestFID, err = eval.FrechetDistanceToStats(testEval.Features, mu, sigma); err != nil {
		return fmt.Errorf("test features: %w", err)
	}
	fmt.Printf("test accuracy %.4f, test-split classifier-FID %.4f (%d-d features) → %s\n", s.TestAccuracy, s.TestFID, s.FeatureDim, o.out)
	return atomicfile.WriteJSON(filepath.Join(o.out, "summary.json"), s)
}

func firstN(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
