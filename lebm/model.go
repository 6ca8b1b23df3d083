package lebm

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
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

	train, posterior, reconstruct, score, decode *context.Exec
	priorSamples, generations                    map[int]*context.Exec
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
	m := &Model{backend: backend, ctx: ctx, cfg: cfg,
		priorSamples: map[int]*context.Exec{}, generations: map[int]*context.Exec{}}
	execs := []struct {
		exec **context.Exec
		fn   func(*context.Context, *Node) []*Node
	}{
		{&m.train, func(ctx *context.Context, x *Node) []*Node {
			m.trainGraphs++
			metrics, finite := TrainStepGraph(ctx, cfg, x)
			return []*Node{metrics, finite}
		}},
		{&m.posterior, func(ctx *context.Context, x *Node) []*Node {
			return []*Node{m.testPosterior(ctx, x)}
		}},
		{&m.reconstruct, func(ctx *context.Context, x *Node) []*Node {
			return []*Node{Decode(ctx, cfg, m.testPosterior(ctx, x))}
		}},
		{&m.decode, func(ctx *context.Context, z *Node) []*Node {
			return []*Node{Decode(ctx, cfg, z)}
		}},
		{&m.score, func(ctx *context.Context, x *Node) []*Node {
			return []*Node{PosteriorEnergy(ctx, cfg, x, m.testPosterior(ctx, x))}
		}},
	}
	for _, e := range execs {
		if *e.exec, err = context.NewExec(backend, ctx, e.fn); err != nil {
			return nil, fmt.Errorf("lebm: creating executor: %w", err)
		}
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
// (which differs between SimpleGo and XLA).
func (m *Model) initVariables() (err error) {
	defer recoverError(&err, "initialising the variables")
	z := tensors.FromShape(shapes.Make(m.cfg.dtype(), 1, m.cfg.Generator.Nz))
	_, err = context.ExecOnce(m.backend, m.ctx, func(ctx *context.Context, z *Node) *Node {
		return Add(ReduceAllSum(Decode(ctx, m.cfg, z)), ReduceAllSum(EBMEnergy(ctx, m.cfg, z)))
	}, z)
	return err
}

// testPosterior samples the posterior of x with the test-time chain.
func (m *Model) testPosterior(ctx *context.Context, x *Node) *Node {
	z0 := BaseSample(ctx, m.cfg, x.Graph(), x.Shape().Dimensions[0])
	return PosteriorSample(ctx, m.cfg, x, z0, m.cfg.TestPosteriorLangevin)
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Context returns the context holding the model's variables and parameters.
func (m *Model) Context() *context.Context { return m.ctx }

// GlobalStep returns the number of training steps taken.
func (m *Model) GlobalStep() (step int64, err error) {
	defer recoverError(&err, "reading the global step")
	return optimizers.GetGlobalStep(m.ctx), nil
}

// TrainStep runs one training step on the images x [B, H, W, C] (the
// generator's output shape, in [−1, 1], of the model's DType). If a loss,
// an energy, the posterior samples or an updated variable is NaN or ±Inf,
// it returns an error naming the step and the quantity, and the model keeps
// its previous variables.
func (m *Model) TrainStep(x *tensors.Tensor) (StepMetrics, error) {
	step, err := m.GlobalStep()
	if err != nil {
		return StepMetrics{}, err
	}
	step++
	what := fmt.Sprintf("training step %d", step)
	outs, err := m.run(what, m.train, x)
	if err != nil {
		return StepMetrics{}, err
	}
	defer finalize(outs)
	values, err := tensors.CopyFlatData[float64](outs[0])
	if err != nil {
		return StepMetrics{}, fmt.Errorf("lebm: %s: reading metrics: %w", what, err)
	}
	finite, err := tensors.CopyFlatData[bool](outs[1])
	if err != nil {
		return StepMetrics{}, fmt.Errorf("lebm: %s: reading finiteness checks: %w", what, err)
	}
	metrics := StepMetrics{
		Step:              step,
		GeneratorLoss:     values[MetricGeneratorLoss],
		PriorLoss:         values[MetricPriorLoss],
		PosteriorEnergy:   values[MetricPosteriorEnergy],
		PriorSampled:      m.cfg.Method == MethodCD,
		ReconstructionMSE: values[MetricReconstructionMSE],
		Finite:            !slices.Contains(finite, false),
	}
	if metrics.PriorSampled {
		metrics.PriorEnergy = values[MetricPriorEnergy]
	}
	if i := slices.Index(finite, false); i >= 0 {
		return metrics, fmt.Errorf("lebm: %s diverged: %s contains NaN or Inf (generator loss %g, prior loss %g); the update was discarded",
			what, Checks[i], metrics.GeneratorLoss, metrics.PriorLoss)
	}
	return metrics, nil
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

// PosteriorSample returns latents z [B, nz] sampled from the posterior of
// the images x [B, H, W, C] with Config.TestPosteriorLangevin, from N(0, I).
func (m *Model) PosteriorSample(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.run1("posterior sampling", m.posterior, x)
}

// Reconstruct returns G(z) [B, H, W, C] for posterior samples z of x (see
// PosteriorSample).
func (m *Model) Reconstruct(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.run1("reconstruction", m.reconstruct, x)
}

// AnomalyScore returns U_post(z) = ‖x − G(z)‖²/(2σ²) + f(z) + ‖z‖²/(2σ0²)
// [B] at posterior samples z of x (see PosteriorSample): an estimate of
// −log p(x, z), higher for more anomalous images.
func (m *Model) AnomalyScore(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.run1("anomaly scoring", m.score, x)
}

// PriorSample returns n latents [n, nz] sampled from the prior with
// Config.GenerationLangevin, from N(0, I).
func (m *Model) PriorSample(n int) (*tensors.Tensor, error) {
	return m.runCount("prior sampling", m.priorSamples, n, func(ctx *context.Context, g *Graph) *Node {
		return PriorSample(ctx, m.cfg, BaseSample(ctx, m.cfg, g, n), m.cfg.GenerationLangevin)
	})
}

// Decode returns the generator's images G(z) [B, H, W, C] for latents z
// [B, nz] of the model's DType — for interpolations and attribute
// manipulation in latent space.
func (m *Model) Decode(z *tensors.Tensor) (out *tensors.Tensor, err error) {
	if z == nil || z.Rank() != 2 || z.Shape().Dimensions[1] != m.cfg.Generator.Nz || z.DType() != m.cfg.dtype() {
		return nil, fmt.Errorf("lebm: decoding: latents have shape %v; want (%s)[batch, %d]", shapeOf(z), m.cfg.dtype(), m.cfg.Generator.Nz)
	}
	defer recoverError(&err, "decoding")
	outs, err := m.decode.Exec(z)
	if err != nil {
		return nil, fmt.Errorf("lebm: decoding: %w", err)
	}
	return outs[0], nil
}

func shapeOf(t *tensors.Tensor) any {
	if t == nil {
		return "nil"
	}
	return t.Shape()
}

// Generate returns n images [n, H, W, C] decoded from prior samples (see
// PriorSample).
func (m *Model) Generate(n int) (*tensors.Tensor, error) {
	return m.runCount("generation", m.generations, n, func(ctx *context.Context, g *Graph) *Node {
		return Generate(ctx, m.cfg, g, n, m.cfg.GenerationLangevin)
	})
}

// runCount runs the graph fn, which makes n samples, with an executor
// cached per n.
func (m *Model) runCount(what string, cache map[int]*context.Exec, n int, fn func(*context.Context, *Graph) *Node) (*tensors.Tensor, error) {
	if n < 1 {
		return nil, fmt.Errorf("lebm: %s: number of samples n = %d: must be at least 1", what, n)
	}
	exec, ok := cache[n]
	if !ok {
		var err error
		if exec, err = context.NewExec(m.backend, m.ctx, fn); err != nil {
			return nil, fmt.Errorf("lebm: %s: creating executor: %w", what, err)
		}
		cache[n] = exec
	}
	outs, err := m.run(what, exec)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// run1 runs exec on images x and returns its single output.
func (m *Model) run1(what string, exec *context.Exec, x *tensors.Tensor) (*tensors.Tensor, error) {
	outs, err := m.run(what, exec, x)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// run checks the images (if any) and executes exec, turning panics and
// errors into errors that name the computation.
func (m *Model) run(what string, exec *context.Exec, args ...any) (outs []*tensors.Tensor, err error) {
	if len(args) > 0 {
		if err := m.checkImages(args[0].(*tensors.Tensor)); err != nil {
			return nil, fmt.Errorf("lebm: %s: %w", what, err)
		}
	}
	defer recoverError(&err, what)
	if outs, err = exec.Exec(args...); err != nil {
		return nil, fmt.Errorf("lebm: %s: %w", what, err)
	}
	return outs, nil
}

// checkImages reports whether x is a batch of images the generator makes.
func (m *Model) checkImages(x *tensors.Tensor) error {
	h, w, c := m.cfg.Generator.OutputShape()
	if x == nil {
		return errors.New("images x are nil")
	}
	dims := x.Shape().Dimensions
	if x.Rank() != 4 || dims[0] < 1 || dims[1] != h || dims[2] != w || dims[3] != c || x.DType() != m.cfg.dtype() {
		return fmt.Errorf("images x have shape %s; want (%s)[batch, %d, %d, %d], the generator's output", x.Shape(), m.cfg.dtype(), h, w, c)
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
