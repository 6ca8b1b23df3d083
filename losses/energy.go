package losses

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// EnergyFn maps a batch of examples x, shaped [B, ...], to one energy per
// example, shaped [B]. Lower energy means higher density: p(x) ∝ exp(−E(x)).
type EnergyFn func(x *Node) *Node

// callEnergy evaluates energy on x and checks it returned one value per example.
func callEnergy(energy EnergyFn, x *Node) *Node {
	e := energy(x)
	batch := x.Shape().Dimensions[0]
	if e.Rank() != 1 || e.Shape().Dimensions[0] != batch {
		panicf("losses: energy function returned shape %s for a batch of %d examples; want [%d]",
			e.Shape(), batch, batch)
	}
	return e
}

// EnergyGradient returns ∇ₓ E(x) for each example, shaped like x. Examples
// are independent, so the gradient of the summed energy is the per-example
// gradient. x may be gradient-stopped: the gradient is taken with respect
// to an identity of it, as GoMLX's gradient with respect to a StopGradient
// node is zero (and GoMLX's plain Identity has no gradient).
func EnergyGradient(energy EnergyFn, x *Node) (e, grad *Node) {
	x = IdentityWithCustomGradient(x, func(_, v *Node) *Node { return v })
	e = callEnergy(energy, x)
	grad = Gradient(ReduceAllSum(e), x)[0]
	return e, grad
}

// sumPerExample reduces every axis but the batch axis.
func sumPerExample(x *Node) *Node {
	if x.Rank() == 1 {
		return x
	}
	axes := make([]int, x.Rank()-1)
	for i := range axes {
		axes[i] = i + 1
	}
	return ReduceSum(x, axes...)
}

// exampleSize is the number of scalars in one example of x.
func exampleSize(x *Node) int {
	return x.Shape().Size() / x.Shape().Dimensions[0]
}

// withLeadingAxes returns shape s with extra leading dimensions.
func withLeadingAxes(s shapes.Shape, dims ...int) shapes.Shape {
	return shapes.Make(s.DType, append(dims, s.Dimensions...)...)
}

// positive checks that a named setting is > 0 and finite.
func positive(name string, v float64) error {
	if !(v > 0) || v != v || v > 1e300 {
		return fmt.Errorf("%s = %v: must be a finite number > 0", name, v)
	}
	return nil
}

// panicf reports a graph-building error the GoMLX way, by panicking with an
// error; callers at API boundaries recover it.
func panicf(format string, args ...any) {
	panic(fmt.Errorf(format, args...))
}
