package losses

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
)

// mixedTestConfig has two numeric values and three categorical columns,
// one of each structure.
var mixedTestConfig = MixedEDConfig{Numeric: 2, T: 0.3, M: 3, W: 1, Columns: []CategoricalColumn{
	{Categories: 3, Graph: Ordinal, T: 0.4}, {Categories: 4, Graph: Cyclical, T: 0.2}, {Categories: 2, Graph: Uniform, T: 0.7}}}

// TestMixedEnergyDiscrepancyMatchesANaiveLoop computes the loss on five
// random mixed rows with the noise given, and again by a host loop: the
// Gaussian steps on the numeric values, each category drawn by walking its
// kernel row (HeatKernel) until the cumulative probability passes the
// uniform, the energy of every row and negative, and the w-stabilised
// log-mean-exp.
func TestMixedEnergyDiscrepancyMatchesANaiveLoop(t *testing.T) {
	cfg := mixedTestConfig
	const b = 5
	width := cfg.Width()
	rng := rand.New(rand.NewPCG(5, 6))
	x := testutil.Array{Dims: []int{b, width}, Data: make([]float64, b*width)}
	for i := range b {
		row := x.Data[i*width : (i+1)*width]
		row[0], row[1] = rng.NormFloat64(), rng.NormFloat64()
		at := cfg.Numeric
		for _, col := range cfg.Columns {
			row[at+rng.IntN(col.Categories)] = 1
			at += col.Categories
		}
	}
	xi, xiPrime := testutil.RandomArray(rng, 1, b, cfg.Numeric), testutil.RandomArray(rng, 1, b, cfg.M, cfg.Numeric)
	uniform := func(dims ...int) testutil.Array {
		a := testutil.RandomArray(rng, 1, dims...)
		for i := range a.Data {
			a.Data[i] = rng.Float64()
		}
		return a
	}
	u, uPrime := uniform(b, len(cfg.Columns)), uniform(b, cfg.M, len(cfg.Columns))
	a, c := testutil.RandomArray(rng, 1, width), testutil.RandomArray(rng, 1, width)
	for i := range a.Data {
		a.Data[i] = 1 + math.Abs(a.Data[i])
	}

	exec := context.MustNewExec(testBackend(), context.New(), func(ctx *context.Context, in []*Node) *Node {
		return MixedEnergyDiscrepancyWithNoise(quadratic(in[5], in[6]), in[0], in[1], in[2], in[3], in[4], cfg)
	})
	got := tensors.ToScalar[float64](exec.MustExec(x.Tensor(), xi.Tensor(), xiPrime.Tensor(), u.Tensor(), uPrime.Tensor(), a.Tensor(), c.Tensor())[0])

	// draw is the first category whose cumulative probability passes v.
	draw := func(probs []float64, v float64) int {
		var sum float64
		for k, p := range probs {
			if sum += p; sum > v {
				return k
			}
		}
		return len(probs) - 1
	}
	var want float64
	for i := range b {
		row := x.Data[i*width : (i+1)*width]
		var bar []int // x̄'s categories
		at := cfg.Numeric
		for ci, col := range cfg.Columns {
			q, _ := HeatKernel(col.Graph, col.Categories, col.T)
			from := 0
			for k := range col.Categories {
				if row[at+k] == 1 {
					from = k
				}
			}
			bar = append(bar, draw(q[from*col.Categories:(from+1)*col.Categories], u.Data[i*len(cfg.Columns)+ci]))
			at += col.Categories
		}
		var sum float64
		for j := range cfg.M {
			y := make([]float64, width)
			for d := range cfg.Numeric {
				y[d] = row[d] + math.Sqrt(cfg.T)*(xi.Data[i*cfg.Numeric+d]+xiPrime.Data[(i*cfg.M+j)*cfg.Numeric+d])
			}
			at := cfg.Numeric
			for ci, col := range cfg.Columns {
				q, _ := HeatKernel(col.Graph, col.Categories, col.T)
				k := draw(q[bar[ci]*col.Categories:(bar[ci]+1)*col.Categories], uPrime.Data[(i*cfg.M+j)*len(cfg.Columns)+ci])
				y[at+k] = 1
				at += col.Categories
			}
			sum += math.Exp(quadraticNaive(a.Data, c.Data, row) - quadraticNaive(a.Data, c.Data, y))
		}
		want += math.Log(cfg.W/float64(cfg.M)+sum/float64(cfg.M)) / b
	}
	if math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
		t.Errorf("loss %.15g, the naive loop's %.15g", got, want)
	}
}

// TestMixedEnergyDiscrepancyDrawsFromTheKernel: with ctx's noise and one
// categorical column, the negatives' categories from a fixed category
// follow the two-step kernel q_t·q_t. The energy is θ·y, a table over the
// categories, so at θ = 0 the loss's gradient counts them:
// ∂L/∂θ_k = (M/(M+w))·(δ_k1 − share of negatives in k).
func TestMixedEnergyDiscrepancyDrawsFromTheKernel(t *testing.T) {
	cfg := MixedEDConfig{M: 64, W: 1, Columns: []CategoricalColumn{{Categories: 5, Graph: Ordinal, T: 0.3}}}
	const b = 4096
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(3); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, b*5)
	for i := range b {
		x[i*5+1] = 1 // every row in category 1
	}
	exec := context.MustNewExec(testBackend(), ctx, func(ctx *context.Context, x, theta *Node) *Node {
		energy := func(y *Node) *Node { return ReduceSum(Mul(y, InsertAxes(theta, 0)), 1) }
		return Gradient(MixedEnergyDiscrepancy(ctx, energy, x, cfg), theta)[0]
	})
	grad := tensors.MustCopyFlatData[float64](exec.MustExec(tensors.FromFlatDataAndDimensions(x, b, 5), make([]float64, 5))[0])
	q, _ := HeatKernel(Ordinal, 5, 0.3)
	// At θ = 0 each of the M negatives has weight 1/(M + w) in its row's
	// softmax: ∂L/∂θ_k = δ_k1 − (M/(M+w))·share_k.
	scale := float64(cfg.M) / (float64(cfg.M) + cfg.W)
	for k := range 5 {
		var twoStep float64
		for m := range 5 {
			twoStep += q[1*5+m] * q[m*5+k]
		}
		delta := 0.0
		if k == 1 {
			delta = 1
		}
		share := delta - grad[k]/scale
		// Standard error as if the b rows' x̄ were the only independent draws.
		if se := math.Sqrt(twoStep * (1 - twoStep) / b); math.Abs(share-twoStep) > 5*se+1e-3 {
			t.Errorf("category %d: share of negatives %.4f, (q_t q_t)(%d|1) = %.4f", k, share, k, twoStep)
		}
	}
}

// TestMixedEDConfigValidate names the setting at fault.
func TestMixedEDConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*MixedEDConfig)
		want string
	}{
		{func(c *MixedEDConfig) { c.Numeric, c.Columns = 0, nil }, "at least one column"},
		{func(c *MixedEDConfig) { c.T = 0 }, "numeric perturbation variance"},
		{func(c *MixedEDConfig) { c.Columns = []CategoricalColumn{{Categories: 1, Graph: Uniform, T: 1}} }, "categorical column 1: 1 categories"},
		{func(c *MixedEDConfig) { c.Columns = []CategoricalColumn{{Categories: 3, Graph: "tree", T: 1}} }, `on "tree"`},
		{func(c *MixedEDConfig) { c.Columns = []CategoricalColumn{{Categories: 3, Graph: Ordinal}} }, "at time 0"},
		{func(c *MixedEDConfig) { c.M = 0 }, "M = 0"},
	} {
		cfg := mixedTestConfig
		cfg.Columns = append([]CategoricalColumn(nil), cfg.Columns...)
		tc.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
	if err := mixedTestConfig.Validate(); err != nil {
		t.Error(err)
	}
}
