package lebmrun

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/training"
)

// ClassifierOptions say what TrainClassifier trains: the small
// Fashion-MNIST (or MNIST) classifier whose features eval-lebm uses for
// classifier-FID.
type ClassifierOptions struct {
	// DataDir is the MNIST-format folder (train and test IDX files).
	DataDir string
	// Out is the run folder; Backend the GoMLX backend (backend.Resolve's
	// syntax; "" for auto).
	Out, Backend string
	// Set are GoMLX context settings of the classifier
	// (classifier.SettingNames).
	Set string
	// Epochs and Batch are the training epochs and images per step;
	// TrainN > 0 keeps the first TrainN training images only.
	Epochs, Batch, TrainN int
	// Stop ends the run at the end of the step it receives in, saved, with
	// training.ErrStopped; nil: never.
	Stop <-chan os.Signal
}

// ClassifierSummary is what TrainClassifier writes as summary.json.
type ClassifierSummary struct {
	Data         string  `json:"data"`
	Steps        int64   `json:"steps"`
	FeatureDim   int     `json:"feature_dim"`
	TestAccuracy float64 `json:"test_accuracy"`
	// TestFID is the Fréchet distance between the test split's features and
	// the training statistics.
	TestFID float64 `json:"test_fid"`
}

// classifierRecord is one line of the classifier's metrics log.
type classifierRecord struct {
	Step    int64   `json:"step"`
	Loss    float64 `json:"loss"`
	Seconds float64 `json:"seconds"`
}

// TrainClassifier trains the classifier in o.Out, resuming its checkpoint
// (one with other settings is refused, naming them), and writes there its
// metrics log, classifier.StatsFile (mean and covariance of the training
// images' features, evalfile.SaveStats format) and summary.json (test
// accuracy, the test split's classifier-FID against the training
// statistics — the floor a perfect generator would reach with that many
// samples).
func TrainClassifier(o ClassifierOptions) error {
	if err := flagcheck.CheckOptions(
		flagcheck.Rule{Name: "Epochs", Value: o.Epochs, OK: o.Epochs >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "Batch", Value: o.Batch, OK: o.Batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "TrainN", Value: o.TrainN, OK: o.TrainN >= 0, Want: "≥ 0 (0: every image)"},
	); err != nil {
		return fmt.Errorf("lebmrun: %w", err)
	}
	defaults := classifier.DefaultConfig()
	cfg, err := defaults.WithSettings(o.Set)
	if err != nil {
		return fmt.Errorf("Options.Set: %w", err)
	}
	trainSet, testSet, err := loadClassifierData(o)
	if err != nil {
		return err
	}
	b, err := backend.OpenForCommand(cmp.Or(o.Backend, "auto"))
	if err != nil {
		return err
	}
	defer b.Finalize()

	cfg.Height, cfg.Width, cfg.Channels = trainSet.Height, trainSet.Width, trainSet.Channels
	defaults.Height, defaults.Width, defaults.Channels = cfg.Height, cfg.Width, cfg.Channels
	if changes := cfg.Changes(defaults); len(changes) > 0 {
		fmt.Printf("settings changed from the defaults: %s\n", strings.Join(changes, ", "))
	}
	folder := training.Folder{Dir: o.Out}
	writer, err := folder.Claim()
	if err != nil {
		return fmt.Errorf("Options.Out: %w", err)
	}
	defer writer.Release()
	model, err := openClassifier(b, cfg, folder.Checkpoints())
	if err != nil {
		return err
	}
	if err := fitClassifier(model, trainSet, folder, o); err != nil {
		return err
	}
	return writeClassifierSummary(model, trainSet, testSet, o)
}

// loadClassifierData reads the training (the first o.TrainN) and test
// images.
func loadClassifierData(o ClassifierOptions) (trainSet, testSet *datasets.Images, err error) {
	if trainSet, err = mnist.Load(o.DataDir, "train"); err != nil {
		return nil, nil, fmt.Errorf("Options.DataDir: %w", err)
	}
	if o.TrainN > 0 {
		trainSet = trainSet.Head(o.TrainN)
	}
	if testSet, err = mnist.Load(o.DataDir, "test"); err != nil {
		return nil, nil, fmt.Errorf("Options.DataDir: %w", err)
	}
	return trainSet, testSet, nil
}

// fitClassifier trains model to o.Epochs on training.Steps, checkpointing
// at the end of every epoch.
func fitClassifier(model *classifier.Model, trainSet *datasets.Images, folder training.Folder, o ClassifierOptions) error {
	batches, err := datasets.NewBatches(trainSet, o.Batch, datasets.WithSeed(uint64(model.Config().Seed)))
	if err != nil {
		return fmt.Errorf("Options.Batch: %w", err)
	}
	perEpoch := int64(batches.BatchesPerEpoch())
	if step := model.Step(); step > 0 {
		if err := batches.Seek(int(step/perEpoch), int(step%perEpoch)); err != nil {
			return err
		}
		fmt.Printf("resuming from step %d (%s)\n", step, folder.Checkpoints())
	}
	steps := training.Steps[classifierRecord]{
		Folder: folder,
		Record: func(step int64, outs []*tensors.Tensor, seconds float64) (classifierRecord, error) {
			return classifierRecord{Step: step, Loss: float64(tensors.ToScalar[float32](outs[0])), Seconds: seconds}, nil
		},
		Step:  func(r classifierRecord) int64 { return r.Step },
		Save:  func([]classifierRecord) error { return model.Save(folder.Checkpoints()) },
		Every: perEpoch, Stop: o.Stop,
	}
	_, err = steps.Run(train.NewLoop(model.Trainer()), datasets.Endless(batches), int64(o.Epochs)*perEpoch)
	return err
}

// openClassifier resumes the classifier saved in ckpt — refusing one with
// other settings than cfg — or makes a new one.
func openClassifier(b backends.Backend, cfg classifier.Config, ckpt string) (*classifier.Model, error) {
	if _, err := checkpoint.Latest(ckpt); errors.Is(err, os.ErrNotExist) {
		return classifier.New(b, cfg)
	}
	model, err := classifier.Load(b, ckpt)
	if err != nil {
		return nil, err
	}
	if diff := cfg.Changes(model.Config()); len(diff) > 0 {
		return nil, fmt.Errorf("%s holds a classifier with other settings (this run asks for %s); use another Options.Out, or the Options.Set that run used",
			ckpt, strings.Join(diff, ", "))
	}
	return model, nil
}

// evalBatch is the most images evaluated at once (fewer when a set is
// smaller).
const evalBatch = 500

// writeClassifierSummary saves the Gaussian statistics of the training images'
// features (classifier.StatsFile, for classifier-FID) and summary.json:
// the test accuracy and the test split's classifier-FID against them.
func writeClassifierSummary(model *classifier.Model, trainSet, testSet *datasets.Images, o ClassifierOptions) error {
	s := ClassifierSummary{Data: o.DataDir, Steps: model.Step(), FeatureDim: model.Config().FeatureDim()}
	trainEval, err := model.Evaluate(trainSet, min(evalBatch, trainSet.N))
	if err != nil {
		return err
	}
	mu, sigma, err := eval.GaussianStatsFlat(trainEval.Features, s.FeatureDim)
	if err != nil {
		return fmt.Errorf("training features: %w", err)
	}
	if err := evalfile.SaveStats(filepath.Join(o.Out, classifier.StatsFile), mu, sigma); err != nil {
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
	fmt.Printf("test accuracy %.4f, test-split classifier-FID %.4f (%d-d features) → %s\n", s.TestAccuracy, s.TestFID, s.FeatureDim, o.Out)
	return atomicfile.WriteJSON(filepath.Join(o.Out, classifier.SummaryFile), s)
}
