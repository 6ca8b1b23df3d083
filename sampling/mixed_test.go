package sampling

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
)

// TestMixedSweepsSampleAKnownMixedTarget runs the sampler on rows of one
// number and two categorical columns (2 and 3 categories) with
//
//	E(x, c₁, c₂) = (x − μ[c₁])²/2 + A[c₁][c₂],
//
// whose exact law is p(c₁, c₂) ∝ exp(−A[c₁][c₂]) (the Gaussian's integral
// is the same for every c₁) and x | c₁ ~ N(μ[c₁], 1): the six joint
// frequencies of 4,000 chains and the mean and variance of x given c₁
// must match, from chains started far away (x = 0, every category the
// first).
func TestMixedSweepsSampleAKnownMixedTarget(t *testing.T) {
	mu := []float64{-0.5, 1} // overlapping: the chains change c₁ often
	a := [][]float64{{0, 1, 2}, {0.5, -0.5, 1.5}}
	const chains = 4000
	layout := MixedLayout{Numeric: 1, Categories: []int{2, 3}}
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(7); err != nil {
		t.Fatal(err)
	}
	energy := knownMixedEnergy(mu, a, chains)
	exec := context.MustNewExec(testutil.Backend(), ctx, func(ctx *context.Context, x0 *Node) []*Node {
		x, acc := MixedSweeps(ctx, energy, x0, layout, Scalar(x0.Graph(), x0.DType(), 1.0), 25, 3)
		return []*Node{x, acc}
	})
	start := make([]float64, chains*6)
	for i := range chains {
		start[i*6+1], start[i*6+3] = 1, 1
	}
	outs := exec.MustExec(tensors.FromFlatDataAndDimensions(start, chains, 6))
	rows := tensors.MustCopyFlatData[float64](outs[0])
	acc := tensors.MustCopyFlatData[float64](outs[1])

	var z float64
	for _, r := range a {
		for _, v := range r {
			z += math.Exp(-v)
		}
	}
	counts := [2][3]float64{}
	var sum, sumSq, n [2]float64
	for i := range chains {
		r := rows[i*6 : (i+1)*6]
		c1 := int(r[2]) // 1 when the second category
		c2 := 0
		for k := range 3 {
			if r[3+k] == 1 {
				c2 = k
			}
		}
		if r[1]+r[2] != 1 || r[3]+r[4]+r[5] != 1 {
			t.Fatalf("chain %d: %v is not one-hot in each column", i, r)
		}
		counts[c1][c2]++
		sum[c1], sumSq[c1], n[c1] = sum[c1]+r[0], sumSq[c1]+r[0]*r[0], n[c1]+1
	}
	for c1 := range 2 {
		for c2 := range 3 {
			p := math.Exp(-a[c1][c2]) / z
			got := counts[c1][c2] / chains
			if se := math.Sqrt(p * (1 - p) / chains); math.Abs(got-p) > 4.5*se {
				t.Errorf("p(c₁=%d, c₂=%d): %.4f of the chains, exact %.4f (± %.4f)", c1, c2, got, p, se)
			}
		}
		mean := sum[c1] / n[c1]
		variance := sumSq[c1]/n[c1] - mean*mean
		if math.Abs(mean-mu[c1]) > 4.5/math.Sqrt(n[c1]) || math.Abs(variance-1) > 4.5*math.Sqrt(2/n[c1]) {
			t.Errorf("x | c₁=%d: mean %.3f, variance %.3f over %v chains; want %v and 1", c1, mean, variance, n[c1], mu[c1])
		}
	}
	if acc[0] <= 0.2 || acc[0] >= 1 {
		t.Errorf("MALA acceptance %.3f", acc[0])
	}
}

// TestCategoryLogitsAreTheExactConditionals: on the known target's energy,
// a softmax of each column's logits is its conditional computed here —
// p(c₂ | x, c₁) ∝ exp(−A[c₁][c₂]), p(c₁ | x, c₂) ∝ exp(−(x − μ[c₁])²/2 −
// A[c₁][c₂]) — for rows of every category and several x.
func TestCategoryLogitsAreTheExactConditionals(t *testing.T) {
	mu := []float64{-0.5, 1}
	a := [][]float64{{0, 1, 2}, {0.5, -0.5, 1.5}}
	var rows []float64
	type row struct {
		x      float64
		c1, c2 int
	}
	var cases []row
	for _, x := range []float64{-1.3, 0, 2.2} {
		for c1 := range 2 {
			for c2 := range 3 {
				r := make([]float64, 6)
				r[0], r[1+c1], r[3+c2] = x, 1, 1
				rows, cases = append(rows, r...), append(cases, row{x, c1, c2})
			}
		}
	}
	n := len(cases)
	energy := func(r *Node) *Node {
		g := r.Graph()
		x := Reshape(MatMul(r, Const(g, [][]float64{{1}, {0}, {0}, {0}, {0}, {0}})), n)
		o1 := MatMul(r, Const(g, [][]float64{{0, 0}, {1, 0}, {0, 1}, {0, 0}, {0, 0}, {0, 0}}))
		o2 := MatMul(r, Const(g, [][]float64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}))
		mean := ReduceSum(Mul(o1, Const(g, [][]float64{mu})), 1)
		return Add(MulScalar(Square(Sub(x, mean)), 0.5), ReduceSum(Mul(MatMul(o1, Const(g, a)), o2), 1))
	}
	exec := context.MustNewExec(testutil.Backend(), context.New(), func(ctx *context.Context, x *Node) []*Node {
		return []*Node{Softmax(CategoryLogits(energy, x, 1, 2), 1), Softmax(CategoryLogits(energy, x, 3, 3), 1)}
	})
	outs := exec.MustExec(tensors.FromFlatDataAndDimensions(rows, n, 6))
	p1, p2 := tensors.MustCopyFlatData[float64](outs[0]), tensors.MustCopyFlatData[float64](outs[1])
	for i, c := range cases {
		var z1, z2 float64
		for k := range 2 {
			z1 += math.Exp(-math.Pow(c.x-mu[k], 2)/2 - a[k][c.c2])
		}
		for k := range 3 {
			z2 += math.Exp(-a[c.c1][k])
		}
		for k := range 2 {
			if want := math.Exp(-math.Pow(c.x-mu[k], 2)/2-a[k][c.c2]) / z1; math.Abs(p1[i*2+k]-want) > 1e-9 {
				t.Errorf("%+v: p(c₁=%d | rest) %.12f, exact %.12f", c, k, p1[i*2+k], want)
			}
		}
		for k := range 3 {
			if want := math.Exp(-a[c.c1][k]) / z2; math.Abs(p2[i*3+k]-want) > 1e-9 {
				t.Errorf("%+v: p(c₂=%d | rest) %.12f, exact %.12f", c, k, p2[i*3+k], want)
			}
		}
	}
}

// knownMixedEnergy is the energy of rows [x, one-hot c₁ (2), one-hot c₂
// (3)], E = (x − μ[c₁])²/2 + A[c₁][c₂], for batches of chains rows.
func knownMixedEnergy(mu []float64, a [][]float64, chains int) func(row *Node) *Node {
	// pick is a 6×n matrix picking values from..from+n of a row (by
	// products, not slices: SimpleGo has no Pad, a slice's gradient).
	pick := func(g *Graph, from, n int) *Node {
		m := make([][]float64, 6)
		for i := range m {
			m[i] = make([]float64, n)
			if i >= from && i < from+n {
				m[i][i-from] = 1
			}
		}
		return Const(g, m)
	}
	return func(row *Node) *Node {
		g := row.Graph()
		x := MatMul(row, pick(g, 0, 1))
		o1 := MatMul(row, pick(g, 1, 2))
		o2 := MatMul(row, pick(g, 3, 3))
		mean := ReduceSum(Mul(o1, Const(g, [][]float64{mu})), 1)
		table := ReduceSum(Mul(MatMul(o1, Const(g, a)), o2), 1)
		return Add(MulScalar(Square(Sub(Reshape(x, chains), mean)), 0.5), table)
	}
}

// TestTuneMixedReachesTheTarget: on the known mixed target, with the
// numbers' scale σ = 1 and σ = 4 (x stretched by σ: the same problem in
// other units), the MALA step TuneMixed settles on gives the target
// acceptance in the sweeps that follow and grows as σ; rows without
// numbers are refused.
func TestTuneMixedReachesTheTarget(t *testing.T) {
	const chains = 500
	layout := MixedLayout{Numeric: 1, Categories: []int{2, 3}}
	base := knownMixedEnergy([]float64{-0.5, 1}, [][]float64{{0, 1, 2}, {0.5, -0.5, 1.5}}, chains)
	var tuned []float64
	for _, sigma := range []float64{1, 4} {
		energy := func(row *Node) *Node { // x/σ in place of x
			scale := Const(row.Graph(), [][]float64{{1 / sigma, 1, 1, 1, 1, 1}})
			return base(Mul(row, scale))
		}
		ctx := context.New()
		if err := ctx.SetRNGStateFromSeed(3); err != nil {
			t.Fatal(err)
		}
		start := make([]float64, chains*6)
		for i := range chains {
			start[i*6+1], start[i*6+3] = 1, 1
		}
		step, x, err := TuneMixed(testutil.Backend(), ctx, energy, tensors.FromFlatDataAndDimensions(start, chains, 6), layout, 2,
			TuneConfig{Target: 0.574, InitialStepSize: 0.01, WarmupSteps: 300})
		if err != nil {
			t.Fatal(err)
		}
		exec := context.MustNewExec(testutil.Backend(), ctx, func(ctx *context.Context, x *Node) *Node {
			_, acc := MixedSweeps(ctx, energy, x, layout, Scalar(x.Graph(), x.DType(), step), 5, 2)
			return ReduceAllMean(acc)
		})
		acceptance := tensors.ToScalar[float64](exec.MustExec(x)[0])
		t.Logf("σ = %g: tuned step %.4f, acceptance after warm-up %.3f", sigma, step, acceptance)
		if math.Abs(acceptance-0.574) > 0.06 {
			t.Errorf("σ = %g: acceptance %.3f with the tuned step %.4f, want 0.574 ± 0.06", sigma, acceptance, step)
		}
		tuned = append(tuned, step)
	}
	if ratio := tuned[1] / tuned[0]; math.Abs(ratio-4) > 0.8 {
		t.Errorf("tuned steps %.4f (σ = 1) and %.4f (σ = 4): ratio %.1f, want about 4 (MALA's step is in x's units)", tuned[0], tuned[1], ratio)
	}
	if _, _, err := TuneMixed(testutil.Backend(), context.New(), base, tensors.FromFlatDataAndDimensions(make([]float64, 6), 1, 6),
		MixedLayout{Categories: []int{2, 3}}, 2, TuneConfig{Target: 0.6, InitialStepSize: 0.1, WarmupSteps: 1}); err == nil {
		t.Error("TuneMixed of rows without numbers: no error")
	}
}
