package density

import (
	"errors"
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/ema"

	"github.com/edlebm/edlebm/internal/scopes"
	"github.com/edlebm/edlebm/internal/settings"
)

// Model is an energy network being trained on a stream of data batches,
// with a moving average of its parameters for evaluation.
type Model struct {
	cfg      Config
	backend  backends.Backend
	ctx      *context.Context
	trainer  *train.Trainer
	energies *context.Exec
}

// New creates a model with freshly initialised parameters; seed fixes the
// initialisation and the losses' noise.
func New(backend backends.Backend, cfg Config, seed int64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(seed); err != nil {
		return nil, err
	}
	settings.Set(ctx, cfg.params())
	modelFn := func(ctx *context.Context, _ any, inputs []*Node) []*Node {
		g := inputs[0].Graph()
		train.AddLoss(ctx, Loss(ctx, inputs[0], cfg))
		train.AddPerStepUpdateGraphFn(ctx, g, func(ctx *context.Context, g *Graph) {
			ema.UpdateGraph(ctx, g, energyScope, cfg.EMADecay)
		})
		return nil
	}
	m := &Model{cfg: cfg, backend: backend, ctx: ctx}
	m.trainer = train.NewTrainer(backend, ctx, modelFn, nil, optimizers.Adam().Epsilon(cfg.AdamEpsilon).Done(), nil, nil)
	var err error
	m.energies, err = context.NewExec(backend, ctx, func(ctx *context.Context, x *Node) *Node {
		return AveragedEnergy(ctx, cfg)(x)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Trainer is the GoMLX trainer of the model, for use with train.Loop.
func (m *Model) Trainer() *train.Trainer { return m.trainer }

// NewLoop returns GoMLX's training loop over the model's trainer, which
// stops at the first step whose loss is NaN or infinite with CheckFinite's
// error (it names the step).
func (m *Model) NewLoop() *train.Loop {
	loop := train.NewLoop(m.trainer)
	loop.OnStep("divergence guard", 0, func(_ *train.Loop, metrics []*tensors.Tensor) error {
		return CheckFinite(m.Step(), toFloat64(metrics[0]))
	})
	return loop
}

// Context holds the model's variables, optimizer state and RNG state.
func (m *Model) Context() *context.Context { return m.ctx }

// ErrNonFinite is wrapped by errors reporting a NaN or infinite loss.
var ErrNonFinite = errors.New("non-finite value")

// TrainStep runs one optimisation step on the batch x [B, D] and returns the
// loss; a NaN or infinite loss is an error wrapping ErrNonFinite.
func (m *Model) TrainStep(x *tensors.Tensor) (float64, error) {
	metrics, err := m.trainer.TrainStep(nil, []*tensors.Tensor{x}, nil)
	if err != nil {
		return 0, err
	}
	loss := toFloat64(metrics[0])
	if err := CheckFinite(optimizers.GetGlobalStep(m.ctx), loss); err != nil {
		return loss, err
	}
	return loss, nil
}

// CheckFinite returns an error naming step when loss is NaN or infinite.
func CheckFinite(step int64, loss float64) error {
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return fmt.Errorf("step %d: loss is %v: %w (training diverged)", step, loss, ErrNonFinite)
	}
	return nil
}

// Energies evaluates the averaged-parameter energy at n points given flat
// (n × dim values).
func (m *Model) Energies(points []float32, dim int) ([]float64, error) {
	if dim <= 0 || len(points)%dim != 0 {
		return nil, fmt.Errorf("density: %d values are not a whole number of %d-dimensional points", len(points), dim)
	}
	if !m.hasAverages() {
		return nil, errors.New("density: the model has not been trained yet (no parameter averages)")
	}
	out, err := m.energies.Exec(tensors.FromFlatDataAndDimensions(points, len(points)/dim, dim))
	if err != nil {
		return nil, err
	}
	return float64sOf(out[0]), nil
}

func (m *Model) hasAverages() bool {
	found := false
	m.ctx.EnumerateVariables(func(v *context.Variable) {
		found = found || scopes.Within(v.Scope(), ema.Prefix)
	})
	return found
}

func toFloat64(t *tensors.Tensor) float64 {
	switch v := t.Value().(type) {
	case float32:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Errorf("density: want a float scalar, got %s", t.Shape()))
}

// float64sOf copies the values of a float tensor as float64.
func float64sOf(t *tensors.Tensor) []float64 {
	var out []float64
	t.MustConstFlatData(func(flat any) {
		switch v := flat.(type) {
		case []float32:
			out = make([]float64, len(v))
			for i, x := range v {
				out[i] = float64(x)
			}
		case []float64:
			out = append(out, v...)
		}
	})
	return out
}
