package losses

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// ScoreMatching returns the exact Hyvärinen score-matching loss of energy on
// the batch x (log p = −E):
//
//	L = meanᵢ [ ½‖∇E(xᵢ)‖² − ΔE(xᵢ) ].
//
// The Laplacian takes one extra backward pass per data dimension, so this is
// for low-dimensional data; see SlicedScoreMatching for high dimension.
func ScoreMatching(energy EnergyFn, x *Node) *Node {
	g := x.Graph()
	batch, dim := x.Shape().Dimensions[0], exampleSize(x)
	flat := Reshape(x, batch, dim)
	_, grad := EnergyGradient(func(f *Node) *Node { return energy(Reshape(f, x.Shape().Dimensions...)) }, flat)

	laplacian := ZerosLike(ReduceSum(grad, 1))
	for d := range dim {
		// ∂²E/∂x_d² through a one-hot mask: slicing would need Slice's
		// gradient, which SimpleGo cannot compute.
		oneHot := OneHot(Const(g, []int32{int32(d)}), dim, x.DType())
		hessianRow := Gradient(ReduceAllSum(Mul(grad, oneHot)), flat)[0]
		laplacian = Add(laplacian, ReduceSum(Mul(hessianRow, oneHot), 1))
	}
	halfSquaredNorm := MulScalar(ReduceSum(Square(grad), 1), 0.5)
	return ReduceAllMean(Sub(halfSquaredNorm, laplacian))
}

// SlicedSMConfig holds the settings of sliced score matching.
type SlicedSMConfig struct {
	// Projections is the number of random directions v per example.
	Projections int
	// Rademacher draws v from {−1, +1} instead of N(0, I).
	Rademacher bool
	// VarianceReduced replaces ½(vᵀ∇E)² by its expectation ½‖∇E‖² (SSM-VR).
	VarianceReduced bool
}

// Validate reports the first invalid setting, naming it and its value.
func (c SlicedSMConfig) Validate() error {
	if c.Projections < 1 {
		return fmt.Errorf("sliced score matching projections = %d: must be at least 1", c.Projections)
	}
	return nil
}

// SlicedScoreMatching returns the sliced (Hutchinson) score-matching loss,
// an unbiased estimate of ScoreMatching that costs one Hessian-vector
// product per projection instead of one backward pass per dimension:
//
//	L = meanᵢ meanₖ [ −vₖᵀ ∇²E(xᵢ) vₖ + ½ (vₖᵀ ∇E(xᵢ))² ].
func SlicedScoreMatching(ctx *context.Context, energy EnergyFn, x *Node, cfg SlicedSMConfig) *Node {
	mustValid(cfg)
	g := x.Graph()
	shape := withLeadingAxes(x.Shape(), cfg.Projections)
	var v *Node
	if cfg.Rademacher {
		half := Scalar(g, x.DType(), 0.5)
		v = AddScalar(MulScalar(ctx.RandomBernoulli(half, shape), 2), -1)
	} else {
		v = ctx.RandomNormal(g, shape)
	}
	return SlicedScoreMatchingWithProjections(energy, x, v, cfg.VarianceReduced)
}

// SlicedScoreMatchingWithProjections is SlicedScoreMatching with the
// projection directions given, shaped [K, B, ...].
func SlicedScoreMatchingWithProjections(energy EnergyFn, x, v *Node, varianceReduced bool) *Node {
	k := v.Shape().Dimensions[0]
	if want := withLeadingAxes(x.Shape(), k); !v.Shape().Equal(want) {
		panicf("losses: projections have shape %s, want %s", v.Shape(), want)
	}
	batch := x.Shape().Dimensions[0]
	// All K projections in one pass: replicate the batch K times.
	repeatedDims := append([]int{k * batch}, x.Shape().Dimensions[1:]...)
	xs := Reshape(BroadcastToDims(InsertAxes(x, 0), v.Shape().Dimensions...), repeatedDims...)
	vs := Reshape(v, repeatedDims...)

	_, grad := EnergyGradient(energy, xs)
	gradV := sumPerExample(Mul(grad, vs))
	hessianV := Gradient(ReduceAllSum(gradV), xs)[0]
	vHv := sumPerExample(Mul(hessianV, vs))

	var fit *Node
	if varianceReduced {
		fit = MulScalar(sumPerExample(Square(grad)), 0.5)
	} else {
		fit = MulScalar(Square(gradV), 0.5)
	}
	return ReduceAllMean(Sub(fit, vHv))
}

// DenoisingScoreMatching returns the denoising score-matching loss with
// Gaussian noise of standard deviation sigma (Vincent 2011), the paper's
// comparison baseline: with x̃ = x + σξ,
//
//	L = meanᵢ ½‖−∇E(x̃ᵢ) + ξᵢ/σ‖²,
//
// the score of the noised model matched to the score −(x̃ − x)/σ² of the
// noising kernel.
func DenoisingScoreMatching(ctx *context.Context, energy EnergyFn, x *Node, sigma float64) *Node {
	if err := positive("denoising score matching σ", sigma); err != nil {
		panicf("losses: %v", err)
	}
	return DenoisingScoreMatchingWithNoise(energy, x, ctx.RandomNormal(x.Graph(), x.Shape()), sigma)
}

// DenoisingScoreMatchingWithNoise is DenoisingScoreMatching with the
// standard normal noise ξ given, shaped like x.
func DenoisingScoreMatchingWithNoise(energy EnergyFn, x, xi *Node, sigma float64) *Node {
	if !xi.Shape().Equal(x.Shape()) {
		panicf("losses: noise has shape %s, want the data's shape %s", xi.Shape(), x.Shape())
	}
	noisy := Add(x, MulScalar(xi, sigma))
	_, grad := EnergyGradient(energy, noisy)
	residual := Sub(MulScalar(xi, 1/sigma), grad)
	return ReduceAllMean(MulScalar(sumPerExample(Square(residual)), 0.5))
}
