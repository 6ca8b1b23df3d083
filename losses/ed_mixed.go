package losses

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// CategoricalColumn is one categorical column of a mixed row: its number
// of categories, the graph its perturbation moves on, and the heat
// equation's time.
type CategoricalColumn struct {
	Categories int
	Graph      CategoryGraph
	T          float64
}

// MixedEDConfig holds the settings of energy discrepancy on mixed rows
// (Schröder, Ou, Li, Duncan, NeurIPS 2024): Numeric values first, each
// perturbed by Gaussian noise of variance T twice as EDConfig does, then
// the Columns one-hot encoded, each perturbed twice by its heat kernel.
type MixedEDConfig struct {
	Numeric int
	T       float64
	Columns []CategoricalColumn
	M       int
	W       float64
	// DropLogM: as EDConfig.DropLogM.
	DropLogM bool
}

// Width is the values of an encoded row: the numeric ones and every
// column's one-hot block.
func (c MixedEDConfig) Width() int {
	w := c.Numeric
	for _, col := range c.Columns {
		w += col.Categories
	}
	return w
}

// Validate reports the first invalid setting, naming it and its value.
func (c MixedEDConfig) Validate() error {
	if c.Numeric < 0 || c.Numeric+len(c.Columns) == 0 {
		return fmt.Errorf("mixed energy discrepancy: %d numeric and %d categorical columns: want at least one column", c.Numeric, len(c.Columns))
	}
	if c.Numeric > 0 {
		if err := positive("mixed energy discrepancy t (numeric perturbation variance)", c.T); err != nil {
			return err
		}
	}
	for i, col := range c.Columns {
		if _, err := HeatKernel(col.Graph, col.Categories, col.T); err != nil || col.Categories < 2 || !(col.T > 0) {
			return fmt.Errorf("mixed energy discrepancy: categorical column %d: %d categories on %q at time %v: want ≥ 2 categories, a graph of %v and a time > 0", i+1, col.Categories, col.Graph, col.T, CategoryGraphs)
		}
	}
	return validateMW(c.M, c.W)
}

// MixedEnergyDiscrepancy returns energy discrepancy's loss of energy on the
// encoded mixed rows x [B, Width], drawing the perturbations from ctx's
// random number generator:
//
//	numeric:  x̄ = x + √t ξ,  yⱼ = x̄ + √t ξ′ⱼ;
//	category: x̄ ~ q_t(·|x),  yⱼ ~ q_t(·|x̄), each column apart;
//	L = meanᵢ log( w/M + (1/M) Σⱼ exp(E(xᵢ) − E(yᵢⱼ)) ).
func MixedEnergyDiscrepancy(ctx *context.Context, energy EnergyFn, x *Node, cfg MixedEDConfig) *Node {
	mustValid(cfg)
	g := x.Graph()
	b, c := x.Shape().Dimensions[0], len(cfg.Columns)
	var xi, xiPrime, u, uPrime *Node // none for a part without columns
	if cfg.Numeric > 0 {
		xi = ctx.RandomNormal(g, shapes.Make(x.DType(), b, cfg.Numeric))
		xiPrime = ctx.RandomNormal(g, shapes.Make(x.DType(), b, cfg.M, cfg.Numeric))
	}
	if c > 0 {
		u = ctx.RandomUniform(g, shapes.Make(x.DType(), b, c))
		uPrime = ctx.RandomUniform(g, shapes.Make(x.DType(), b, cfg.M, c))
	}
	return MixedEnergyDiscrepancyWithNoise(energy, x, xi, xiPrime, u, uPrime, cfg)
}

// MixedEnergyDiscrepancyWithNoise is MixedEnergyDiscrepancy with the noise
// given: standard normal xi [B, Numeric] and xiPrime [B, M, Numeric];
// uniforms on [0, 1) u [B, C] and uPrime [B, M, C], C categorical columns,
// each category drawn by inverting its kernel row's cumulative sum. The
// noise of a part without columns is nil.
func MixedEnergyDiscrepancyWithNoise(energy EnergyFn, x, xi, xiPrime, u, uPrime *Node, cfg MixedEDConfig) *Node {
	mustValid(cfg)
	b, c := x.Shape().Dimensions[0], len(cfg.Columns)
	checkShape("x", x, b, cfg.Width())
	var parts []*Node
	if cfg.Numeric > 0 {
		checkShape("ξ", xi, b, cfg.Numeric)
		checkShape("ξ′", xiPrime, b, cfg.M, cfg.Numeric)
		sqrtT := math.Sqrt(cfg.T)
		xBar := Add(SliceAxis(x, 1, AxisRange(0, cfg.Numeric)), MulScalar(xi, sqrtT))
		parts = append(parts, Add(InsertAxes(xBar, 1), MulScalar(xiPrime, sqrtT)))
	}
	if c > 0 {
		checkShape("u", u, b, c)
		checkShape("u′", uPrime, b, cfg.M, c)
	}
	at := cfg.Numeric
	for i, col := range cfg.Columns {
		q := heatKernelNode(x.Graph(), x.DType(), col)
		oneHot := SliceAxis(x, 1, AxisRange(at, at+col.Categories))
		xBar := drawCategory(MatMul(oneHot, q), SliceAxis(u, 1, AxisElem(i)))                                  // [B, K]
		parts = append(parts, drawCategory(InsertAxes(MatMul(xBar, q), 1), SliceAxis(uPrime, 2, AxisElem(i)))) // [B, M, K]
		at += col.Categories
	}
	return discrepancyFromNegatives(energy, x, Concatenate(parts, 2), cfg.M, cfg.W, cfg.DropLogM)
}

// heatKernelNode is the column's q_t as a constant [K, K].
func heatKernelNode(g *Graph, dtype dtypes.DType, col CategoricalColumn) *Node {
	q, err := HeatKernel(col.Graph, col.Categories, col.T)
	if err != nil {
		panicf("losses: %v", err)
	}
	return ConvertDType(Reshape(Const(g, q), col.Categories, col.Categories), dtype)
}

// drawCategory returns one-hot draws [..., K] from the distributions probs
// [..., K] by the uniforms u [..., 1]: the first category whose cumulative
// probability exceeds u (the last when rounding leaves the sum below u).
func drawCategory(probs, u *Node) *Node {
	k := probs.Shape().Dimensions[probs.Rank()-1]
	below := ConvertDType(LessOrEqual(CumSum(probs, -1), u), dtypes.Int32)
	index := MinScalar(ReduceSum(below, -1), float64(k-1))
	return OneHot(index, k, probs.DType())
}

// checkShape panics unless x has the dimensions want.
func checkShape(name string, x *Node, want ...int) {
	if x == nil {
		panicf("losses: %s is nil, want dimensions %v", name, want)
	}
	if !shapes.Make(x.DType(), want...).Equal(x.Shape()) {
		panicf("losses: %s has shape %s, want dimensions %v", name, x.Shape(), want)
	}
}
