package losses

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// EDConfig holds the settings of energy discrepancy with Gaussian
// perturbation (the paper's main loss).
type EDConfig struct {
	// T is the variance t of each of the two Gaussian perturbation steps.
	T float64
	// M is the number of negative samples per example.
	M int
	// W is the stabiliser w ≥ 0 added inside the logarithm; 0 means none.
	W float64
	// DropLogM drops the constant −log M, as the authors' code does. The
	// gradient is the same either way; the default (false) follows the paper
	// so the loss value estimates the energy discrepancy itself.
	DropLogM bool
}

// DefaultToyED is the paper's setting for the 2-D density experiments.
var DefaultToyED = EDConfig{T: 1, M: 4, W: 1}

// DefaultLatentED is the paper's setting for the latent EBM prior.
var DefaultLatentED = EDConfig{T: 0.25, M: 16, W: 1}

// Validate reports the first invalid setting, naming it and its value.
func (c EDConfig) Validate() error {
	if err := positive("energy discrepancy t (perturbation variance)", c.T); err != nil {
		return err
	}
	return validateMW(c.M, c.W)
}

func validateMW(m int, w float64) error {
	if m < 1 {
		return fmt.Errorf("energy discrepancy M = %d: must be at least 1 negative sample per example", m)
	}
	if !(w >= 0) || math.IsInf(w, 1) {
		return fmt.Errorf("energy discrepancy w = %v: must be a finite number ≥ 0 (0 disables the stabiliser)", w)
	}
	return nil
}

// EnergyDiscrepancy returns the Gaussian-perturbation energy discrepancy
// loss of energy on the batch x, drawing the perturbation noise from ctx's
// random number generator:
//
//	x̄ᵢ = xᵢ + √t ξᵢ,  yᵢⱼ = x̄ᵢ + √t ξ′ᵢⱼ,
//	L = meanᵢ log( w/M + (1/M) Σⱼ exp(E(xᵢ) − E(yᵢⱼ)) ).
//
// The energy is evaluated once, on all B·(1+M) points in one batch.
func EnergyDiscrepancy(ctx *context.Context, energy EnergyFn, x *Node, cfg EDConfig) *Node {
	mustValid(cfg)
	g := x.Graph()
	xi := ctx.RandomNormal(g, x.Shape())
	xiPrime := ctx.RandomNormal(g, perturbationShape(x, cfg.M))
	return EnergyDiscrepancyWithNoise(energy, x, xi, xiPrime, cfg)
}

// EnergyDiscrepancyWithNoise is EnergyDiscrepancy with the standard normal
// noise given: xi shaped like x, xiPrime shaped [B, M, ...].
func EnergyDiscrepancyWithNoise(energy EnergyFn, x, xi, xiPrime *Node, cfg EDConfig) *Node {
	mustValid(cfg)
	checkNoiseShapes(x, xi, xiPrime, cfg.M)
	sqrtT := math.Sqrt(cfg.T)
	xBar := Add(x, MulScalar(xi, sqrtT))
	y := Add(InsertAxes(xBar, 1), MulScalar(xiPrime, sqrtT))
	return discrepancyFromNegatives(energy, x, y, cfg.M, cfg.W, cfg.DropLogM)
}

// discrepancyFromNegatives evaluates the w-stabilised logsumexp form shared
// by the Gaussian and Bernoulli discrepancies, given negatives y [B, M, ...].
func discrepancyFromNegatives(energy EnergyFn, x, y *Node, m int, w float64, dropLogM bool) *Node {
	g := x.Graph()
	batch := x.Shape().Dimensions[0]
	exampleDims := x.Shape().Dimensions[1:]

	// Column 0 of each row holds the data point, columns 1..M its negatives.
	points := Concatenate([]*Node{InsertAxes(x, 1), y}, 1)
	energies := callEnergy(energy, Reshape(points, append([]int{batch * (1 + m)}, exampleDims...)...))
	energies = Reshape(energies, batch, 1+m)

	isData := Equal(Iota(g, shapes.Make(dtypes.Int32, batch, 1+m), 1), ScalarZero(g, dtypes.Int32))
	eData := ReduceSum(Where(isData, energies, ZerosLike(energies)), 1)
	// Column 0 is replaced by log w (−∞ when w = 0): logsumexp over
	// [log w, E(x) − E(y₁), …, E(x) − E(y_M)] without slicing.
	logits := Where(isData, Scalar(g, x.DType(), math.Log(w)), Sub(InsertAxes(eData, 1), energies))
	perExample := logSumExp(logits, 1)
	if !dropLogM {
		perExample = AddScalar(perExample, -math.Log(float64(m)))
	}
	return ReduceAllMean(perExample)
}

// perturbationShape is [B, M, ...] for x shaped [B, ...].
func perturbationShape(x *Node, m int) shapes.Shape {
	s := x.Shape()
	dims := append([]int{s.Dimensions[0], m}, s.Dimensions[1:]...)
	return shapes.Make(s.DType, dims...)
}

func checkNoiseShapes(x, xi, xiPrime *Node, m int) {
	if !xi.Shape().Equal(x.Shape()) {
		panicf("losses: noise ξ has shape %s, want the data's shape %s", xi.Shape(), x.Shape())
	}
	if want := perturbationShape(x, m); !xiPrime.Shape().Equal(want) {
		panicf("losses: noise ξ′ has shape %s, want %s (batch, M, example)", xiPrime.Shape(), want)
	}
}

// validator is any config with a Validate method.
type validator interface{ Validate() error }

// mustValid panics with the config's validation error: graph-building
// functions report errors by panicking, as GoMLX does.
func mustValid(cfg validator) {
	if err := cfg.Validate(); err != nil {
		panicf("losses: %v", err)
	}
}
