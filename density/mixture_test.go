package density

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/floats"

	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
)

// naiveMixtureEnergy is −log(ρ·φ(x+5) + (1−ρ)·φ(x−5)) in float64, the
// paper's family p_ρ (appendix "Healing nearsightedness"), written out
// directly.
func naiveMixtureEnergy(x, rho float64) float64 {
	phi := func(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
	return -math.Log(rho*phi(x+5) + (1-rho)*phi(x-5))
}

// naiveMean is the mean of f over the data, in float64.
func naiveMean(x []float32, f func(float64) float64) float64 {
	var sum float64
	for _, v := range x {
		sum += f(float64(v))
	}
	return sum / float64(len(x))
}

// TestMixtureStudyAgainstThePaper checks the mixture-weight study's losses
// against float64 computations written out here, and its findings against
// the paper's (appendix "Healing nearsightedness", the figure of losses
// against ρ): on data with ρ = 0.2, ED with t = 32, M = 32, w = 1 is
// minimised near 0.2, like the likelihood, while score matching is flat
// in ρ.
func TestMixtureStudyAgainstThePaper(t *testing.T) {
	family := toy2d.MixtureWeightStudy()
	rng := rand.New(rand.NewPCG(3, 4))
	x := family.Sample(rng, 2000)
	eds := []losses.EDConfig{{T: 32, M: 32, W: 1}}
	eval, err := NewMixtureEvaluator(testBackend(), family, eds, x, rng)
	if err != nil {
		t.Fatal(err)
	}
	defer eval.Close()

	// The NLL and the Hyvärinen score-matching loss ½E′² − E″ (derivatives
	// by central differences of the float64 energy) at several weights.
	const h = 1e-3
	var smSpan [2]float64 = [2]float64{math.Inf(1), math.Inf(-1)}
	var nllAt = map[float64]float64{}
	for _, rho := range []float64{0.05, 0.2, 0.5, 0.9} {
		got, err := eval.At(rho)
		if err != nil {
			t.Fatal(err)
		}
		e := func(v float64) float64 { return naiveMixtureEnergy(v, rho) }
		nll := naiveMean(x, e)
		sm := naiveMean(x, func(v float64) float64 {
			d1 := (e(v+h) - e(v-h)) / (2 * h)
			d2 := (e(v+h) - 2*e(v) + e(v-h)) / (h * h)
			return d1*d1/2 - d2
		})
		if math.Abs(got.NLL-nll) > 1e-4*math.Abs(nll)+1e-4 {
			t.Errorf("ρ = %g: NLL %g, float64 %g", rho, got.NLL, nll)
		}
		if math.Abs(got.SM-sm) > 2e-3 {
			t.Errorf("ρ = %g: SM %g, float64 by finite differences %g", rho, got.SM, sm)
		}
		smSpan[0], smSpan[1] = math.Min(smSpan[0], got.SM), math.Max(smSpan[1], got.SM)
		nllAt[rho] = got.NLL
	}
	// Score matching is blind to the weight; the likelihood is not.
	if smSpan[1]-smSpan[0] > 1e-3 {
		t.Errorf("SM spans %g over ρ ∈ [0.05, 0.9], want flat (< 1e-3)", smSpan[1]-smSpan[0])
	}
	if d := nllAt[0.9] - nllAt[0.2]; d < 1 {
		t.Errorf("NLL(0.9) − NLL(0.2) = %g, want ≈ 1.36 (0.8·log 8 − 0.2·log 4.5)", d)
	}

	edAt := func(rho float64) (float64, error) {
		l, err := eval.At(rho)
		return l.ED[0], err
	}
	rhoED, err := GoldenSectionMin(edAt, 0.01, 0.99, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	rhoML, err := GoldenSectionMin(func(rho float64) (float64, error) {
		return naiveMean(x, func(v float64) float64 { return naiveMixtureEnergy(v, rho) }), nil
	}, 0.01, 0.99, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	// 2,000 points: the ML estimate's standard error is √(0.16/2000) ≈ 0.009;
	// the paper's ED estimates at t = 32 spread by ≈ 0.02 on 1,000.
	if math.Abs(rhoML-0.2) > 0.03 {
		t.Errorf("maximum likelihood ρ̂ = %g, want 0.2 ± 0.03", rhoML)
	}
	if math.Abs(rhoED-0.2) > 0.06 {
		t.Errorf("ED (t 32, M 32, w 1) minimised at ρ = %g, want 0.2 ± 0.06 as in the paper", rhoED)
	}
}

// TestGoldenSectionMin checks the minimiser on functions with known
// minima, including one at the interval's edge.
func TestGoldenSectionMin(t *testing.T) {
	tests := []struct {
		name   string
		f      func(float64) float64
		lo, hi float64
		want   float64
	}{
		{"parabola", func(x float64) float64 { return (x - 0.3) * (x - 0.3) }, 0, 1, 0.3},
		{"asymmetric", func(x float64) float64 { return math.Exp(x) - 2*x }, -3, 5, math.Ln2},
		{"minimum at the upper edge", func(x float64) float64 { return -x }, 0, 1, 1},
	}
	for _, tc := range tests {
		got, err := GoldenSectionMin(func(x float64) (float64, error) { return tc.f(x), nil }, tc.lo, tc.hi, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-5 {
			t.Errorf("%s: minimiser %g, want %g", tc.name, got, tc.want)
		}
	}
}

// TestWStabilisationBoundsTheLoss checks the mechanism behind the paper's
// w study (section 3, "w-stabilisation", and the figure of energies
// learned for several w): the stabiliser bounds each example's term below
// by log(w/M), while without it an energy that rises steeply just outside
// the data lowers the loss without bound, the wall that w = 0 training
// grows. Values against a float64 loop of the loss's formula.
func TestWStabilisationBoundsTheLoss(t *testing.T) {
	const n, m, edge = 64, 4, 1.5
	rng := rand.New(rand.NewPCG(5, 6))
	x, xi, xiPrime := make([]float32, n), normals(rng, n), normals(rng, n*m)
	for i := range x {
		x[i] = float32(edge * (2*rng.Float64() - 1)) // data inside the wall
	}
	// The first example sits at the wall with all its negatives beyond it,
	// by 0.5 to 0.8: without w its term is at most −0.5·c.
	x[0], xi[0] = edge, 0
	for j := range m {
		xiPrime[j] = float32(0.5 + 0.1*float64(j))
	}
	// E_c(v) = c·max(|v| − edge, 0): zero on the data, a wall of slope c.
	wall := func(c float64) losses.EnergyFn {
		return func(v *Node) *Node {
			v = Reshape(v, v.Shape().Dimensions[0])
			return MulScalar(MaxScalar(AddScalar(Abs(v), -edge), 0), c)
		}
	}
	// The loss meanᵢ log(w/M + (1/M) Σⱼ exp(E(xᵢ) − E(yᵢⱼ))), each
	// log-sum taken about its largest term so that steep walls stay finite.
	naive := func(c, w float64) float64 {
		var sum float64
		for i := range n {
			var terms []float64
			if w > 0 {
				terms = append(terms, math.Log(w))
			}
			for j := range m {
				y := float64(x[i]) + float64(xi[i]) + float64(xiPrime[i*m+j]) // t = 1
				terms = append(terms, -c*math.Max(math.Abs(y)-edge, 0))
			}
			sum += floats.LogSumExp(terms) - math.Log(m)
		}
		return sum / n
	}
	for _, w := range []float64{0, 1} {
		var previous float64
		for k, c := range []float64{1, 10, 100, 1000} {
			exec, err := NewExec(testBackend(), func(data, xi, xiPrime *Node) *Node {
				return losses.EnergyDiscrepancyWithNoise(wall(c), data, xi, xiPrime, losses.EDConfig{T: 1, M: m, W: w})
			})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, n, 1), tensors.FromFlatDataAndDimensions(xi, n, 1),
				tensors.FromFlatDataAndDimensions(xiPrime, n, m, 1))
			exec.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			got := float64(tensors.ToScalar[float32](outs[0]))
			want := naive(c, w)
			if math.Abs(got-want) > 1e-4*math.Abs(want)+1e-4 {
				t.Errorf("w = %g, wall slope %g: loss %g, float64 loop %g", w, c, got, want)
			}
			if w > 0 && got < math.Log(w/m)-1e-5 {
				t.Errorf("w = %g, wall slope %g: loss %g below the bound log(w/M) = %g", w, c, got, math.Log(w/m))
			}
			// Each term is at most log 1, the first one at most −0.5·c: the
			// wall drives the w = 0 loss down without bound.
			if bound := -0.5 * c / n; w == 0 && got > bound+1e-4 {
				t.Errorf("w = 0, wall slope %g: loss %g, want at most %g", c, got, bound)
			}
			if k > 0 && got > previous {
				t.Errorf("w = %g: the loss rose from %g to %g as the wall steepened to %g", w, previous, got, c)
			}
			previous = got
		}
	}
}

// TestMixtureEnergyIsTheNegativeLogDensity checks the family's energy, with
// standard deviations other than 1 and a weight other than ½, against the
// closed form −log(ρ·N(x; μ₁, σ₁²) + (1−ρ)·N(x; μ₂, σ₂²)) in float64.
func TestMixtureEnergyIsTheNegativeLogDensity(t *testing.T) {
	family := toy2d.Mixture1D{Weights: []float64{0.5, 0.5}, Means: []float64{-1, 2}, Stds: []float64{0.5, 3}}
	normal := func(x, mu, sigma float64) float64 {
		z := (x - mu) / sigma
		return math.Exp(-z*z/2) / (sigma * math.Sqrt(2*math.Pi))
	}
	x := []float64{-2.5, -1, -0.3, 0.5, 2, 6}
	exec, err := NewExec(testBackend(), func(rho, x *Node) *Node { return mixtureEnergy(family, rho)(x) })
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	for _, rho := range []float64{0.3, 0.9} {
		got := testutil.ExecFlat(t, exec, testutil.Array{Data: []float64{rho}}, testutil.Array{Data: x, Dims: []int{len(x), 1}})[0]
		want := make([]float64, len(x))
		for i, v := range x {
			want[i] = -math.Log(rho*normal(v, -1, 0.5) + (1-rho)*normal(v, 2, 3))
		}
		testutil.AssertAllClose(t, fmt.Sprintf("energy at ρ = %g", rho), got, want, 1e-12)
	}
}

// TestNewMixtureEvaluatorRejectsBadFamilies checks that only valid
// two-component families are accepted, with an error naming the problem.
func TestNewMixtureEvaluatorRejectsBadFamilies(t *testing.T) {
	x := []float32{-1, 0, 1}
	for _, tc := range []struct {
		name   string
		family toy2d.Mixture1D
		want   string
	}{
		{"three components", toy2d.Mixture1D{Weights: []float64{0.2, 0.3, 0.5}, Means: []float64{-1, 0, 1}, Stds: []float64{1, 1, 1}}, "two-component"},
		{"one component", toy2d.Mixture1D{Weights: []float64{1}, Means: []float64{0}, Stds: []float64{1}}, "two-component"},
		{"negative std", toy2d.Mixture1D{Weights: []float64{0.5, 0.5}, Means: []float64{-1, 1}, Stds: []float64{1, -2}}, "std -2"},
		{"weights not summing to 1", toy2d.Mixture1D{Weights: []float64{0.5, 0.6}, Means: []float64{-1, 1}, Stds: []float64{1, 1}}, "sum to 1.1"},
	} {
		e, err := NewMixtureEvaluator(testBackend(), tc.family, []losses.EDConfig{losses.DefaultToyED}, x, rand.New(rand.NewPCG(1, 2)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if e != nil {
			t.Errorf("%s: got an evaluator with the error", tc.name)
		}
	}
}

// TestMixtureEvaluatorRejectsWeightsOutsideTheOpenInterval checks that At
// refuses ρ ∉ (0, 1), where log ρ or log(1−ρ) is undefined, naming ρ.
func TestMixtureEvaluatorRejectsWeightsOutsideTheOpenInterval(t *testing.T) {
	eval, err := NewMixtureEvaluator(testBackend(), toy2d.MixtureWeightStudy(), []losses.EDConfig{losses.DefaultToyED},
		[]float32{-5, 5}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	defer eval.Close()
	for _, rho := range []float64{0, 1, -0.5, 1.5, math.NaN()} {
		if _, err := eval.At(rho); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("ρ = %v:", rho)) {
			t.Errorf("At(%v): error %v, want one naming ρ = %v", rho, err, rho)
		}
	}
}
