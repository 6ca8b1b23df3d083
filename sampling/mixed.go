package sampling

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// MixedLayout says how a mixed row is encoded: Numeric values first, then
// one one-hot block of each categorical column, Categories[i] values
// wide (as table.Table.Encode writes them).
type MixedLayout struct {
	Numeric    int
	Categories []int
}

// Width is the values of an encoded row.
func (l MixedLayout) Width() int {
	w := l.Numeric
	for _, k := range l.Categories {
		w += k
	}
	return w
}

// MixedSweeps runs sweeps of an exact sampler of p(x) ∝ exp(−E(x)) over
// mixed rows x0 [B, Width]: in each sweep every categorical column in turn
// is drawn from its exact conditional given the rest (K energies for K
// categories, a Gibbs update), then malaSteps MALA proposals move the
// numeric values with the categories fixed. It returns the final rows
// (gradients stopped) and the MALA acceptance rate of each chain [B] (0
// without numeric values or MALA steps).
func MixedSweeps(ctx *context.Context, energy losses.EnergyFn, x0 *Node, layout MixedLayout, stepSize *Node, sweeps, malaSteps int) (x, acceptance *Node) {
	b := x0.Shape().Dimensions[0]
	if x0.Rank() != 2 || x0.Shape().Dimensions[1] != layout.Width() || sweeps < 0 || malaSteps < 0 {
		panic(fmt.Errorf("sampling: mixed sweeps over rows of shape %s, %d sweeps of %d MALA steps; want [batch, %d] and counts ≥ 0", x0.Shape(), sweeps, malaSteps, layout.Width()))
	}
	x = StopGradient(x0)
	accepted := Zeros(x0.Graph(), shapes.Make(x0.DType(), b))
	for range sweeps {
		at := layout.Numeric
		for _, k := range layout.Categories {
			x = gibbsColumn(ctx, energy, x, at, k)
			at += k
		}
		if layout.Numeric == 0 || malaSteps == 0 {
			continue
		}
		numeric := SliceAxis(x, 1, AxisRange(0, layout.Numeric))
		rest := SliceAxis(x, 1, AxisRange(layout.Numeric, layout.Width()))
		onNumbers := func(v *Node) *Node { return energy(Concatenate([]*Node{v, rest}, 1)) }
		moved, rate := MALASteps(ctx, onNumbers, numeric, stepSize, malaSteps)
		x = Concatenate([]*Node{moved, rest}, 1)
		accepted = Add(accepted, rate)
	}
	if sweeps > 0 && layout.Numeric > 0 && malaSteps > 0 {
		accepted = DivScalar(accepted, float64(sweeps))
	}
	return StopGradient(x), accepted
}

// gibbsColumn draws the categorical column whose one-hot block starts at
// value at and is k wide from its exact conditional (CategoryLogits) by a
// Gumbel-max draw.
func gibbsColumn(ctx *context.Context, energy losses.EnergyFn, x *Node, at, k int) *Node {
	g, b, w := x.Graph(), x.Shape().Dimensions[0], x.Shape().Dimensions[1]
	logits := CategoryLogits(energy, x, at, k)
	u := ctx.RandomUniform(g, shapes.Make(x.DType(), b, k))
	gumbel := Neg(Log(Neg(Log(u))))
	choice := ArgMax(Add(logits, gumbel), 1, dtypes.Int32)
	var parts []*Node
	if at > 0 {
		parts = append(parts, SliceAxis(x, 1, AxisRange(0, at)))
	}
	parts = append(parts, OneHot(choice, k, x.DType()))
	if at+k < w {
		parts = append(parts, SliceAxis(x, 1, AxisRange(at+k, w)))
	}
	return Concatenate(parts, 1)
}

// CategoryLogits returns −E of each row of x [B, W] with its categorical
// column at values at…at+k (one-hot) set to each of the k categories in
// turn [B, k], gradients stopped: a softmax of them is the column's exact
// conditional p(c | the rest) ∝ exp(−E) — the Gibbs update's law, and the
// energy's classification of a categorical target column.
func CategoryLogits(energy losses.EnergyFn, x *Node, at, k int) *Node {
	g, w := x.Graph(), x.Shape().Dimensions[1]
	if at < 0 || k < 1 || at+k > w {
		panic(fmt.Errorf("sampling: categorical column at %d of %d categories in rows of %d values", at, k, w))
	}
	position := Iota(g, shapes.Make(dtypes.Int32, 1, w), 1)
	inBlock := And(GreaterOrEqual(position, Const(g, int32(at))), LessThan(position, Const(g, int32(at+k))))
	cleared := Mul(x, ConvertDType(LogicalNot(inBlock), x.DType())) // [B, W]
	var energies []*Node
	for c := range k {
		oneHot := ConvertDType(Equal(position, Const(g, int32(at+c))), x.DType())
		energies = append(energies, InsertAxes(StopGradient(energy(Add(cleared, oneHot))), 1))
	}
	return Neg(Concatenate(energies, 1))
}
