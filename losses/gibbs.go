package losses

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// GibbsSweep runs one systematic-scan Gibbs sweep of p(x) ∝ exp(−E(x)) over
// the binary vectors x [B, D] (values 0 and 1): bit 0, then bit 1, …, bit
// D−1, each drawn from its conditional given the others,
// p(xᵢ = 1 | x₋ᵢ) = σ(E(x, xᵢ=0) − E(x, xᵢ=1)), two energy evaluations
// per bit. No gradient flows through the sweep. Discrete contrastive
// divergence draws its negatives with it.
func GibbsSweep(ctx *context.Context, energy EnergyFn, x *Node) *Node {
	if x.Rank() != 2 {
		panicf("losses: Gibbs sweep over x of shape %s; want [batch, bits]", x.Shape())
	}
	g, d := x.Graph(), x.Shape().Dimensions[1]
	x = StopGradient(x)
	for i := range d {
		// One-hot row selecting bit i, broadcast over the batch.
		oneHot := ConvertDType(Equal(Iota(g, shapes.Make(x.DType(), 1, d), 1), Scalar(g, x.DType(), float64(i))), x.DType())
		off := Mul(x, OneMinus(oneHot))
		on := Add(off, oneHot)
		pOn := Sigmoid(StopGradient(Sub(callEnergy(energy, off), callEnergy(energy, on))))
		u := ctx.RandomUniform(g, pOn.Shape())
		bit := ConvertDType(LessThan(u, pOn), x.DType())
		x = Add(off, Mul(InsertAxes(bit, -1), oneHot))
	}
	return x
}
