// Package classifier trains a small image classifier whose last hidden
// layer stands in for the Inception network of FID ("classifier-FID"):
// sample quality of models trained on MNIST or Fashion-MNIST can then be
// compared on any machine, in seconds, without the Inception weights.
//
// The network is a ReLU MLP on the flattened image; its Config is stored in
// the GoMLX context as parameters, so a checkpoint alone rebuilds it.
package classifier

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train"
	gomlxlosses "github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/internal/settings"
	"github.com/edlebm/edlebm/nets"
)

// StatsFile is the file, beside a classifier's checkpoint folder, holding
// the mean and covariance of its features over the training set
// (evalfile.SaveStats format), which classifier-FID compares samples against.
const StatsFile = "train-stats.bin"

// SummaryFile is the file, beside a classifier's checkpoint folder, holding
// what its training measured (test accuracy, test-split classifier-FID).
const SummaryFile = "summary.json"

// Config describes the classifier.
type Config struct {
	// Height, Width and Channels are the input image shape.
	Height, Width, Channels int
	// Classes is the number of labels (0 … Classes−1).
	Classes int
	// Hidden are the widths of the ReLU layers; the last one is the
	// feature layer used for the Fréchet distance.
	Hidden []int
	// LearningRate of Adam.
	LearningRate float64
	// Seed fixes the initialisation (0: random).
	Seed int64
}

// DefaultConfig is the classifier used for (Fashion-)MNIST classifier-FID:
// 784 → 512 → 128 → 10, Adam 1e-3.
func DefaultConfig() Config {
	return Config{Height: 28, Width: 28, Channels: 1, Classes: 10, Hidden: []int{512, 128}, LearningRate: 1e-3, Seed: 1}
}

// Validate reports the first setting that cannot build a classifier.
func (c Config) Validate() error {
	switch {
	case c.Height < 1 || c.Width < 1 || c.Channels < 1:
		return fmt.Errorf("classifier: image shape %d×%d×%d, want all dimensions ≥ 1", c.Height, c.Width, c.Channels)
	case c.Classes < 2:
		return fmt.Errorf("classifier: %d classes, want ≥ 2", c.Classes)
	case len(c.Hidden) == 0:
		return errors.New("classifier: no hidden layers; the last one is the feature layer, want at least one")
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return fmt.Errorf("classifier: learning rate %v, want a finite value > 0", c.LearningRate)
	}
	for i, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("classifier: hidden layer %d has width %d, want ≥ 1", i, h)
		}
	}
	return nil
}

// FeatureDim is the width of the feature layer.
func (c Config) FeatureDim() int { return c.Hidden[len(c.Hidden)-1] }

// Context parameter names holding a Config (the learning rate is under
// GoMLX's own name, optimizers.ParamLearningRate, where its Adam reads it).
const (
	paramShape  = "classifier_image_shape"
	paramClass  = "classifier_classes"
	paramHidden = "classifier_hidden"
	paramSeed   = "classifier_seed"
	scopeName   = "classifier"
)

// params binds every setting of c to its context parameter.
func (c *Config) params() []settings.Param {
	return []settings.Param{
		{Key: paramShape, Ptr: imageShape{c}},
		{Key: paramClass, Ptr: &c.Classes},
		{Key: paramHidden, Ptr: &c.Hidden},
		{Key: optimizers.ParamLearningRate, Ptr: &c.LearningRate, Optional: true, Absent: 1e-3},
		// Checkpoints from before the seed was stored were all made by
		// train-classifier with DefaultConfig's seed, 1.
		{Key: paramSeed, Ptr: &c.Seed, Optional: true, Absent: int64(1)},
	}
}

// imageShape stores a Config's input shape as one []int parameter
// [height, width, channels].
type imageShape struct{ c *Config }

// ParamValue implements settings.Value.
func (s imageShape) ParamValue() any { return []int{s.c.Height, s.c.Width, s.c.Channels} }

// SetParamValue implements settings.Value.
func (s imageShape) SetParamValue(value any) error {
	shape, ok := value.([]int)
	if !ok || len(shape) != 3 {
		return fmt.Errorf("want [height, width, channels]")
	}
	s.c.Height, s.c.Width, s.c.Channels = shape[0], shape[1], shape[2]
	return nil
}

// setParams stores c in ctx.
func (c Config) setParams(ctx *context.Context) { settings.Set(ctx, c.params()) }

// configFromContext reads back what setParams stored; a checkpoint of some
// other model lacks the parameters and is refused.
func configFromContext(ctx *context.Context) (Config, error) {
	var c Config
	if err := settings.Get(ctx, c.params()); err != nil {
		return Config{}, fmt.Errorf("classifier: the checkpoint has no valid classifier settings (%w); is it a classifier checkpoint?", err)
	}
	return c, c.Validate()
}

// WithSettings returns c with GoMLX context settings applied
// ("classifier_hidden=256,64;learning_rate=3e-4", or "file:settings.txt",
// as commandline.ParseContextSettings reads them), validated.
func (c Config) WithSettings(text string) (Config, error) {
	c.Hidden = append([]int{}, c.Hidden...) // not shared with the caller's
	if err := settings.Apply(c.params(), text); err != nil {
		return c, fmt.Errorf("classifier: %w", err)
	}
	return c, c.Validate()
}

// Changes lists the settings in which c differs from base, as
// "name=value" sorted by name.
func (c Config) Changes(base Config) []string { return settings.Changes(c.params(), base.params()) }

// SettingNames lists the names of the settings WithSettings accepts.
func SettingNames() []string {
	var c Config
	return settings.Names(c.params())
}

// Logits returns the class logits [B, Classes] and the features
// [B, FeatureDim] of images x [B, H, W, C] in [-1, 1].
func Logits(ctx *context.Context, cfg Config, x *Node) (logits, features *Node) {
	ctx = ctx.In(scopeName)
	h := Reshape(x, x.Shape().Dimensions[0], -1)
	for i, width := range cfg.Hidden {
		h = activations.Relu(dense(ctx.In(fmt.Sprintf("hidden_%d", i)), h, width))
	}
	return dense(ctx.In("logits"), h, cfg.Classes), h
}

// dense is GoMLX's layers.Dense with bias on x [B, D] — the same scope
// ("dense"), variables ("weights" [D, out], "biases" [out]) and
// initialisers, so checkpoints are unchanged — with the product taken by
// nets.MatrixProduct: layers.Dense's product differentiates through the
// broadcast product [B, D, out].
func dense(ctx *context.Context, x *Node, out int) *Node {
	ctx = ctx.In("dense")
	g := x.Graph()
	w := ctx.VariableWithShape("weights", shapes.Make(x.DType(), x.Shape().Dimensions[1], out)).ValueGraph(g)
	b := ctx.VariableWithShape("biases", shapes.Make(x.DType(), out)).ValueGraph(g)
	return Add(nets.MatrixProduct(x, w), InsertAxes(b, 0))
}

// Model is a classifier with its trainer and evaluation executors.
type Model struct {
	cfg      Config
	ctx      *context.Context
	trainer  *train.Trainer
	evaluate *context.Exec // images → logits, features
}

// New creates a classifier with freshly initialised weights.
func New(backend backends.Backend, cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx := context.New()
	cfg.setParams(ctx)
	if cfg.Seed != 0 {
		if err := ctx.SetRNGStateFromSeed(cfg.Seed); err != nil {
			return nil, fmt.Errorf("classifier: seeding with %d: %w", cfg.Seed, err)
		}
	}
	return newFromContext(backend, ctx, cfg)
}

// Load creates a classifier from the newest checkpoint in dir (see Save).
func Load(backend backends.Backend, dir string) (*Model, error) {
	ctx := context.New()
	if err := checkpoint.Load(ctx, dir); err != nil {
		return nil, fmt.Errorf("classifier: %w", err)
	}
	cfg, err := configFromContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return newFromContext(backend, ctx, cfg)
}

func newFromContext(backend backends.Backend, ctx *context.Context, cfg Config) (m *Model, err error) {
	m = &Model{cfg: cfg, ctx: ctx}
	modelFn := func(ctx *context.Context, _ any, inputs []*Node) []*Node {
		logits, _ := Logits(ctx, cfg, inputs[0])
		return []*Node{logits}
	}
	// datasets.Batches yields labels [B]; GoMLX's loss wants [B, 1].
	lossFn := func(labels, logits []*Node) *Node {
		return gomlxlosses.SparseCategoricalCrossEntropyLogits([]*Node{InsertAxes(labels[0], -1)}, logits)
	}
	// Unchecked: variables may come from a checkpoint, or be created by
	// whichever graph runs first.
	m.trainer = train.NewTrainer(backend, ctx.Checked(false), modelFn, lossFn, optimizers.Adam().Done(), nil, nil)
	m.evaluate, err = context.NewExec(backend, ctx.Checked(false), func(ctx *context.Context, x *Node) []*Node {
		logits, features := Logits(ctx, cfg, x)
		return []*Node{logits, features}
	})
	if err != nil {
		return nil, fmt.Errorf("classifier: creating executor: %w", err)
	}
	return m, nil
}

// Config returns the classifier's settings.
func (m *Model) Config() Config { return m.cfg }

// Trainer is the GoMLX trainer, for train.Loop over datasets.Batches
// (inputs: images; labels: int32 classes).
func (m *Model) Trainer() *train.Trainer { return m.trainer }

// Step is the number of training steps taken (GoMLX's global step).
func (m *Model) Step() int64 { return optimizers.GetGlobalStep(m.ctx) }

// Save writes a checkpoint of the classifier into dir, atomically.
func (m *Model) Save(dir string) error {
	if err := checkpoint.Save(m.ctx, dir, m.Step()); err != nil {
		return fmt.Errorf("classifier: %w", err)
	}
	return nil
}

// Evaluation is what Evaluate computes over an image set.
type Evaluation struct {
	// Predicted holds the arg-max class of each image.
	Predicted []int
	// Features holds N·FeatureDim values, image after image.
	Features []float64
}

// Accuracy is the fraction of images whose predicted class is labels[i].
func (e Evaluation) Accuracy(labels []int) (float64, error) {
	if len(labels) != len(e.Predicted) {
		return 0, fmt.Errorf("classifier: %d labels for %d predictions", len(labels), len(e.Predicted))
	}
	correct := 0
	for i, p := range e.Predicted {
		if p == labels[i] {
			correct++
		}
	}
	return float64(correct) / float64(len(labels)), nil
}

// Evaluate classifies every image of set in batches of batch, returning
// predictions and features.
func (m *Model) Evaluate(set *datasets.Images, batch int) (ev Evaluation, err error) {
	if set.Height != m.cfg.Height || set.Width != m.cfg.Width || set.Channels != m.cfg.Channels {
		return ev, fmt.Errorf("classifier: images %q are %d×%d×%d; the classifier takes %d×%d×%d",
			set.Name, set.Height, set.Width, set.Channels, m.cfg.Height, m.cfg.Width, m.cfg.Channels)
	}
	batches, err := datasets.NewBatches(set, batch, datasets.WithoutShuffle(), datasets.WithPartialBatch())
	if err != nil {
		return ev, fmt.Errorf("classifier: %w", err)
	}
	for {
		_, inputs, _, err := batches.Yield()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return ev, nil
			}
			return ev, err
		}
		outs, err := m.evaluate.Exec(inputs[0])
		if err != nil {
			return ev, fmt.Errorf("classifier: evaluating %q: %w", set.Name, err)
		}
		ev.Predicted = append(ev.Predicted, argmaxRows(outs[0])...)
		ev.Features = append(ev.Features, float64s(outs[1])...)
		for _, t := range append(outs, inputs...) {
			_ = t.FinalizeAll()
		}
	}
}

// argmaxRows returns the index of the largest value of each row of t [B, K].
func argmaxRows(t *tensors.Tensor) []int {
	k := t.Shape().Dimensions[1]
	values := float64s(t)
	out := make([]int, len(values)/k)
	for i := range out {
		row := values[i*k : (i+1)*k]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// float64s copies a float32 tensor's values.
func float64s(t *tensors.Tensor) []float64 {
	flat := tensors.MustCopyFlatData[float32](t)
	out := make([]float64, len(flat))
	for i, v := range flat {
		out[i] = float64(v)
	}
	return out
}
