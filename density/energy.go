package density

import (
	"errors"
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/ema"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
)

const energyScope = "/energy"

// Energy returns the energy network as a losses.EnergyFn, with the
// variables of ctx's scope /energy (created on first use), plus the
// Bernoulli base of SetBernoulliBase when the model has one.
func Energy(ctx *context.Context, cfg Config) losses.EnergyFn {
	return withBase(ctx, energyAt(ctx.InAbsPath(energyScope).Checked(false), cfg))
}

// AveragedEnergy is Energy with the moving average of the network's
// parameters (the model evaluated, sampled and pictured).
func AveragedEnergy(ctx *context.Context, cfg Config) losses.EnergyFn {
	return withBase(ctx, energyAt(ema.AveragedContext(ctx, energyScope), cfg))
}

func energyAt(ctx *context.Context, cfg Config) losses.EnergyFn {
	return func(x *Node) *Node { return nets.EnergyMLP(ctx, x, cfg.MLP) }
}

// baseScope holds the means of the Bernoulli base (SetBernoulliBase).
const baseScope = "/bernoulli_base"

// withBase adds −log B(x) of the model's Bernoulli base B, or the
// quadratic ‖x‖²/(2σ²) of its Gaussian base, if it has one, to energy.
func withBase(ctx *context.Context, energy losses.EnergyFn) losses.EnergyFn {
	if g := ctx.InAbsPath(baseScope).GetVariable("gaussian_precision"); g != nil {
		return func(x *Node) *Node {
			precision := ConvertDType(g.ValueGraph(x.Graph()), x.DType())
			return Add(energy(x), MulScalar(Mul(precision, ReduceSum(Square(x), 1)), 0.5))
		}
	}
	v := ctx.InAbsPath(baseScope).GetVariable("log_odds")
	if v == nil {
		return energy
	}
	return func(x *Node) *Node {
		// log B(x) = Σ x·log p + (1−x)·log(1−p) = Σ x·logit(p) + log(1−p), and
		// log(1−p) = −softplus(logit p).
		logOdds := InsertAxes(v.ValueGraph(x.Graph()), 0)
		logB := Sub(ReduceSum(Mul(x, logOdds), 1), ReduceSum(Softplus(logOdds), 1))
		return Sub(energy(x), logB)
	}
}

// SetBernoulliBase gives a model of binary data the base distribution of
// Grathwohl et al.'s binary-image EBMs: independent bits with the given
// means (the training data's, typically), whose −log-probability is added
// to the network's energy, so the network learns only what the base misses.
// Means are clipped to [0.01, 0.99]. It must be called before the first
// training step; checkpoints keep the base.
func (m *Model) SetBernoulliBase(means []float64) error {
	if m.Step() != 0 || m.ctx.InAbsPath(baseScope).GetVariable("log_odds") != nil || m.ctx.InAbsPath(baseScope).GetVariable("gaussian_precision") != nil {
		return errors.New("density: a base is set once, before training")
	}
	logOdds := make([]float32, len(means))
	for i, p := range means {
		if math.IsNaN(p) {
			return fmt.Errorf("density: Bernoulli base mean %d is NaN", i)
		}
		p = min(max(p, 0.01), 0.99)
		logOdds[i] = float32(math.Log(p / (1 - p)))
	}
	m.ctx.InAbsPath(baseScope).VariableWithValue("log_odds", logOdds).SetTrainable(false)
	return nil
}

// SetGaussianBase gives a model of real vectors the base N(0, std²I),
// whose energy ‖x‖²/(2·std²) is added to the network's: exp(−E) is then
// integrable over ℝ^d whenever the network grows slower than quadratically
// (a softplus MLP grows linearly), so the model has a log-likelihood, and
// the network learns only what the base misses. It must be called before
// the first training step; checkpoints keep the base.
func (m *Model) SetGaussianBase(std float64) error {
	scope := m.ctx.InAbsPath(baseScope)
	if m.Step() != 0 || scope.GetVariable("gaussian_precision") != nil || scope.GetVariable("log_odds") != nil {
		return errors.New("density: a base is set once, before training")
	}
	if !(std > 0) || math.IsInf(std, 1) {
		return fmt.Errorf("density: Gaussian base standard deviation %v, want a finite number > 0", std)
	}
	scope.VariableWithValue("gaussian_precision", float32(1/(std*std))).SetTrainable(false)
	return nil
}
