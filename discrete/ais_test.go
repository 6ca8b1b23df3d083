package discrete

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"gonum.org/v1/gonum/floats"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
)

// AIS on 10 interacting bits, whose 1024 states are enumerated here for
// the exact log Z: the estimate and the reverse run's are within 0.1 of it
// (about the interval's half-width at 200 chains), the bootstrap interval
// holds it and the checks find the annealing converged, from a uniform
// base and from a base far from the model's marginals. The context's
// random stream is where it was.
func TestAISMatchesEnumeration(t *testing.T) {
	const d = 10
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([][]float32, d)
	for i := range w {
		w[i] = make([]float32, d)
	}
	bias := make([]float32, d)
	for i := range d {
		bias[i] = float32(2*rng.Float64() - 1)
		for j := i + 1; j < d; j++ {
			w[i][j] = float32(1.2 * (rng.Float64() - 0.5))
			w[j][i] = w[i][j]
		}
	}
	energyNaive := func(s int) float64 {
		e := 0.0
		for i := range d {
			xi := float64(s >> i & 1)
			e += float64(bias[i]) * xi
			for j := i + 1; j < d; j++ {
				e += float64(w[i][j]) * xi * float64(s>>j&1)
			}
		}
		return e
	}
	energies := make([]float64, 1<<d)
	for s := range energies {
		energies[s] = -energyNaive(s)
	}
	exact := floats.LogSumExp(energies) // gonum's, independent of the code under test
	exactMeanEnergy := 0.0
	for s, negE := range energies {
		exactMeanEnergy += math.Exp(negE-exact) * energyNaive(s)
	}

	energyOf := func(ctx *context.Context) losses.EnergyFn {
		return func(x *Node) *Node {
			g := x.Graph()
			pairs := MulScalar(ReduceSum(Mul(MatMul(x, Const(g, w)), x), 1), 0.5)
			return Add(pairs, ReduceSum(Mul(x, InsertAxes(Const(g, bias), 0)), 1))
		}
	}
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(1); err != nil {
		t.Fatal(err)
	}
	stream := func() []uint64 {
		v := ctx.GetVariableByScopeAndName(context.RootScope, context.RNGStateVariableName)
		return tensors.MustCopyFlatData[uint64](v.MustValue())
	}
	before := stream()
	skewed := []float64{0.9, 0.1, 0.9, 0.1, 0.9, 0.1, 0.9, 0.1, 0.9, 0.1}
	uniform := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
	for name, base := range map[string][]float64{"uniform base": uniform, "skewed base": skewed} {
		res, err := AIS(testutil.Backend(), ctx, energyOf, base, AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 200, Temperatures: 300, Seed: 7}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: log Z %.4f [%.4f, %.4f], exact %.4f; acceptance %.2f; check %.4f, upper %.4f, length %.2f, ess %.0f; %q", name, res.LogZ, res.Interval.Lo, res.Interval.Hi, exact, res.Acceptance, res.Check.LogZ, res.Upper.LogZ, res.Length, res.EffectiveChains, res.Warnings)
		if !(math.Abs(res.LogZ-exact) <= 0.1) || !(res.Interval.Lo <= exact && exact <= res.Interval.Hi) || !(math.Abs(res.Upper.LogZ-exact) <= 0.1) {
			t.Errorf("%s: log Z %.4f with interval [%.4f, %.4f], reverse %.4f; exact %.4f", name, res.LogZ, res.Interval.Lo, res.Interval.Hi, res.Upper.LogZ, exact)
		}
		if !res.Converged {
			t.Errorf("%s: not judged converged: %q", name, res.Warnings)
		}
		if len(res.LogWeights) != 200 || len(res.Samples) != 200*d || !(res.Acceptance > 0 && res.Acceptance < 1) {
			t.Errorf("%s: %d log weights, %d sample values, acceptance %v", name, len(res.LogWeights), len(res.Samples), res.Acceptance)
		}
		// The chains end as the model's samples: their mean energy, weighted
		// by the importance weights, against the exact expectation.
		meanEnergy := 0.0
		for c := range 200 {
			s := 0
			for i := range d {
				s |= int(res.Samples[c*d+i]) << i
			}
			meanEnergy += math.Exp(res.LogWeights[c]-res.LogZ) / 200 * energyNaive(s)
		}
		if !(math.Abs(meanEnergy-exactMeanEnergy) <= 0.3) {
			t.Errorf("%s: weighted mean energy of the final states %.3f, want %.3f ± 0.3", name, meanEnergy, exactMeanEnergy)
		}
	}
	if after := stream(); !slicesEqual(before, after) {
		t.Error("AIS moved the context's random stream")
	}
}

func slicesEqual(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAISRejectsBadSettings(t *testing.T) {
	energyOf := func(*context.Context) losses.EnergyFn { return func(x *Node) *Node { return ReduceSum(x, 1) } }
	for _, tc := range []struct {
		cfg  AISConfig
		base []float64
		want string
	}{
		{AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 1, Temperatures: 10}}, []float64{0.5}, "AIS chains = 1"},
		{AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 4, Temperatures: -1}}, []float64{0.5}, "AIS temperatures = -1"},
		{AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 4, Temperatures: 10}}, nil, "no bits"},
		{AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 4, Temperatures: 10}}, []float64{0.5, math.NaN()}, "bit 1 is NaN"},
		{AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 4, Temperatures: 10}, Transitions: -1}, []float64{0.5}, "AIS transitions = -1"},
	} {
		_, err := AIS(testutil.Backend(), context.New(), energyOf, tc.base, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("AIS(%+v, %v): error %v, want one containing %q", tc.cfg, tc.base, err, tc.want)
		}
	}
}
