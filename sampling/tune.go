package sampling

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// TuneConfig holds the settings of MALA's warm-up.
type TuneConfig struct {
	// Target is the acceptance rate sought; 0.574 is optimal for MALA in
	// high dimension (Roberts & Rosenthal 1998).
	Target float64
	// InitialStepSize starts the search.
	InitialStepSize float64
	// WarmupSteps is the number of MALA steps of the warm-up, each with
	// its own step size.
	WarmupSteps int
}

// Validate reports the first invalid setting, naming it and its value.
func (c TuneConfig) Validate() error {
	if !(c.Target > 0 && c.Target < 1) {
		return fmt.Errorf("MALA tuning target acceptance = %v: must be in (0, 1)", c.Target)
	}
	if !(c.InitialStepSize > 0) || math.IsInf(c.InitialStepSize, 1) {
		return fmt.Errorf("MALA tuning initial step size = %v: must be a finite number > 0", c.InitialStepSize)
	}
	if c.WarmupSteps < 1 {
		return fmt.Errorf("MALA tuning warm-up steps = %d: must be ≥ 1", c.WarmupSteps)
	}
	return nil
}

// TuneMALA runs cfg.WarmupSteps MALA steps on energy from the chains x0,
// adapting the step size between steps toward the target acceptance rate
// (averaged over the chains) by the dual averaging of Hoffman & Gelman
// (2014, the NUTS paper, section 3.2; γ = 0.05, t₀ = 10, κ = 0.75, μ =
// log(10·s₀)), and returns the averaged step size it settles on and the
// chains' states after the warm-up. The step size is then fixed, so that
// the chains that follow (MALA with it) are exact. ctx holds the energy's
// variables and the random stream; the warm-up compiles one graph.
func TuneMALA(b backends.Backend, ctx *context.Context, energy losses.EnergyFn, x0 *tensors.Tensor, cfg TuneConfig) (stepSize float64, x *tensors.Tensor, err error) {
	return tune(b, ctx, x0, cfg, func(ctx *context.Context, x, step *Node) (*Node, *Node) {
		return MALASteps(ctx, energy, x, step, 1)
	})
}

// TuneHMC is TuneMALA for HMC transitions of leapfrogSteps leapfrog steps:
// the warm-up adapts the leapfrog step size toward cfg.Target (0.651 is
// optimal for HMC in high dimension, Beskos et al. 2013), then fixes it.
func TuneHMC(b backends.Backend, ctx *context.Context, energy losses.EnergyFn, x0 *tensors.Tensor, leapfrogSteps int, cfg TuneConfig) (stepSize float64, x *tensors.Tensor, err error) {
	if leapfrogSteps < 1 {
		return 0, nil, fmt.Errorf("HMC leapfrog steps = %d: must be ≥ 1", leapfrogSteps)
	}
	return tune(b, ctx, x0, cfg, func(ctx *context.Context, x, step *Node) (*Node, *Node) {
		return HMCSteps(ctx, energy, x, step, leapfrogSteps, 1)
	})
}

// TuneMixed is TuneMALA for MixedSweeps: each warm-up step is one sweep —
// every categorical column drawn from its exact conditional, then
// malaSteps MALA steps on the numbers — and the MALA step size adapts
// toward cfg.Target, then is fixed. Rows without numbers, or no MALA
// steps, have nothing to tune: it is an error.
func TuneMixed(b backends.Backend, ctx *context.Context, energy losses.EnergyFn, x0 *tensors.Tensor, layout MixedLayout, malaSteps int, cfg TuneConfig) (stepSize float64, x *tensors.Tensor, err error) {
	if layout.Numeric == 0 || malaSteps < 1 {
		return 0, nil, fmt.Errorf("sampling: tuning mixed sweeps of %d numbers and %d MALA steps: want at least one of each", layout.Numeric, malaSteps)
	}
	return tune(b, ctx, x0, cfg, func(ctx *context.Context, x, step *Node) (*Node, *Node) {
		return MixedSweeps(ctx, energy, x, layout, step, 1, malaSteps)
	})
}

// tune is the dual-averaging warm-up of TuneMALA, TuneHMC and TuneMixed: one
// transition of kernel per call of one compiled graph, the step size its
// input.
func tune(b backends.Backend, ctx *context.Context, x0 *tensors.Tensor, cfg TuneConfig, kernel func(ctx *context.Context, x, step *Node) (next, acceptance *Node)) (stepSize float64, x *tensors.Tensor, err error) {
	if err := cfg.Validate(); err != nil {
		return 0, nil, err
	}
	exec, err := context.NewExec(b, ctx, func(ctx *context.Context, x, logStep *Node) []*Node {
		next, acceptance := kernel(ctx, x, Exp(logStep))
		return []*Node{next, ConvertDType(ReduceAllMean(acceptance), dtypes.Float64)}
	})
	if err != nil {
		return 0, nil, err
	}
	defer exec.Finalize()
	const gamma, t0, kappa = 0.05, 10.0, 0.75
	mu := math.Log(10 * cfg.InitialStepSize)
	logStep, logAvg, hBar := math.Log(cfg.InitialStepSize), 0.0, 0.0
	x = x0
	for k := 1; k <= cfg.WarmupSteps; k++ {
		out, err := exec.Exec(x, logStep)
		if err != nil {
			return 0, nil, fmt.Errorf("sampling: warm-up step %d: %w", k, err)
		}
		if x != x0 {
			x.FinalizeAll()
		}
		x = out[0]
		acceptance := tensors.ToScalar[float64](out[1])
		out[1].FinalizeAll()
		fk := float64(k)
		hBar = (1-1/(fk+t0))*hBar + (cfg.Target-acceptance)/(fk+t0)
		logStep = mu - math.Sqrt(fk)/gamma*hBar
		w := math.Pow(fk, -kappa)
		logAvg = w*logStep + (1-w)*logAvg
	}
	return math.Exp(logAvg), x, nil
}

// RunMALA runs cfg.Steps MALA steps on energy from the chains x0 and
// returns their final states and the mean acceptance. The steps run as
// repeated executions of one compiled graph of a block of steps (the
// largest divisor of cfg.Steps up to maxBlock), not as one graph of all
// of them: unrolled, a few hundred steps of a network's energy and
// gradient take XLA minutes and gigabytes to compile. The random stream
// is ctx's, drawn in the same order as one graph of cfg.Steps steps.
func RunMALA(b backends.Backend, ctx *context.Context, energy losses.EnergyFn, x0 *tensors.Tensor, cfg MALAConfig) (x *tensors.Tensor, acceptance float64, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, 0, err
	}
	if cfg.Steps == 0 {
		return x0, 0, nil
	}
	const maxBlock = 10
	block := 1
	for k := min(maxBlock, cfg.Steps); k > 1; k-- {
		if cfg.Steps%k == 0 {
			block = k
			break
		}
	}
	exec, err := context.NewExec(b, ctx, func(ctx *context.Context, x *Node) []*Node {
		next, acceptance := MALA(ctx, energy, x, MALAConfig{StepSize: cfg.StepSize, Steps: block})
		return []*Node{next, ConvertDType(ReduceAllMean(acceptance), dtypes.Float64)}
	})
	if err != nil {
		return nil, 0, err
	}
	defer exec.Finalize()
	x = x0
	for k := 0; k < cfg.Steps/block; k++ {
		out, err := exec.Exec(x)
		if err != nil {
			return nil, 0, fmt.Errorf("sampling: MALA steps %d to %d: %w", k*block+1, (k+1)*block, err)
		}
		if x != x0 {
			x.FinalizeAll()
		}
		x = out[0]
		acceptance += tensors.ToScalar[float64](out[1]) * float64(block) / float64(cfg.Steps)
		out[1].FinalizeAll()
	}
	return x, acceptance, nil
}
