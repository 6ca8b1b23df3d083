package losses

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// BernoulliEDConfig holds the settings of energy discrepancy with Bernoulli
// (bit-flip) perturbation, for binary data (the paper's appendix).
type BernoulliEDConfig struct {
	// Epsilon is the probability of flipping each bit, in (0, 1).
	Epsilon float64
	// M is the number of negative samples per example.
	M int
	// W is the stabiliser w ≥ 0; 0 means none.
	W float64
	// DropLogM drops the constant −log M, as in EDConfig.
	DropLogM bool
}

// Validate reports the first invalid setting, naming it and its value.
func (c BernoulliEDConfig) Validate() error {
	if !(c.Epsilon > 0 && c.Epsilon < 1) {
		return fmt.Errorf("Bernoulli energy discrepancy ε = %v: must be a flip probability in (0, 1)", c.Epsilon)
	}
	return validateMW(c.M, c.W)
}

// BernoulliEnergyDiscrepancy returns the energy discrepancy of energy on the
// binary batch x (values 0 or 1) with Bernoulli perturbation:
// yᵢⱼ = xᵢ ⊕ ξᵢ ⊕ ξ′ᵢⱼ with every bit of ξ, ξ′ flipped with probability ε,
// in the same w-stabilised logsumexp form as EnergyDiscrepancy.
func BernoulliEnergyDiscrepancy(ctx *context.Context, energy EnergyFn, x *Node, cfg BernoulliEDConfig) *Node {
	mustValid(cfg)
	g := x.Graph()
	prob := Scalar(g, x.DType(), cfg.Epsilon)
	xi := ctx.RandomBernoulli(prob, x.Shape())
	xiPrime := ctx.RandomBernoulli(prob, perturbationShape(x, cfg.M))
	return BernoulliEnergyDiscrepancyWithNoise(energy, x, xi, xiPrime, cfg)
}

// BernoulliEnergyDiscrepancyWithNoise is BernoulliEnergyDiscrepancy with the
// flip masks given (values 0 or 1): xi shaped like x, xiPrime [B, M, ...].
func BernoulliEnergyDiscrepancyWithNoise(energy EnergyFn, x, xi, xiPrime *Node, cfg BernoulliEDConfig) *Node {
	mustValid(cfg)
	checkNoiseShapes(x, xi, xiPrime, cfg.M)
	y := xor(InsertAxes(xor(x, xi), 1), xiPrime)
	return discrepancyFromNegatives(energy, x, y, cfg.M, cfg.W, cfg.DropLogM)
}

// xor of 0/1-valued tensors: a + b − 2ab.
func xor(a, b *Node) *Node {
	return Sub(Add(a, b), MulScalar(Mul(a, b), 2))
}
