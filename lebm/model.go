package lebm

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/internal/rngstate"
)

// Model is a latent EBM with its training state, compiled for a backend.
// Each computation is compiled once per input shape, on first use: keep the
// batch size fixed during training (drop or pad a short last batch).
//
// A Model is not safe for concurrent use.
//
// On GoMLX v0.26's SimpleGo backend, open the backend as "go:ops_sequential":
// SimpleGo's default parallel execution of independent operations
// deadlocks on these graphs (workers running matrix products wait for free
// workers), reliably on a 2-core machine.
type Model struct {
	backend backends.Backend
	ctx     *context.Context
	cfg     Config

	trainer *train.Trainer
	// metricAt maps a metric index (MetricGeneratorLoss, ..., -1 for the
	// failed checks) to its position in the trainer's outputs.
	metricAt map[int]int
	samplers
	// trainGraphs counts the training-step graphs built, for tests.
	trainGraphs int
}

// StepMetrics reports one training step.
type StepMetrics struct {
	// Step is the number of this step, counting from 1: the global step
	// after a successful update.
	Step int64
	// GeneratorLoss is mean_i ‖x_i − G(z_post,i)‖² (summed over pixels).
	GeneratorLoss float64
	// PriorLoss is the prior loss of the configured method.
	PriorLoss float64
	// PosteriorEnergy is mean f(z_post).
	PosteriorEnergy float64
	// PriorEnergy is mean f(z_prior); set only when PriorSampled.
	PriorEnergy float64
	// PriorSampled tells whether the method drew prior samples (MethodCD).
	PriorSampled bool
	// ReconstructionMSE is the per-pixel mean squared error of G(z_post).
	ReconstructionMSE float64
	// Finite tells whether every checked quantity was free of NaN and ±Inf
	// (see Checks); when false, TrainStep also returns an error and the
	// update was discarded.
	Finite bool
}

// New creates a model with freshly initialised variables from cfg, in a new
// context that holds cfg as parameters (see Config.SetParams). A non-zero
// cfg.Seed makes initialisation and sampling reproducible.
func New(backend backends.Backend, cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx := context.New()
	cfg.SetParams(ctx)
	if cfg.Seed != 0 {
		if err := ctx.SetRNGStateFromSeed(cfg.Seed); err != nil {
			return nil, fmt.Errorf("lebm: seeding the random number generator with %d: %w", cfg.Seed, err)
		}
	}
	return NewFromContext(backend, ctx)
}

// NewFromContext creates a model on an existing context, which must hold
// the model's Config as parameters (see Config.SetParams and
// ConfigFromContext) and may already hold its variables, for instance
// loaded from a checkpoint. The Model keeps using ctx.
func NewFromContext(backend backends.Backend, ctx *context.Context) (*Model, error) {
	cfg, err := ConfigFromContext(ctx)
	if err != nil {
		return nil, err
	}
	m := &Model{backend: backend, ctx: ctx, cfg: cfg}
	if err := m.newTrainer(); err != nil {
		return nil, err
	}
	if err := m.newSamplers(); err != nil {
		return nil, err
	}
	if err := m.initVariables(); err != nil {
		return nil, err
	}
	return m, nil
}

// initVariables declares and initialises any of both models' variables the
// context lacks. GoMLX creates a variable only when a graph first uses it:
// without this, a Save before the first training step wrote no variables,
// and a model loaded from it drew new ones from the backend's random stream
// (which differs between SimpleGo and XLA). The graph that declares them
// is built, never compiled: only the initialisers run.
func (m *Model) initVariables() (err error) {
	defer recoverError(&err, "initialising the variables")
	g := NewGraph(m.backend, "declare variables")
	defer g.Finalize()
	z := Parameter(g, "z", shapes.Make(m.cfg.dtype(), 1, m.cfg.Generator.Nz))
	Decode(m.ctx, m.cfg, z)
	EBMEnergy(m.ctx, m.cfg, z)
	return m.ctx.InitializeVariables(m.backend, nil)
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Context returns the context holding the model's variables and parameters.
func (m *Model) Context() *context.Context { return m.ctx }

// Step returns the number of training steps taken (GoMLX's global step;
// a checkpoint that holds it as anything but a scalar int64 does not load).
func (m *Model) Step() int64 { return optimizers.GetGlobalStep(m.ctx) }

// TrainStep runs one training step on the images x [B, H, W, C] (the
// generator's output shape, in [−1, 1], of the model's DType). If a loss,
// an energy, the posterior samples or an updated variable is NaN or ±Inf,
// it returns an error naming the step and the quantity, and the model keeps
// its previous variables.
//
// It runs the step of Trainer, which GoMLX's train.Loop runs too.
func (m *Model) TrainStep(x *tensors.Tensor) (metrics StepMetrics, err error) {
	step := m.Step()
	what := fmt.Sprintf("training step %d", step+1)
	if err := m.checkImages(what, x); err != nil {
		return StepMetrics{}, err
	}
	outs, err := func() (outs []*tensors.Tensor, err error) {
		defer recoverError(&err, what)
		return m.trainer.TrainStep(nil, []*tensors.Tensor{x}, nil)
	}()
	if err != nil {
		return StepMetrics{}, fmt.Errorf("lebm: %s: %w", what, err)
	}
	defer finalize(outs)
	return m.ReadStepMetrics(outs)
}

// Seed restarts the model's random stream (Langevin noise, initial
// latents, training noise) from seed, so that what follows draws the same
// numbers whatever ran before: evaluations of different checkpoints then
// share their random draws, and one checkpoint's scores do not depend on
// what else was evaluated first.
func (m *Model) Seed(seed int64) (err error) {
	defer recoverError(&err, "seeding the random number generator")
	if err := m.ctx.SetRNGStateFromSeed(seed); err != nil {
		return fmt.Errorf("lebm: seeding the random number generator with %d: %w", seed, err)
	}
	return nil
}

// Aside runs fn — pictures, an evaluation — and then puts the model's
// random stream back where it was, so that fn's draws leave the training
// steps' draws unchanged: a run's steps do not depend on when it drew
// pictures, and a run resumed from a checkpoint repeats the steps of one
// that was never stopped, whatever each drew in between.
func (m *Model) Aside(fn func() error) error { return rngstate.Aside(m.ctx, fn) }

// EndEpoch counts one more completed epoch, which multiplies both learning
// rates by Config.LRDecay from the next training step on.
func (m *Model) EndEpoch() (err error) {
	defer recoverError(&err, "ending the epoch")
	v := EpochVar(m.ctx)
	return v.SetValue(tensors.FromScalar(tensors.ToScalar[int64](v.MustValue()) + 1))
}

// Epoch returns the number of epochs completed (see EndEpoch).
func (m *Model) Epoch() (epoch int64, err error) {
	defer recoverError(&err, "reading the epoch")
	return tensors.ToScalar[int64](EpochVar(m.ctx).MustValue()), nil
}

// exec1 executes exec and returns its single output.
func (m *Model) exec1(what string, exec *context.Exec, args ...any) (*tensors.Tensor, error) {
	outs, err := m.exec(what, exec, args...)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// exec executes exec, turning panics and errors into errors that name the
// computation.
func (m *Model) exec(what string, exec *context.Exec, args ...any) (outs []*tensors.Tensor, err error) {
	defer recoverError(&err, what)
	if outs, err = exec.Exec(args...); err != nil {
		return nil, fmt.Errorf("lebm: %s: %w", what, err)
	}
	return outs, nil
}

// checkImages reports, naming the computation, whether x is not a batch
// of images the generator makes.
func (m *Model) checkImages(what string, x *tensors.Tensor) error {
	h, w, c := m.cfg.Generator.OutputShape()
	if x == nil {
		return fmt.Errorf("lebm: %s: images x are nil", what)
	}
	dims := x.Shape().Dimensions
	if x.Rank() != 4 || dims[0] < 1 || dims[1] != h || dims[2] != w || dims[3] != c || x.DType() != m.cfg.dtype() {
		return fmt.Errorf("lebm: %s: images x have shape %s; want (%s)[batch, %d, %d, %d], the generator's output", what, x.Shape(), m.cfg.dtype(), h, w, c)
	}
	return nil
}

// finalize frees tensors that are no longer needed.
func finalize(ts []*tensors.Tensor) {
	for _, t := range ts {
		_ = t.FinalizeAll()
	}
}

// recoverError turns a panic (GoMLX reports graph-building errors by
// panicking) into *err, naming the operation.
func recoverError(err *error, what string) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(error); ok {
		*err = fmt.Errorf("lebm: %s: %w", what, e)
	} else {
		*err = fmt.Errorf("lebm: %s: %v", what, r)
	}
}
