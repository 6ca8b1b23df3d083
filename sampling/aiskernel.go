package sampling

import (
	"math"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"gonum.org/v1/gonum/floats"

	"github.com/edlebm/edlebm/losses"
)

// stepGain is how fast the pilot moves log(step) toward the target
// acceptance after each block: log s += stepGain·(acceptance − target).
const stepGain = 1.5

// metricKernel is MALA or HMC in the coordinates z of a preconditioner,
// x = m + L z: the transitions see the energy z ↦ E(m + L z), so that
// directions of every scale move alike. A temperature's parameters are
// the step, then m and L (diagonal: its diagonal; full: L and L⁻¹, row by
// row), which the pilot sets to the chains' mean and covariance.
type metricKernel struct {
	cfg AISConfig
	dim int
}

// preconditioned is AIS's kernel for cfg, starting from the base's
// covariance as the metric.
func preconditioned(base *gaussianBase, cfg AISConfig) Kernel {
	k := &metricKernel{cfg: cfg, dim: base.dim}
	d := base.dim
	step := cfg.StepSize
	if step == 0 {
		step = 1 // the whitened base's scale
		if cfg.Metric == MetricIdentity {
			step = base.l[0]
		}
	}
	initial := []float64{step}
	switch cfg.Metric {
	case MetricDiagonal:
		initial = append(initial, base.mean...)
		for i := range d { // the base's standard deviations
			initial = append(initial, floats.Norm(base.l[i*d:(i+1)*d], 2))
		}
	case MetricFull:
		initial = slices.Concat(initial, base.mean, base.l, base.lInv)
	}
	cost := cfg.Transitions
	if cfg.Kernel == KernelHMC {
		cost *= cfg.LeapfrogSteps
	}
	return Kernel{Params: len(initial), Initial: initial, Move: k.move, Adapt: k.adapt, Cost: cost}
}

// move runs the temperature's transitions in the preconditioner's
// coordinates.
func (k *metricKernel) move(ctx *context.Context, annealed losses.EnergyFn, x, params *Node) (next, acceptance *Node) {
	d := k.dim
	part := func(from, n int) *Node { return Slice(params, AxisRange(from, from+n)) }
	step := Reshape(part(0, 1))
	z, toX := x, func(z *Node) *Node { return z } // MetricIdentity
	linear := toX
	switch k.cfg.Metric {
	case MetricDiagonal:
		m, l := InsertAxes(part(1, d), 0), InsertAxes(part(1+d, d), 0)
		z, linear = Div(Sub(x, m), l), func(z *Node) *Node { return Mul(z, l) }
		toX = func(z *Node) *Node { return Add(Mul(z, l), m) }
	case MetricFull:
		m := InsertAxes(part(1, d), 0)
		l, lInv := Reshape(part(1+d, d*d), d, d), Reshape(part(1+d+d*d, d*d), d, d)
		z, linear = Dot(Sub(x, m), Transpose(lInv, 0, 1)), func(z *Node) *Node { return Dot(z, Transpose(l, 0, 1)) }
		toX = func(z *Node) *Node { return Add(linear(z), m) }
	}
	energy := func(z *Node) *Node { return annealed(toX(z)) }
	var moved *Node
	if k.cfg.Kernel == KernelHMC {
		moved, acceptance = HMCSteps(ctx, energy, z, step, k.cfg.LeapfrogSteps, k.cfg.Transitions)
	} else {
		moved, acceptance = MALASteps(ctx, energy, z, step, k.cfg.Transitions)
	}
	if k.cfg.Metric == MetricIdentity {
		return moved, acceptance
	}
	// x plus the move, rather than toX(moved): a rejected chain keeps x
	// exactly, not x through L and L⁻¹ and back.
	return Add(x, linear(Sub(moved, z))), acceptance
}

// adapt moves the step toward the target acceptance (unless it is fixed)
// and sets the metric to the chains' weighted mean and covariance (its
// diagonal only where the chains' effective number is under twice the
// dimensions: shrinking a covariance toward its diagonal, as estimators
// tuned for its error do, misplaces the narrow directions that a
// preconditioner is for).
func (k *metricKernel) adapt(chains, w []float64, acceptance float64, p []float64) ([]float64, error) {
	d, next := k.dim, slices.Clone(p)
	if k.cfg.StepSize == 0 {
		next[0] = min(max(p[0]*math.Exp(stepGain*(acceptance-k.cfg.TargetAcceptance)), 1e-10), 1e3)
	}
	if k.cfg.Metric == MetricIdentity {
		return next, nil
	}
	mean, cov := weightedMoments(chains, w, d)
	copy(next[1:1+d], mean)
	top := 0.0
	for i := range d {
		top = max(top, cov[i*d+i])
	}
	floor := 1e-12*top + 1e-300
	if k.cfg.Metric == MetricDiagonal {
		for i := range d {
			next[1+d+i] = math.Sqrt(max(cov[i*d+i], floor))
		}
		return next, nil
	}
	if effectiveSampleSize(w) < 2*float64(d) { // too few chains for d² values: their variances only
		for i := range d {
			for j := range d {
				if i != j {
					cov[i*d+j] = 0
				}
			}
		}
	}
	for i := range d {
		cov[i*d+i] = max(cov[i*d+i], floor)
	}
	l, lInv, err := cholesky(cov, d)
	if err != nil { // keep the last metric
		return next, nil
	}
	copy(next[1+d:1+d+d*d], l)
	copy(next[1+d+d*d:], lInv)
	return next, nil
}

// weightedMoments is the mean (d) and covariance (d×d) of chains (n·d
// values) under the normalised weights w.
func weightedMoments(chains, w []float64, d int) (mean, cov []float64) {
	mean, cov = make([]float64, d), make([]float64, d*d)
	for c, wc := range w {
		for i := range d {
			mean[i] += wc * chains[c*d+i]
		}
	}
	dev := make([]float64, d)
	for c, wc := range w {
		for i := range d {
			dev[i] = chains[c*d+i] - mean[i]
		}
		for i := range d {
			for j := range d {
				cov[i*d+j] += wc * dev[i] * dev[j]
			}
		}
	}
	return mean, cov
}
