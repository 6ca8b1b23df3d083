package sampling

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
)

// mixedTarget is an energy over mixed rows whose normaliser is known in
// closed form.
type mixedTarget struct {
	name   string
	layout MixedLayout
	energy losses.EnergyFn // of float32 rows
	logZ   float64
}

// columns is x [B, W]'s values at…at+k [B, k], by a product with a
// selection matrix (SimpleGo has no gradient of a slice).
func columns(x *Node, at, k int) *Node {
	w := x.Shape().Dimensions[1]
	s := make([][]float64, w)
	for i := range s {
		s[i] = make([]float64, k)
		if i >= at && i < at+k {
			s[i][i-at] = 1
		}
	}
	return Dot(x, Const(x.Graph(), s))
}

// blockValue is Σ_c onehot_c·v_c of the block at at (len(v) wide) of x
// [B, W]: the value v of each row's category.
func blockValue(x *Node, at int, v []float64) *Node {
	return ReduceSum(Mul(columns(x, at, len(v)), InsertAxes(Const(x.Graph(), v), 0)), 1)
}

// mixedTargets: one number whose Gaussian's mean, width and weight follow
// a 3-category column, Z = Σ_c e^{a_c} s_c √(2π); two correlated numbers
// whose mean shifts with two columns (2 and 3 categories) plus an
// interaction W of the two, Z = Σ e^{−W[c₁][c₂]} 2π/√det P; two columns
// and no number, Z = Σ e^{θ[c₁][c₂]}.
func mixedTargets() []mixedTarget {
	var out []mixedTarget
	{
		mu, s, a := []float64{-2, 0, 3}, []float64{0.5, 1, 0.3}, []float64{0, 1, -0.5}
		var z float64
		for c := range 3 {
			z += math.Exp(a[c]) * s[c] * math.Sqrt(2*math.Pi)
		}
		out = append(out, mixedTarget{"a number and its column", MixedLayout{Numeric: 1, Categories: []int{3}},
			func(x *Node) *Node {
				x = ConvertDType(x, dtypes.Float64)
				num := Squeeze(columns(x, 0, 1), 1)
				dev := Div(Sub(num, blockValue(x, 1, mu)), blockValue(x, 1, s))
				return ConvertDType(Sub(MulScalar(Square(dev), 0.5), blockValue(x, 1, a)), dtypes.Float32)
			}, math.Log(z)})
	}
	{
		p := [2][2]float64{{2, 0.8}, {0.8, 1}} // precision
		shift1, shift2 := []float64{-1, 1.5}, []float64{-2, 0, 2}
		w := [][]float64{{0, 1, -0.5}, {0.7, -1, 0.2}}
		var z float64
		for c1 := range 2 {
			for c2 := range 3 {
				z += math.Exp(-w[c1][c2]) * 2 * math.Pi / math.Sqrt(p[0][0]*p[1][1]-p[0][1]*p[1][0])
			}
		}
		flat := []float64{w[0][0], w[0][1], w[0][2], w[1][0], w[1][1], w[1][2]}
		out = append(out, mixedTarget{"two numbers and two columns", MixedLayout{Numeric: 2, Categories: []int{2, 3}},
			func(x *Node) *Node {
				x = ConvertDType(x, dtypes.Float64)
				d0 := Sub(Squeeze(columns(x, 0, 1), 1), blockValue(x, 2, shift1))
				d1 := Sub(Squeeze(columns(x, 1, 1), 1), blockValue(x, 4, shift2))
				quad := Add(Add(MulScalar(Square(d0), p[0][0]), MulScalar(Square(d1), p[1][1])), MulScalar(Mul(d0, d1), 2*p[0][1]))
				// the interaction: the outer product of the two blocks against W
				b1, b2 := columns(x, 2, 2), columns(x, 4, 3)
				pair := Reshape(Mul(InsertAxes(b1, 2), InsertAxes(b2, 1)), -1, 6)
				inter := ReduceSum(Mul(pair, InsertAxes(Const(x.Graph(), flat), 0)), 1)
				return ConvertDType(Add(MulScalar(quad, 0.5), inter), dtypes.Float32)
			}, math.Log(z)})
	}
	{
		theta := []float64{0.3, -1, 2, 0, 1.2, -0.4, 0.5, 0.9, -2, 1, 0, 0.1}
		var z float64
		for _, v := range theta {
			z += math.Exp(v)
		}
		out = append(out, mixedTarget{"two columns, no number", MixedLayout{Categories: []int{3, 4}},
			func(x *Node) *Node {
				x = ConvertDType(x, dtypes.Float64)
				pair := Reshape(Mul(InsertAxes(columns(x, 0, 3), 2), InsertAxes(columns(x, 3, 4), 1)), -1, 12)
				return ConvertDType(Neg(ReduceSum(Mul(pair, InsertAxes(Const(x.Graph(), theta), 0)), 1)), dtypes.Float32)
			}, math.Log(z)})
	}
	return out
}

// TestMixedAISAgainstClosedForms: MixedAIS's log Z of each target within
// 0.05 nats of the closed form (and its reverse bracket around it), from
// a base far from the targets' modes (σ 2 against numbers at −2…3), and
// from a base of skewed category probabilities.
func TestMixedAISAgainstClosedForms(t *testing.T) {
	targets := mixedTargets()
	skewed := targets[1] // the same target from a base of skewed categories
	skewed.name += ", skewed base"
	bases := [][][]float64{nil, nil, nil, {{0.9, 0.1}, {0.2, 0.3, 0.5}}}
	for i, tc := range append(targets, skewed) {
		t.Run(tc.name, func(t *testing.T) {
			res, err := MixedAIS(testutil.Backend(), context.New(), func(*context.Context) losses.EnergyFn { return tc.energy }, tc.layout,
				MixedAISConfig{AnnealConfig: AnnealConfig{Chains: 128, Temperatures: 250, Seed: 3}, BaseStd: 2, Categories: bases[i]})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("log Z %.4f (upper %.4f, check %.4f), exact %.4f; acceptance %.2f, converged %v %v", res.LogZ, res.Upper.LogZ, res.Check.LogZ, tc.logZ, res.Acceptance, res.Converged, res.Warnings)
			if math.Abs(res.LogZ-tc.logZ) > 0.05 || res.Upper.LogZ < tc.logZ-0.05 || res.LogZ > tc.logZ+0.05 {
				t.Errorf("log Z %.4f, upper %.4f; exact %.4f", res.LogZ, res.Upper.LogZ, tc.logZ)
			}
		})
	}
}
