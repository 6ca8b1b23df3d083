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
	rows := confinedChains(t, Box{Lo: []float64{0}, Hi: []float64{1}, FreeAt: []int{2}}, chains, 15)
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

// leakyEnergy is E(x, off) = −x, E(x, at) = x²/2 on rows (x, off, at).
func leakyEnergy(row *Node) *Node {
	g := row.Graph() // values picked by products, not slices (SimpleGo has no Pad, a slice's gradient)
	value := func(i int) *Node {
		pick := [][]float64{{0}, {0}, {0}}
		pick[i][0] = 1
		return MatMul(row, Const(g, pick))
	}
	x, off, at := value(0), value(1), value(2)
	return Reshape(Add(Mul(off, Neg(x)), Mul(at, DivScalar(Square(x), 2))), -1)
}

// confinedChains runs the mixed sampler on leakyEnergy confined to box,
// sweeps of chains from x = ½, off, and returns the rows.
func confinedChains(t *testing.T, box Box, chains, sweeps int) []float64 {
	t.Helper()
	layout := MixedLayout{Numeric: 1, Categories: []int{2}}
	energy := Confine(leakyEnergy, box)
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(9); err != nil {
		t.Fatal(err)
	}
	exec := context.MustNewExec(testutil.Backend(), ctx, func(ctx *context.Context, x0 *Node) []*Node {
		x, acc := MixedSweeps(ctx, energy, x0, layout, Scalar(x0.Graph(), x0.DType(), 0.8), sweeps, 3)
		return []*Node{x, acc}
	})
	start := make([]float64, chains*3)
	for i := range chains {
		start[i*3], start[i*3+1] = 0.5, 1
	}
	return tensors.MustCopyFlatData[float64](exec.MustExec(tensors.FromFlatDataAndDimensions(start, chains, 3))[0])
}

// TestPinnedSweepsSampleTheConditionalLaw pins the category of
// TestConfinedSweepsSampleTheRestrictedLaw's rows: pinned at, chains
// started off all move to it and x follows N(0, 1), x | at's exact law
// (no box then); pinned off, with the box, none leaves it and x follows
// eˣ/(e − 1) on [0, 1]. 4,000 chains each, 12 sweeps.
func TestPinnedSweepsSampleTheConditionalLaw(t *testing.T) {
	const chains = 4000
	for _, tc := range []struct {
		name         string
		box          Box
		at           float64 // every chain's category
		mean, second float64
		lo, hi       float64 // x's range
	}{
		{"at", Box{Pinned: []int{2}}, 1, 0, 1, math.Inf(-1), math.Inf(1)},
		{"off", Box{Lo: []float64{0}, Hi: []float64{1}, FreeAt: []int{2}, Pinned: []int{1}}, 0, 1 / (math.E - 1), (math.E - 2) / (math.E - 1), 0, 1},
	} {
		rows := confinedChains(t, tc.box, chains, 12) // the graph unrolls its sweeps: fewer compile faster
		var sum, sq, fourth float64
		for i := range chains {
			x, off, at := rows[i*3], rows[i*3+1], rows[i*3+2]
			if at != tc.at || off != 1-tc.at || x < tc.lo || x > tc.hi {
				t.Fatalf("pinned %s: chain %d at (%v, %v, %v)", tc.name, i, x, off, at)
			}
			sum, sq, fourth = sum+x, sq+x*x, fourth+x*x*x*x
		}
		sd := math.Sqrt(tc.second - tc.mean*tc.mean)
		if m := sum / chains; math.Abs(m-tc.mean) > 4.5*sd/math.Sqrt(chains) {
			t.Errorf("pinned %s: x's mean %.4f, exact %.4f", tc.name, m, tc.mean)
		}
		s := sq / chains
		if se := math.Sqrt((fourth/chains - s*s) / chains); math.Abs(s-tc.second) > 4.5*se {
			t.Errorf("pinned %s: x's second moment %.4f, exact %.4f (± %.4f)", tc.name, s, tc.second, se)
		}
	}
}

// TestTwoPinsFromNeither pins both columns of the known mixed target
// (TestMixedSweepsSampleAKnownMixedTarget's energy, with c₁'s second
// category 30 nats up: e⁻³⁰ of the law), c₁ to that category and c₂ to its
// third, with chains started on neither (x = 0, both first): every chain
// reaches both pins and x follows N(μ[c₁], 1) = N(1, 1). With the pins'
// raises not added up (a row missing one pin costing what a row missing
// both does) c₁'s update cannot see its pin while c₂ misses its own, and
// the chains stay off them.
func TestTwoPinsFromNeither(t *testing.T) {
	const chains = 4000
	mu := []float64{-0.5, 1}
	energy := Confine(knownMixedEnergy(mu, [][]float64{{0, 1, 2}, {30, 30, 30}}, chains), Box{Pinned: []int{2, 5}})
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(5); err != nil {
		t.Fatal(err)
	}
	exec := context.MustNewExec(testutil.Backend(), ctx, func(ctx *context.Context, x0 *Node) []*Node {
		x, _ := MixedSweeps(ctx, energy, x0, MixedLayout{Numeric: 1, Categories: []int{2, 3}}, Scalar(x0.Graph(), x0.DType(), 1.0), 10, 3)
		return []*Node{x}
	})
	start := make([]float64, chains*6)
	for i := range chains {
		start[i*6+1], start[i*6+3] = 1, 1
	}
	rows := tensors.MustCopyFlatData[float64](exec.MustExec(tensors.FromFlatDataAndDimensions(start, chains, 6))[0])
	var sum, sq float64
	for i := range chains {
		r := rows[i*6 : (i+1)*6]
		if r[2] != 1 || r[5] != 1 || r[1]+r[3]+r[4] != 0 {
			t.Fatalf("chain %d at %v: off its pins", i, r)
		}
		sum, sq = sum+r[0], sq+r[0]*r[0]
	}
	mean := sum / chains
	if variance := sq/chains - mean*mean; math.Abs(mean-mu[1]) > 4.5/math.Sqrt(chains) || math.Abs(variance-1) > 4.5*math.Sqrt(2.0/chains) {
		t.Errorf("x given both pins: mean %.3f, variance %.3f; want 1 and 1", mean, variance)
	}
}
