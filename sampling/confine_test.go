package sampling

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
)

// TestConfinedSweepsSampleTheRestrictedLaw runs the mixed sampler on rows
// (x, off, at) of the energy E(x, off) = −x, E(x, at) = x²/2 — whose law
// has no normaliser: off it, x runs to +∞ — confined to 0 ≤ x ≤ 1 where
// the row is off, x free where it is at (a table's spike). The restricted
// law is exact: P(at) = √(2π)/(√(2π) + e − 1); x | off has density
// eˣ/(e − 1) on [0, 1], mean 1/(e − 1), second moment (e − 2)/(e − 1);
// x | at ~ N(0, 1). 4,000 chains from x = ½, off.
func TestConfinedSweepsSampleTheRestrictedLaw(t *testing.T) {
	const chains = 4000
	layout := MixedLayout{Numeric: 1, Categories: []int{2}}
	leaky := func(row *Node) *Node {
		g := row.Graph() // values picked by products, not slices (SimpleGo has no Pad, a slice's gradient)
		value := func(i int) *Node {
			pick := [][]float64{{0}, {0}, {0}}
			pick[i][0] = 1
			return MatMul(row, Const(g, pick))
		}
		x, off, at := value(0), value(1), value(2)
		return Reshape(Add(Mul(off, Neg(x)), Mul(at, DivScalar(Square(x), 2))), -1)
	}
	energy := Confine(leaky, Box{Lo: []float64{0}, Hi: []float64{1}, FreeAt: []int{2}})
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(9); err != nil {
		t.Fatal(err)
	}
	exec := context.MustNewExec(testutil.Backend(), ctx, func(ctx *context.Context, x0 *Node) []*Node {
		x, acc := MixedSweeps(ctx, energy, x0, layout, Scalar(x0.Graph(), x0.DType(), 0.8), 40, 3)
		return []*Node{x, acc}
	})
	start := make([]float64, chains*3)
	for i := range chains {
		start[i*3], start[i*3+1] = 0.5, 1
	}
	rows := tensors.MustCopyFlatData[float64](exec.MustExec(tensors.FromFlatDataAndDimensions(start, chains, 3))[0])
	var atN, offN, offSum, offSq, atSum, atSq float64
	for i := range chains {
		x, at := rows[i*3], rows[i*3+2]
		if at == 1 {
			atN, atSum, atSq = atN+1, atSum+x, atSq+x*x
			continue
		}
		if x < 0 || x > 1 {
			t.Fatalf("chain %d off the spike at x = %v, outside [0, 1]", i, x)
		}
		offN, offSum, offSq = offN+1, offSum+x, offSq+x*x
	}
	e := math.E
	pAt := math.Sqrt(2*math.Pi) / (math.Sqrt(2*math.Pi) + e - 1)
	if got, se := atN/chains, math.Sqrt(pAt*(1-pAt)/chains); math.Abs(got-pAt) > 4.5*se {
		t.Errorf("P(at): %.4f of the chains, exact %.4f (± %.4f)", got, pAt, se)
	}
	mean, second := 1/(e-1), (e-2)/(e-1)
	sd := math.Sqrt(second - mean*mean)
	if got := offSum / offN; math.Abs(got-mean) > 4.5*sd/math.Sqrt(offN) {
		t.Errorf("x | off: mean %.4f over %v chains, exact %.4f", got, offN, mean)
	}
	if got := offSq / offN; math.Abs(got-second) > 0.02 {
		t.Errorf("x | off: second moment %.4f, exact %.4f", got, second)
	}
	if m, v := atSum/atN, atSq/atN-(atSum/atN)*(atSum/atN); math.Abs(m) > 4.5/math.Sqrt(atN) || math.Abs(v-1) > 4.5*math.Sqrt(2/atN) {
		t.Errorf("x | at: mean %.3f, variance %.3f over %v chains; want 0 and 1", m, v, atN)
	}
}
