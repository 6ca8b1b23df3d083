package losses

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Without noise, Langevin on E = x²/(2σ²) is x_k = x₀ (1 − s²/(2σ²))^k.
func TestLangevinWithoutNoiseIsClosedFormGradientDescent(t *testing.T) {
	const sigma2, s, steps = 0.8, 0.3, 7
	x0 := array{Data: []float64{1, -2, 0.5, 3}, Dims: []int{2, 2}}
	ctx := context.New()
	exec := context.MustNewExec(testBackend(), ctx, func(ctx *context.Context, x *Node) *Node {
		a := Const(x.Graph(), []float64{1 / sigma2, 1 / sigma2})
		b := Const(x.Graph(), []float64{0, 0})
		return Langevin(ctx, quadratic(a, b), x, LangevinConfig{StepSize: s, Steps: steps, NoNoise: true})
	})
	got := tensors.MustCopyFlatData[float64](exec.MustExec(x0.Tensor())[0])
	factor := math.Pow(1-s*s/(2*sigma2), steps)
	for i, v := range x0.Data {
		assertClose(t, "x_k", got[i], v*factor, 1e-12)
	}
}

// With noise, chains from 0 on a standard normal energy have the variance of
// the linear recursion x ← (1−h)x + sξ, h = s²/2:
// Var_k = s² (1 − (1−h)^{2k}) / (1 − (1−h)²).
func TestLangevinNoiseGivesClosedFormVariance(t *testing.T) {
	const s, steps, chains = 0.3, 60, 8192
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(21); err != nil {
		t.Fatal(err)
	}
	exec := context.MustNewExec(testBackend(), ctx, func(ctx *context.Context, x *Node) *Node {
		a := Const(x.Graph(), []float64{1})
		b := Const(x.Graph(), []float64{0})
		return Langevin(ctx, quadratic(a, b), x, LangevinConfig{StepSize: s, Steps: steps})
	})
	zeros := array{Data: make([]float64, chains), Dims: []int{chains, 1}}
	got := tensors.MustCopyFlatData[float64](exec.MustExec(zeros.Tensor())[0])
	var mean, variance float64
	for _, v := range got {
		mean += v / chains
	}
	for _, v := range got {
		variance += (v - mean) * (v - mean) / (chains - 1)
	}
	r := 1 - s*s/2
	want := s * s * (1 - math.Pow(r, 2*steps)) / (1 - r*r)
	// Standard errors: mean √(v/n), variance v√(2/n).
	if math.Abs(mean) > 4*math.Sqrt(want/chains) {
		t.Errorf("chain mean %.4f, want 0", mean)
	}
	if math.Abs(variance-want) > 4*want*math.Sqrt(2.0/chains) {
		t.Errorf("chain variance %.4f, want %.4f", variance, want)
	}
}

// With the noise given, on E = x²/(2σ²) + b·x each step is x ← x − (s²/2)(x/σ² + b) + s·ξ_k with
// the given ξ_k: a host loop over the same draws is the reference.
func TestLangevinWithNoiseUsesTheGivenDrawsInOrder(t *testing.T) {
	const sigma2, s, steps = 0.7, 0.4, 5
	rng := rand.New(rand.NewPCG(3, 4))
	x0 := testutil.RandomArray(rng, 1, 3, 2)
	noise := testutil.RandomArray(rng, 1, steps, 3, 2)
	exec := context.MustNewExec(testBackend(), context.New(), func(ctx *context.Context, x, xi *Node) *Node {
		a := Const(x.Graph(), []float64{1 / sigma2, 1 / sigma2})
		b := Const(x.Graph(), []float64{0.5, -1})
		return LangevinWithNoise(quadratic(a, b), x, xi, LangevinConfig{StepSize: s, Steps: steps})
	})
	got := tensors.MustCopyFlatData[float64](exec.MustExec(x0.Tensor(), noise.Tensor())[0])
	want := slices.Clone(x0.Data)
	for k := range steps {
		for i := range want {
			grad := want[i]/sigma2 + []float64{0.5, -1}[i%2]
			want[i] += -s*s/2*grad + s*noise.Data[k*len(want)+i]
		}
	}
	for i := range want {
		assertClose(t, "x_k", got[i], want[i], 1e-12)
	}
}

func TestContrastiveDivergenceWithNegativesMatchesNaiveLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	a, b := testutil.RandomArray(rng, 1, 3), testutil.RandomArray(rng, 1, 3)
	pos, neg := testutil.RandomArray(rng, 1, 5, 3), testutil.RandomArray(rng, 1, 5, 3)
	for _, reg := range []float64{0, 0.3} {
		got := run(t, func(in []*Node) []*Node {
			return []*Node{ContrastiveDivergenceWithNegatives(quadratic(in[0], in[1]), in[2], in[3], reg)}
		}, a, b, pos, neg)[0][0]
		var want float64
		for i := range 5 {
			ep := quadraticNaive(a.Data, b.Data, pos.Data[3*i:3*i+3])
			en := quadraticNaive(a.Data, b.Data, neg.Data[3*i:3*i+3])
			want += (ep - en + reg*(ep*ep+en*en)) / 5
		}
		assertClose(t, "CD loss", got, want, 1e-12)
	}
}

// The CD gradient treats the negatives as constants: with noiseless chains
// the negatives are known in closed form, and the gradient with respect to
// the energy's parameters must equal that of mean E(x⁺) − mean E(x⁻) with
// x⁻ fixed (for E = ½ a x², ∂/∂a = ½ (mean x⁺² − mean x⁻²)).
func TestContrastiveDivergenceStopsGradientThroughChains(t *testing.T) {
	const s, steps, aVal = 0.5, 3, 1.3
	pos := array{Data: []float64{0.5, -1, 2, 1.5}, Dims: []int{4, 1}}
	ctx := context.New()
	exec := context.MustNewExec(testBackend(), ctx, func(ctx *context.Context, a, x *Node) *Node {
		b := Const(x.Graph(), []float64{0})
		cfg := CDConfig{Langevin: LangevinConfig{StepSize: s, Steps: steps, NoNoise: true}}
		return Gradient(ContrastiveDivergence(ctx, quadratic(a, b), x, cfg), a)[0]
	})
	got := tensors.MustCopyFlatData[float64](exec.MustExec([]float64{aVal}, pos.Tensor())[0])[0]
	factor := math.Pow(1-s*s*aVal/2, steps)
	var want float64
	for _, v := range pos.Data {
		want += 0.5 * (v*v - v*factor*v*factor) / 4
	}
	assertClose(t, "∂CD/∂a", got, want, 1e-12)
}

// Each of the two gradient stops holds on its own: Langevin's samples carry
// no gradient to the energy's parameters, and ContrastiveDivergenceWithNegatives
// treats negatives as constants even when they are built from those
// parameters (for E = ½ a x² and x⁻ = a·c, ∂/∂a = ½ (mean x⁺² − mean x⁻²)).
func TestSamplesAndNegativesCarryNoGradient(t *testing.T) {
	const aVal = 1.3
	pos := array{Data: []float64{0.5, -1, 2, 1.5}, Dims: []int{4, 1}}
	c := []float64{0.3, -0.8, 1.1, 0.2}
	ctx := context.New()
	exec := context.MustNewExec(testBackend(), ctx, func(ctx *context.Context, a, x *Node) []*Node {
		b := Const(x.Graph(), []float64{0})
		energy := quadratic(a, b)
		chain := LangevinConfig{StepSize: 0.5, Steps: 3, NoNoise: true}
		samples := Langevin(ctx, energy, x, chain)
		// A function of the samples that depends on a only through them.
		throughSamples := Gradient(ReduceAllSum(Square(samples)), a)[0]
		negatives := Mul(Reshape(Const(x.Graph(), c), 4, 1), InsertAxes(a, 0))
		cd := Gradient(ContrastiveDivergenceWithNegatives(energy, x, negatives, 0), a)[0]
		return []*Node{throughSamples, cd}
	})
	outs := exec.MustExec([]float64{aVal}, pos.Tensor())
	if got := tensors.MustCopyFlatData[float64](outs[0])[0]; got != 0 {
		t.Errorf("∂/∂a Σ Langevin(x)² = %g, want 0: the samples must carry no gradient", got)
	}
	var want float64
	for i, v := range pos.Data {
		neg := aVal * c[i]
		want += 0.5 * (v*v - neg*neg) / 4
	}
	assertClose(t, "∂CD/∂a with negatives built from a", tensors.MustCopyFlatData[float64](outs[1])[0], want, 1e-12)
}

// An energy must return one value per example; any other shape panics at
// graph building with a message naming the batch and the shape wanted.
func TestEnergyOfTheWrongShapePanics(t *testing.T) {
	for _, tc := range []struct {
		name   string
		energy EnergyFn
	}{
		{"a column [B, 1]", func(x *Node) *Node { return InsertAxes(ReduceSum(x, 1), -1) }},
		{"one value for the batch", func(x *Node) *Node { return ReduceAllSum(x) }},
		{"B+1 values", func(x *Node) *Node {
			e := ReduceSum(x, 1)
			return Concatenate([]*Node{e, Slice(e, AxisRange(0, 1))}, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGraph(testBackend(), "shape")
			defer g.Finalize()
			x := Parameter(g, "x", shapes.Make(dtypes.Float64, 4, 3))
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "for a batch of 4 examples; want [4]") {
					t.Errorf("panic %v, want one naming the batch of 4 and the shape [4]", r)
				}
			}()
			EnergyGradient(tc.energy, x)
		})
	}
}
