package losses

import (
	"fmt"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// LangevinConfig holds the settings of (unadjusted) Langevin dynamics:
//
//	x ← x − (s²/2) ∇E(x) + s·ξ,  ξ ~ N(0, I),
//
// with step size s. In the "ε" form used by some papers,
// x += (ε/2)∇log p + √ε ξ, the step size is s = √ε.
type LangevinConfig struct {
	// StepSize is s, the standard deviation of the injected noise.
	StepSize float64
	// Steps is the number of updates.
	Steps int
	// NoNoise drops the noise term, leaving gradient descent on the energy
	// with learning rate s²/2.
	NoNoise bool
}

// Validate reports the first invalid setting, naming it and its value.
func (c LangevinConfig) Validate() error {
	if err := positive("Langevin step size", c.StepSize); err != nil {
		return err
	}
	if c.Steps < 0 {
		return fmt.Errorf("Langevin steps = %d: must be ≥ 0", c.Steps)
	}
	return nil
}

// Langevin runs cfg.Steps Langevin updates on energy starting from x0 and
// returns the final state, with gradients stopped: samples are data for the
// losses that use them, never something to differentiate through.
//
// GoMLX has no loop op, so the chain is unrolled in the graph.
func Langevin(ctx *context.Context, energy EnergyFn, x0 *Node, cfg LangevinConfig) *Node {
	return StopGradient(LangevinTrace(ctx, energy, x0, cfg, nil))
}

// LangevinTrace is Langevin that also calls observe (when not nil) with the
// step number and the energies E(x) computed at each step, before that step's
// update — for diagnostics such as energy profiles. The returned state is
// not gradient-stopped.
func LangevinTrace(ctx *context.Context, energy EnergyFn, x0 *Node, cfg LangevinConfig, observe func(step int, e *Node)) *Node {
	noise := func(int) *Node { return ctx.RandomNormal(x0.Graph(), x0.Shape()) }
	return langevinChain(energy, x0, cfg, observe, noise)
}

// LangevinWithNoise is Langevin with the noise given: noise [cfg.Steps,
// ...x0's shape] holds ξ of every step, in order, in x0's dtype. Noise
// drawn outside the graph, from a stream of each example's own, makes an
// example's chain independent of its batch and of what ran before.
func LangevinWithNoise(energy EnergyFn, x0, noise *Node, cfg LangevinConfig) *Node {
	want := append([]int{cfg.Steps}, x0.Shape().Dimensions...)
	if !slices.Equal(noise.Shape().Dimensions, want) || noise.DType() != x0.DType() {
		panic(fmt.Errorf("losses: Langevin noise has shape %s; want (%s)%v, a draw per step", noise.Shape(), x0.DType(), want))
	}
	step := func(i int) *Node { return Squeeze(SliceAxis(noise, 0, AxisElem(i)), 0) }
	return StopGradient(langevinChain(energy, x0, cfg, nil, step))
}

// langevinChain runs cfg.Steps updates from x0 with noise(step) as ξ.
func langevinChain(energy EnergyFn, x0 *Node, cfg LangevinConfig, observe func(step int, e *Node), noise func(step int) *Node) *Node {
	mustValid(cfg)
	s := cfg.StepSize
	x := x0
	for step := range cfg.Steps {
		e, grad := EnergyGradient(energy, x)
		if observe != nil {
			observe(step, e)
		}
		x = Sub(x, MulScalar(grad, s*s/2))
		if !cfg.NoNoise {
			x = Add(x, MulScalar(noise(step), s))
		}
	}
	return x
}
