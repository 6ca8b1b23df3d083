package sampling

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
)

// chains is the number of independent chains of each test: the standard
// errors below are of means over them.
const chains = 4000

// sampler runs one of the kernels (or unadjusted Langevin) on energy from
// x0 and returns the final states and each chain's acceptance.
type sampler func(ctx *context.Context, energy losses.EnergyFn, x0 *Node) (x, acceptance *Node)

// run executes s from the chains x0 [chains, dim] (host values) and
// returns the final states, flat, and the mean acceptance.
func run(t *testing.T, s sampler, energy losses.EnergyFn, x0 []float64, dim int) (x []float64, acceptance float64) {
	t.Helper()
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(7); err != nil {
		t.Fatal(err)
	}
	exec := context.MustNewExec(testutil.Backend(), ctx, func(ctx *context.Context, x0 *Node) []*Node {
		x, a := s(ctx, energy, x0)
		return []*Node{x, ReduceAllMean(a)}
	})
	out := exec.MustExec(tensors.FromFlatDataAndDimensions(x0, len(x0)/dim, dim))
	return tensors.MustCopyFlatData[float64](out[0]), tensors.ToScalar[float64](out[1])
}

// gaussian is E(x) = Σ_j x_j²/(2σ²) per example: N(0, σ²I).
func gaussian(sigma float64) losses.EnergyFn {
	return func(x *Node) *Node { return DivScalar(ReduceSum(Square(x), -1), 2*sigma*sigma) }
}

// normals draws n values of N(0, σ²).
func normals(rng *rand.Rand, n int, sigma float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = sigma * rng.NormFloat64()
	}
	return v
}

// moments returns the mean and variance of every coordinate of x [n, dim]
// pooled together.
func moments(x []float64) (mean, variance float64) {
	for _, v := range x {
		mean += v / float64(len(x))
	}
	for _, v := range x {
		variance += (v - mean) * (v - mean) / float64(len(x)-1)
	}
	return mean, variance
}

// TestExactWhereLangevinIsBiased: on N(0, I) in two dimensions, chains
// started from the target and run 15 steps of size 0.8 stay on it with
// MALA and HMC, while unadjusted Langevin drifts to its own stationary
// variance s²/(1 − (1 − s²/2)²) = 1.19 — 19 % off, about eight standard
// errors, so the test can tell the two apart.
func TestExactWhereLangevinIsBiased(t *testing.T) {
	const s, dim = 0.8, 2
	rng := rand.New(rand.NewPCG(1, 2))
	x0 := normals(rng, chains*dim, 1)
	ula := 1 / (1 - math.Pow(1-s*s/2, 2)) * s * s
	n := float64(chains * dim)
	for _, tc := range []struct {
		name         string
		s            sampler
		wantVariance float64
		exact        bool
	}{
		{"ULA", func(ctx *context.Context, e losses.EnergyFn, x0 *Node) (*Node, *Node) {
			x := losses.Langevin(ctx, e, x0, losses.LangevinConfig{StepSize: s, Steps: 15})
			return x, OnesLike(ReduceSum(x, -1)) // no test: every step taken
		}, ula, false},
		{"MALA", func(ctx *context.Context, e losses.EnergyFn, x0 *Node) (*Node, *Node) {
			return MALA(ctx, e, x0, MALAConfig{StepSize: s, Steps: 15})
		}, 1, true},
		{"HMC", func(ctx *context.Context, e losses.EnergyFn, x0 *Node) (*Node, *Node) {
			return HMC(ctx, e, x0, HMCConfig{StepSize: s, LeapfrogSteps: 2, Steps: 15})
		}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, acceptance := run(t, tc.s, gaussian(1), x0, dim)
			mean, variance := moments(x)
			// Standard errors over the chains (coordinates independent).
			if se := math.Sqrt(tc.wantVariance / n); math.Abs(mean) > 4*se {
				t.Errorf("mean %.4f, want 0 ± %.4f", mean, 4*se)
			}
			if se := tc.wantVariance * math.Sqrt(2/n); math.Abs(variance-tc.wantVariance) > 4*se {
				t.Errorf("variance %.4f, want %.4f ± %.4f", variance, tc.wantVariance, 4*se)
			}
			if tc.exact && !(acceptance > 0.3 && acceptance < 1) {
				t.Errorf("acceptance %.3f, want a rate well inside (0, 1) at this step size", acceptance)
			}
			t.Logf("%s: mean %.4f, variance %.4f (want %.4f), acceptance %.3f", tc.name, mean, variance, tc.wantVariance, acceptance)
		})
	}
}

// TestMixtureWeightsAndModesKept: on a two-mode mixture in one dimension,
// 0.3·N(−2, 0.5²) + 0.7·N(2, 0.5²), chains started from the target keep
// the weight of each mode and its mean and spread after 10 transitions.
func TestMixtureWeightsAndModesKept(t *testing.T) {
	const w, mu, sigma = 0.7, 2.0, 0.5
	energy := func(x *Node) *Node {
		x = Squeeze(x, -1)
		// −log(0.3 N(x; −2, σ²) + 0.7 N(x; 2, σ²)), up to a constant.
		left := AddScalar(DivScalar(Square(AddScalar(x, mu)), -2*sigma*sigma), math.Log(1-w))
		right := AddScalar(DivScalar(Square(AddScalar(x, -mu)), -2*sigma*sigma), math.Log(w))
		top := Max(left, right)
		return Neg(Add(top, Log(Add(Exp(Sub(left, top)), Exp(Sub(right, top))))))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x0 := make([]float64, chains)
	for i := range x0 {
		centre := -mu
		if rng.Float64() < w {
			centre = mu
		}
		x0[i] = centre + sigma*rng.NormFloat64()
	}
	for _, tc := range []struct {
		name string
		s    sampler
	}{
		{"MALA", func(ctx *context.Context, e losses.EnergyFn, x0 *Node) (*Node, *Node) {
			return MALA(ctx, e, x0, MALAConfig{StepSize: 0.5, Steps: 10})
		}},
		{"HMC", func(ctx *context.Context, e losses.EnergyFn, x0 *Node) (*Node, *Node) {
			return HMC(ctx, e, x0, HMCConfig{StepSize: 0.3, LeapfrogSteps: 3, Steps: 10})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, acceptance := run(t, tc.s, energy, x0, 1)
			var right []float64
			for _, v := range x {
				if v > 0 {
					right = append(right, v)
				}
			}
			weight := float64(len(right)) / chains
			if se := math.Sqrt(w * (1 - w) / chains); math.Abs(weight-w) > 4*se {
				t.Errorf("right mode's weight %.4f, want %.2f ± %.4f", weight, w, 4*se)
			}
			mean, variance := moments(right)
			n := float64(len(right))
			if se := sigma / math.Sqrt(n); math.Abs(mean-mu) > 4*se {
				t.Errorf("right mode's mean %.4f, want %.1f ± %.4f", mean, mu, 4*se)
			}
			if se := sigma * sigma * math.Sqrt(2/n); math.Abs(variance-sigma*sigma) > 4*se {
				t.Errorf("right mode's variance %.4f, want %.4f ± %.4f", variance, sigma*sigma, 4*se)
			}
			t.Logf("%s: weight %.4f, mean %.4f, variance %.4f, acceptance %.3f", tc.name, weight, mean, variance, acceptance)
		})
	}
}

// TestAcceptanceNearOneForSmallSteps: the Metropolis–Hastings correction
// of a tiny step is tiny, so nearly every proposal is accepted; a huge
// step is nearly always refused.
func TestAcceptanceNearOneForSmallSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x0 := normals(rng, 500*3, 1)
	for _, tc := range []struct {
		name   string
		s      sampler
		lo, hi float64
	}{
		{"MALA small", func(ctx *context.Context, e losses.EnergyFn, x0 *Node) (*Node, *Node) {
			return MALA(ctx, e, x0, MALAConfig{StepSize: 0.01, Steps: 5})
		}, 0.999, 1},
		{"MALA huge", func(ctx *context.Context, e losses.EnergyFn, x0 *Node) (*Node, *Node) {
			return MALA(ctx, e, x0, MALAConfig{StepSize: 20, Steps: 5})
		}, 0, 0.05},
		{"HMC small", func(ctx *context.Context, e losses.EnergyFn, x0 *Node) (*Node, *Node) {
			return HMC(ctx, e, x0, HMCConfig{StepSize: 0.01, LeapfrogSteps: 3, Steps: 5})
		}, 0.999, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, acceptance := run(t, tc.s, gaussian(1), x0, 3)
			if acceptance < tc.lo || acceptance > tc.hi {
				t.Errorf("acceptance %.4f, want in [%g, %g]", acceptance, tc.lo, tc.hi)
			}
		})
	}
}

func TestConfigsRefuseBadSettings(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{MALAConfig{StepSize: 0, Steps: 1}.Validate(), "MALA step size = 0"},
		{MALAConfig{StepSize: math.Inf(1), Steps: 1}.Validate(), "MALA step size = +Inf"},
		{MALAConfig{StepSize: 0.1, Steps: -1}.Validate(), "MALA steps = -1"},
		{HMCConfig{StepSize: math.NaN(), LeapfrogSteps: 1, Steps: 1}.Validate(), "HMC step size = NaN"},
		{HMCConfig{StepSize: 0.1, LeapfrogSteps: 0, Steps: 1}.Validate(), "HMC leapfrog steps = 0"},
		{HMCConfig{StepSize: 0.1, LeapfrogSteps: 1, Steps: -2}.Validate(), "HMC steps = -2"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", tc.err, tc.want)
		}
	}
	if err := (MALAConfig{StepSize: 0.1, Steps: 0}).Validate(); err != nil {
		t.Errorf("a valid config: %v", err)
	}
}
