package losses

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// CDConfig holds the settings of contrastive divergence.
type CDConfig struct {
	// Langevin configures the chains that produce the negative samples.
	Langevin LangevinConfig
	// Reg is α in the energy-magnitude regulariser α·mean(E(x⁺)² + E(x⁻)²);
	// 0 disables it.
	Reg float64
}

// DefaultToyCD is the setting of the 2-D density experiments: 10 Langevin
// steps from the data with ε = 0.01 (s = 0.1) and α = 0.3.
var DefaultToyCD = CDConfig{Langevin: LangevinConfig{StepSize: 0.1, Steps: 10}, Reg: 0.3}

// Validate reports the first invalid setting, naming it and its value.
func (c CDConfig) Validate() error {
	if err := c.Langevin.Validate(); err != nil {
		return fmt.Errorf("contrastive divergence: %w", err)
	}
	if !(c.Reg >= 0) || math.IsInf(c.Reg, 1) {
		return fmt.Errorf("contrastive divergence regulariser α = %v: must be a finite number ≥ 0", c.Reg)
	}
	return nil
}

// ContrastiveDivergence returns the CD loss of energy on the batch xPos,
// with negatives from Langevin chains started at the data.
func ContrastiveDivergence(ctx *context.Context, energy EnergyFn, xPos *Node, cfg CDConfig) *Node {
	return ContrastiveDivergenceFrom(ctx, energy, xPos, xPos, cfg)
}

// ContrastiveDivergenceFrom is ContrastiveDivergence with the chains started
// at xInit (for instance noise, or a persistent buffer) instead of the data.
func ContrastiveDivergenceFrom(ctx *context.Context, energy EnergyFn, xPos, xInit *Node, cfg CDConfig) *Node {
	mustValid(cfg)
	xNeg := Langevin(ctx, energy, xInit, cfg.Langevin)
	return ContrastiveDivergenceWithNegatives(energy, xPos, xNeg, cfg.Reg)
}

// ContrastiveDivergenceWithNegatives returns
// mean E(x⁺) − mean E(x⁻) + reg·mean(E(x⁺)² + E(x⁻)²)
// for given negative samples xNeg (treated as constants). Both batches go
// through the energy in one call.
func ContrastiveDivergenceWithNegatives(energy EnergyFn, xPos, xNeg *Node, reg float64) *Node {
	if !xPos.Shape().Equal(xNeg.Shape()) {
		panicf("losses: negatives have shape %s, want the positives' shape %s", xNeg.Shape(), xPos.Shape())
	}
	batch := xPos.Shape().Dimensions[0]
	both := Concatenate([]*Node{xPos, StopGradient(xNeg)}, 0)
	// Row 0 holds the positives' energies, row 1 the negatives'.
	energies := Reshape(callEnergy(energy, both), 2, batch)
	sign := Const(xPos.Graph(), [][]float64{{1}, {-1}})
	loss := ReduceAllMean(Mul(energies, ConvertDType(sign, xPos.DType())))
	loss = MulScalar(loss, 2) // mean over 2B rows → difference of two means
	if reg > 0 {
		loss = Add(loss, MulScalar(ReduceAllMean(Square(energies)), 2*reg))
	}
	return loss
}
