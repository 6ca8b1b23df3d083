// Package sampling draws from the density exp(−E(x)) of any energy E
// (a losses.EnergyFn) with exact Markov chain Monte Carlo kernels:
// Metropolis-adjusted Langevin (MALA) and Hamiltonian Monte Carlo (HMC).
// Unlike unadjusted Langevin (losses.Langevin), whose chains settle on a
// distribution that is off by an amount growing with the step size, both
// correct each proposal with a Metropolis–Hastings test, so the target is
// their stationary distribution at any step size; the acceptance rate
// they report says whether the step size is useful.
//
// Every chain is one example of the batch: chains accept or reject on
// their own. GoMLX has no loop op, so the steps are unrolled in the graph.
package sampling

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// MALAConfig holds the settings of the Metropolis-adjusted Langevin
// algorithm. A proposal is one Langevin step from x,
//
//	y = x − (s²/2) ∇E(x) + s·ξ,  ξ ~ N(0, I),
//
// accepted with probability min(1, exp(E(x) − E(y)) q(x|y) / q(y|x)),
// q(y|x) ∝ exp(−‖y − x + (s²/2)∇E(x)‖² / (2s²)).
type MALAConfig struct {
	// StepSize is s, the proposal's noise standard deviation.
	StepSize float64
	// Steps is the number of proposals.
	Steps int
}

// Validate reports the first invalid setting, naming it and its value.
func (c MALAConfig) Validate() error {
	if !(c.StepSize > 0) || math.IsInf(c.StepSize, 1) {
		return fmt.Errorf("MALA step size = %v: must be a finite number > 0", c.StepSize)
	}
	if c.Steps < 0 {
		return fmt.Errorf("MALA steps = %d: must be ≥ 0", c.Steps)
	}
	return nil
}

// HMCConfig holds the settings of Hamiltonian Monte Carlo with a unit mass
// matrix: each transition draws a momentum p ~ N(0, I), follows the
// Hamiltonian H(x, p) = E(x) + ‖p‖²/2 for LeapfrogSteps leapfrog steps of
// StepSize, and accepts the end point with probability
// min(1, exp(H(start) − H(end))).
type HMCConfig struct {
	StepSize      float64
	LeapfrogSteps int
	// Steps is the number of transitions.
	Steps int
}

// Validate reports the first invalid setting, naming it and its value.
func (c HMCConfig) Validate() error {
	if !(c.StepSize > 0) || math.IsInf(c.StepSize, 1) {
		return fmt.Errorf("HMC step size = %v: must be a finite number > 0", c.StepSize)
	}
	if c.LeapfrogSteps < 1 {
		return fmt.Errorf("HMC leapfrog steps = %d: must be ≥ 1", c.LeapfrogSteps)
	}
	if c.Steps < 0 {
		return fmt.Errorf("HMC steps = %d: must be ≥ 0", c.Steps)
	}
	return nil
}

// MALA runs cfg.Steps MALA proposals on energy from the chains x0 [B, ...]
// and returns the final states (gradients stopped) and each chain's
// acceptance rate [B] (0 when cfg.Steps is 0). It panics on an invalid
// cfg, GoMLX graph-building style.
func MALA(ctx *context.Context, energy losses.EnergyFn, x0 *Node, cfg MALAConfig) (x, acceptance *Node) {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return MALASteps(ctx, energy, x0, Scalar(x0.Graph(), x0.DType(), cfg.StepSize), cfg.Steps)
}

// MALASteps is MALA with the step size a scalar node, so that one compiled
// graph serves every step size (TuneMALA changes it between calls).
func MALASteps(ctx *context.Context, energy losses.EnergyFn, x0, stepSize *Node, steps int) (x, acceptance *Node) {
	if steps < 0 {
		panic(fmt.Errorf("MALA steps = %d: must be ≥ 0", steps))
	}
	s := ConvertDType(stepSize, x0.DType())
	h := DivScalar(Square(s), 2)
	x = StopGradient(x0)
	e, grad := losses.EnergyGradient(energy, x)
	accepted := ZerosLike(e)
	for range steps {
		xi := ctx.RandomNormal(x.Graph(), x.Shape())
		y := StopGradient(Add(Sub(x, Mul(grad, h)), Mul(xi, s)))
		eY, gradY := losses.EnergyGradient(energy, y)
		// log q(y|x) = −‖ξ‖²/2; log q(x|y) = −‖x − y + h∇E(y)‖²/(2s²).
		back := Add(Sub(x, y), Mul(gradY, h))
		logAlpha := Add(Sub(e, eY), Sub(MulScalar(perExampleSumSq(xi), 0.5), Div(perExampleSumSq(back), MulScalar(Square(s), 2))))
		accept := metropolis(ctx, logAlpha)
		x, e, grad = pick(accept, y, x), pick(accept, eY, e), pick(accept, gradY, grad)
		accepted = Add(accepted, ConvertDType(accept, e.DType()))
	}
	return StopGradient(x), acceptanceRate(accepted, steps)
}

// HMC runs cfg.Steps HMC transitions on energy from the chains x0 [B, ...]
// and returns the final states (gradients stopped) and each chain's
// acceptance rate [B] (0 when cfg.Steps is 0). It panics on an invalid
// cfg, GoMLX graph-building style.
func HMC(ctx *context.Context, energy losses.EnergyFn, x0 *Node, cfg HMCConfig) (x, acceptance *Node) {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return HMCSteps(ctx, energy, x0, Scalar(x0.Graph(), x0.DType(), cfg.StepSize), cfg.LeapfrogSteps, cfg.Steps)
}

// HMCSteps is HMC with the step size a scalar node, so that one compiled
// graph serves every step size (TuneHMC changes it between calls).
func HMCSteps(ctx *context.Context, energy losses.EnergyFn, x0, stepSize *Node, leapfrogSteps, steps int) (x, acceptance *Node) {
	if leapfrogSteps < 1 || steps < 0 {
		panic(fmt.Errorf("HMC leapfrog steps = %d and steps = %d: must be ≥ 1 and ≥ 0", leapfrogSteps, steps))
	}
	eps := ConvertDType(stepSize, x0.DType())
	half := DivScalar(eps, 2)
	x = StopGradient(x0)
	e, grad := losses.EnergyGradient(energy, x)
	accepted := ZerosLike(e)
	for range steps {
		p := ctx.RandomNormal(x.Graph(), x.Shape())
		start := Add(e, MulScalar(perExampleSumSq(p), 0.5))
		y, eY, gradY := x, e, grad
		p = Sub(p, Mul(gradY, half))
		for l := range leapfrogSteps {
			y = StopGradient(Add(y, Mul(p, eps)))
			eY, gradY = losses.EnergyGradient(energy, y)
			if l < leapfrogSteps-1 {
				p = Sub(p, Mul(gradY, eps))
			}
		}
		p = Sub(p, Mul(gradY, half))
		end := Add(eY, MulScalar(perExampleSumSq(p), 0.5))
		accept := metropolis(ctx, Sub(start, end))
		x, e, grad = pick(accept, y, x), pick(accept, eY, e), pick(accept, gradY, grad)
		accepted = Add(accepted, ConvertDType(accept, e.DType()))
	}
	return StopGradient(x), acceptanceRate(accepted, steps)
}

// metropolis decides each chain's Metropolis–Hastings test: true where
// log u < logAlpha for u ~ U(0, 1). A NaN logAlpha rejects.
func metropolis(ctx *context.Context, logAlpha *Node) *Node {
	u := ctx.RandomUniform(logAlpha.Graph(), logAlpha.Shape())
	return LessThan(Log(u), logAlpha)
}

// pick is, per chain, a where accept [B] holds, else b.
func pick(accept, a, b *Node) *Node {
	cond := accept
	for cond.Rank() < a.Rank() {
		cond = InsertAxes(cond, -1)
	}
	return Where(BroadcastToDims(cond, a.Shape().Dimensions...), a, b)
}

// perExampleSumSq is ‖v_i‖² for each example i of v [B, ...].
func perExampleSumSq(v *Node) *Node {
	if v.Rank() == 1 {
		return Square(v)
	}
	axes := make([]int, v.Rank()-1)
	for i := range axes {
		axes[i] = i + 1
	}
	return ReduceSum(Square(v), axes...)
}

// acceptanceRate is accepted / steps (0 for no steps).
func acceptanceRate(accepted *Node, steps int) *Node {
	if steps == 0 {
		return accepted
	}
	return DivScalar(accepted, float64(steps))
}
