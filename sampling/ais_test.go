package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
)

// exactTarget is an energy whose log Z is known in closed form.
type exactTarget struct {
	name   string
	dim    int
	energy losses.EnergyFn
	logZ   float64
}

// gaussianTarget is N(μ, Q diag(σ²) Qᵀ) in d dimensions, σ spaced
// geometrically from lo to hi, Q a random rotation (or I), μ random:
// log Z = (d/2) log 2π + Σ log σ_i.
func gaussianTarget(name string, d int, lo, hi float64, rotate bool, seed uint64) exactTarget {
	rng := rand.New(rand.NewPCG(seed, 1))
	sigma := make([]float64, d)
	logZ := 0.5 * float64(d) * math.Log(2*math.Pi)
	for i := range sigma {
		sigma[i] = lo * math.Pow(hi/lo, float64(i)/float64(d-1))
		logZ += math.Log(sigma[i])
	}
	q := mat.NewDense(d, d, nil)
	if rotate {
		a := mat.NewDense(d, d, nil)
		for i := range d {
			for j := range d {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		var qr mat.QR
		qr.Factorize(a)
		qr.QTo(q)
	} else {
		for i := range d {
			q.Set(i, i, 1)
		}
	}
	precision := make([]float64, d*d)
	for i := range d {
		for j := range d {
			for k := range d {
				precision[i*d+j] += q.At(i, k) * q.At(j, k) / (sigma[k] * sigma[k])
			}
		}
	}
	mu := make([]float64, d)
	for i := range mu {
		mu[i] = 0.5 * rng.NormFloat64()
	}
	return exactTarget{name, d, func(x *Node) *Node {
		g := x.Graph()
		dev := Sub(x, InsertAxes(Const(g, mu), 0))
		return MulScalar(ReduceSum(Mul(Dot(dev, Reshape(Const(g, precision), d, d)), dev), -1), 0.5)
	}, logZ}
}

// mixtureTarget is exp(−E) = a·exp(−‖x + c‖²/(2s₁²)) + b·exp(−‖x − c‖²/(2s₂²))
// in d dimensions, c = 1.5·(1, …, 1): Z = a(2πs₁²)^(d/2) + b(2πs₂²)^(d/2).
func mixtureTarget(name string, d int, s1, s2, a, b float64) exactTarget {
	l1 := math.Log(a) + 0.5*float64(d)*math.Log(2*math.Pi*s1*s1)
	l2 := math.Log(b) + 0.5*float64(d)*math.Log(2*math.Pi*s2*s2)
	top := max(l1, l2)
	return exactTarget{name, d, func(x *Node) *Node {
		left := AddScalar(DivScalar(ReduceSum(Square(AddScalar(x, 1.5)), -1), -2*s1*s1), math.Log(a))
		right := AddScalar(DivScalar(ReduceSum(Square(AddScalar(x, -1.5)), -1), -2*s2*s2), math.Log(b))
		top := Max(left, right)
		return Neg(Add(top, Log(Add(Exp(Sub(left, top)), Exp(Sub(right, top))))))
	}, top + math.Log(math.Exp(l1-top)+math.Exp(l2-top))}
}

// The closed-form targets: two small ones, and the ones where no single
// step size fits every temperature — scales over two orders of magnitude,
// correlated, and modes of unequal widths.
var (
	shiftedGaussian = exactTarget{"3-d shifted Gaussian", 3, func(x *Node) *Node {
		mu := Const(x.Graph(), []float64{1, -1, 0.5})
		return DivScalar(ReduceSum(Square(Sub(x, InsertAxes(mu, 0))), -1), 2*0.7*0.7)
	}, 1.5 * math.Log(2*math.Pi*0.7*0.7)}
	spreadGaussian     = gaussianTarget("20-d Gaussian, σ 0.03 to 3", 20, 0.03, 3, false, 1)
	correlatedGaussian = gaussianTarget("32-d correlated Gaussian, σ 0.05 to 5", 32, 0.05, 5, true, 2)
	// The benchmark's hardest: 256 chains estimate a 64 × 64 covariance.
	correlated64 = gaussianTarget("64-d correlated Gaussian, σ 0.05 to 5", 64, 0.05, 5, true, 2)
	twoModes     = mixtureTarget("1-d mixture", 1, 0.5, 0.5, 1.5, 3.5)
	unequalModes = mixtureTarget("10-d mixture, widths 0.3 and 1", 10, 0.3, 1, 1, 3)
)

// aisTolerance is how close AIS at its defaults lands to the closed forms.
const aisTolerance = 0.3

// TestAISAtItsDefaultsAgainstClosedForms: at the default settings (256
// chains, 2000 temperatures, two tuned and preconditioned MALA
// transitions each; only BaseStd given, 3), each estimate is within
// aisTolerance of the exact log Z, the reverse annealing's upper estimate
// too, and the checks find it converged.
func TestAISAtItsDefaultsAgainstClosedForms(t *testing.T) {
	for _, tc := range []exactTarget{shiftedGaussian, twoModes, spreadGaussian, correlatedGaussian, unequalModes} {
		t.Run(tc.name, func(t *testing.T) {
			res := aisAtDefaults(t, tc)
			t.Logf("exact %.3f: forward %.3f [%.3f, %.3f] (acceptance %.3f, effective chains %.0f), check %.3f at %d, reverse %.3f; length %.1f",
				tc.logZ, res.LogZ, res.Interval.Lo, res.Interval.Hi, res.Acceptance, res.EffectiveChains, res.Check.LogZ, res.Check.Temperatures, res.Upper.LogZ, res.Length)
			if math.Abs(res.LogZ-tc.logZ) > aisTolerance || math.Abs(res.Upper.LogZ-tc.logZ) > aisTolerance {
				t.Errorf("log Z %.3f forward, %.3f reverse; exact %.3f (tolerance %g)", res.LogZ, res.Upper.LogZ, tc.logZ, aisTolerance)
			}
			if !res.Converged || len(res.Warnings) > 0 {
				t.Errorf("not judged converged: %q", res.Warnings)
			}
			if res.Temperatures != DefaultAISTemperatures || res.Check.Temperatures != DefaultAISTemperatures/2 ||
				len(res.LogWeights) != DefaultAISChains || len(res.Samples) != DefaultAISChains*tc.dim || !(res.Acceptance > 0.3 && res.Acceptance < 0.9) {
				t.Errorf("temperatures %d and %d, %d weights, %d sample values, acceptance %.3f",
					res.Temperatures, res.Check.Temperatures, len(res.LogWeights), len(res.Samples), res.Acceptance)
			}
		})
	}
}

// aisAtDefaults runs AIS at its defaults (σ₀ = 3 given) on tc.
func aisAtDefaults(tb testing.TB, tc exactTarget) AISResult {
	tb.Helper()
	res, err := AIS(testutil.Backend(), context.New(), func(*context.Context) losses.EnergyFn { return tc.energy }, tc.dim,
		AISConfig{AnnealConfig: AnnealConfig{Seed: 3}, BaseStd: 3})
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// BenchmarkAISAtItsDefaults is docs/sampling.md's table of AIS at its
// defaults against the closed forms, with the 64-d correlated Gaussian
// that is too slow for the suite:
//
//	EDLEBM_TEST_BACKEND=cpu go test -run '^$' -bench AISAtItsDefaults -benchtime 1x ./sampling
func BenchmarkAISAtItsDefaults(b *testing.B) {
	fmt.Println("| target | exact log Z | forward [95 % interval] | at half the temperatures | reverse | effective chains | Λ | converged |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for range b.N {
		for _, tc := range []exactTarget{shiftedGaussian, twoModes, spreadGaussian, correlatedGaussian, correlated64, unequalModes} {
			r := aisAtDefaults(b, tc)
			fmt.Printf("| %s | %.3f | %.3f [%.3f, %.3f] | %.3f | %.3f | %.0f of %d | %.1f | %v |\n", tc.name, tc.logZ, r.LogZ, r.Interval.Lo, r.Interval.Hi,
				r.Check.LogZ, r.Upper.LogZ, r.EffectiveChains, r.Chains, r.Length, r.Converged)
		}
	}
}

// TestAISFlagsAStarvedSetting: the setting that train-vectors used before
// the checks (one MALA step of 0.1 at each of 1000 temperatures, equally
// spaced, no preconditioner) on the 20-d Gaussian of spread scales: the
// estimate is off, and the bracket and the weights' effective number say
// so (the check run may: its interval and the estimate's are wide).
func TestAISFlagsAStarvedSetting(t *testing.T) {
	tc := spreadGaussian
	res, err := AIS(testutil.Backend(), context.New(), func(*context.Context) losses.EnergyFn { return tc.energy }, tc.dim,
		AISConfig{AnnealConfig: AnnealConfig{Chains: 256, Temperatures: 1000, Spacing: SpacingLinear, Seed: 3},
			BaseStd: 3, StepSize: 0.1, Metric: MetricIdentity, Transitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exact %.3f: forward %.3f [%.3f, %.3f], check %.3f [%.3f, %.3f], reverse %.3f; %q", tc.logZ, res.LogZ, res.Interval.Lo, res.Interval.Hi,
		res.Check.LogZ, res.Check.Interval.Lo, res.Check.Interval.Hi, res.Upper.LogZ, res.Warnings)
	if !(tc.logZ-res.LogZ > 1) {
		t.Errorf("the starved estimate %.3f is within a nat of the exact %.3f: not a test of the checks", res.LogZ, tc.logZ)
	}
	all := strings.Join(res.Warnings, "\n")
	if res.Converged || !strings.Contains(all, "effective number") || !strings.Contains(all, "nats apart") {
		t.Errorf("converged %v, warnings %q: want the bracket's and the weights' warnings at least", res.Converged, res.Warnings)
	}
}

// TestAISMeasuresTheThermodynamicLength: for the path from N(0, 3²I) to
// the 20-d Gaussian of spread scales, sd_β of the log ratio is known,
// ½·√(2 Σ_i (a_i/λ_i(β))²) with a_i = 1/σ_i² − 1/9 and λ_i(β) = 1/9 + β a_i;
// the pilot's length is within 10 % of its integral (by quadrature).
func TestAISMeasuresTheThermodynamicLength(t *testing.T) {
	const d, base = 20, 3.0
	res, err := AIS(testutil.Backend(), context.New(), func(*context.Context) losses.EnergyFn { return spreadGaussian.energy }, d,
		AISConfig{AnnealConfig: AnnealConfig{Temperatures: 20, Seed: 5}, BaseStd: base})
	if err != nil {
		t.Fatal(err)
	}
	sd := func(beta float64) float64 {
		s := 0.0
		for i := range d {
			sigma := 0.03 * math.Pow(100, float64(i)/float64(d-1))
			a := 1/(sigma*sigma) - 1/(base*base)
			s += 2 * math.Pow(a/(1/(base*base)+beta*a), 2)
		}
		return 0.5 * math.Sqrt(s)
	}
	// The integrand falls by 10⁴ over the first 10⁻³ of β: integrate in
	// u = log β below β = 1e-2.
	exact := quad.Fixed(func(u float64) float64 { return sd(math.Exp(u)) * math.Exp(u) }, math.Log(1e-9), math.Log(1e-2), 2000, nil, 0) +
		quad.Fixed(sd, 1e-2, 1, 2000, nil, 0) + sd(0)*1e-9
	t.Logf("length %.2f, quadrature %.2f", res.Length, exact)
	if math.Abs(res.Length-exact) > 0.1*exact {
		t.Errorf("thermodynamic length %.2f, want %.2f ± 10 %%", res.Length, exact)
	}
}

func TestAISConfigRefusesBadSettings(t *testing.T) {
	ok := AISConfig{AnnealConfig: AnnealConfig{Chains: 2, Temperatures: 2}, BaseStd: 1}
	for _, tc := range []struct {
		edit func(*AISConfig)
		want string
	}{
		{func(c *AISConfig) { c.Chains = 1 }, "AIS chains = 1"},
		{func(c *AISConfig) { c.Temperatures = -1 }, "AIS temperatures = -1"},
		{func(c *AISConfig) { c.Temperatures = 1 }, "AIS temperatures = 1: must be ≥ 2 for the check run"},
		{func(c *AISConfig) { c.Spacing = "geometric" }, `AIS spacing "geometric"`},
		{func(c *AISConfig) { c.Tolerance = -1 }, "AIS tolerance = -1"},
		{func(c *AISConfig) { c.BaseStd = 0 }, "AIS base standard deviation = 0"},
		{func(c *AISConfig) { c.BaseCov = []float64{1, 0, 0} }, "AIS base covariance: 3 values, want 1×1"},
		{func(c *AISConfig) { c.BaseCov, c.BaseMean = []float64{1}, []float64{0, 0} }, "AIS base mean: 2 values, want 1"},
		{func(c *AISConfig) { c.Kernel = "gibbs" }, `AIS kernel "gibbs"`},
		{func(c *AISConfig) { c.Transitions = -1 }, "AIS transitions = -1"},
		{func(c *AISConfig) { c.Metric = "dense" }, `AIS metric "dense"`},
		{func(c *AISConfig) { c.TargetAcceptance = 1 }, "AIS target acceptance = 1"},
		{func(c *AISConfig) { c.StepSize = math.NaN() }, "AIS step size = NaN"},
	} {
		c := ok
		tc.edit(&c)
		_, err := AIS(testutil.Backend(), context.New(), func(*context.Context) losses.EnergyFn { return func(x *Node) *Node { return ReduceSum(x, -1) } }, 1, c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", c, err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("a valid config: %v", err)
	}
}

// TestAISVariants: each kernel, metric and spacing, on the 3-d Gaussian
// from a base far from it, lands within 0.1 of the exact log Z, judged
// converged; without checks, one annealing and no evidence.
func TestAISVariants(t *testing.T) {
	tc := shiftedGaussian
	for _, v := range []struct {
		name string
		edit func(*AISConfig)
	}{
		{"HMC", func(c *AISConfig) { c.Kernel, c.LeapfrogSteps, c.Transitions = KernelHMC, 5, 1 }},
		{"diagonal metric", func(c *AISConfig) { c.Metric = MetricDiagonal }},
		{"no metric", func(c *AISConfig) { c.Metric = MetricIdentity }},
		{"linear spacing", func(c *AISConfig) { c.Spacing = SpacingLinear }},
		{"data base", func(c *AISConfig) {
			c.BaseMean, c.BaseCov = []float64{0.5, -0.5, 0}, []float64{1, 0.3, 0, 0.3, 1, 0, 0, 0, 2}
		}},
		{"no checks", func(c *AISConfig) { c.NoChecks = true }},
	} {
		t.Run(v.name, func(t *testing.T) {
			cfg := AISConfig{AnnealConfig: AnnealConfig{Chains: 128, Temperatures: 300, Seed: 4}, BaseStd: 3}
			v.edit(&cfg)
			res, err := AIS(testutil.Backend(), context.New(), func(*context.Context) losses.EnergyFn { return tc.energy }, tc.dim, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("exact %.3f: forward %.3f (acceptance %.3f), check %.3f, reverse %.3f", tc.logZ, res.LogZ, res.Acceptance, res.Check.LogZ, res.Upper.LogZ)
			if math.Abs(res.LogZ-tc.logZ) > 0.1 || !res.Converged {
				t.Errorf("log Z %.3f, exact %.3f; converged %v %q", res.LogZ, tc.logZ, res.Converged, res.Warnings)
			}
			if cfg.NoChecks != (res.Check.Temperatures == 0 && res.Upper.Temperatures == 0) {
				t.Errorf("no checks %v: check at %d temperatures, reverse at %d", cfg.NoChecks, res.Check.Temperatures, res.Upper.Temperatures)
			}
			if !cfg.NoChecks && math.Abs(res.Upper.LogZ-tc.logZ) > 0.1 {
				t.Errorf("reverse log Z %.3f, exact %.3f", res.Upper.LogZ, tc.logZ)
			}
		})
	}
}
