package eval

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestESSAgainstArviZ compares the three effective sample sizes with
// ArviZ's on fixed arrays (testdata/make_ess_fixtures.py): autocorrelated,
// antithetic, single, heavy-tailed, tied and badly mixed chains, an odd
// number of draws.
func TestESSAgainstArviZ(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "ess-arviz.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Cases []struct {
			Name                 string
			Chains               [][]float64
			Identity, Bulk, Tail float64
		}
	}
	if err := json.Unmarshal(data, &fixture); err != nil {
		t.Fatal(err)
	}
	if len(fixture.Cases) < 7 {
		t.Fatalf("%d cases in the fixture, want 7", len(fixture.Cases))
	}
	for _, c := range fixture.Cases {
		for _, m := range []struct {
			name string
			f    func([][]float64) (float64, error)
			want float64
		}{{"ESS", ESS, c.Identity}, {"BulkESS", BulkESS, c.Bulk}, {"TailESS", TailESS, c.Tail}} {
			got, err := m.f(c.Chains)
			if err != nil {
				t.Errorf("%s, %s: %v", c.Name, m.name, err)
				continue
			}
			// ArviZ's autocovariances go through an FFT: rounding only.
			if math.Abs(got-m.want) > 1e-8*m.want {
				t.Errorf("%s, %s = %.10g, ArviZ %.10g", c.Name, m.name, got, m.want)
			}
		}
	}
}

// TestESSOfAnAR1Chain: for x_t = ρx_{t−1} + ε_t the integrated
// autocorrelation time is (1 + ρ)/(1 − ρ), so ESS/N → (1 − ρ)/(1 + ρ).
func TestESSOfAnAR1Chain(t *testing.T) {
	const chains, draws = 4, 20000
	for _, rho := range []float64{0, 0.5, 0.9} {
		rng := rand.New(rand.NewPCG(11, uint64(100*rho)))
		x := make([][]float64, chains)
		for j := range x {
			x[j] = make([]float64, draws)
			x[j][0] = rng.NormFloat64() / math.Sqrt(1-rho*rho)
			for i := 1; i < draws; i++ {
				x[j][i] = rho*x[j][i-1] + rng.NormFloat64()
			}
		}
		got, err := ESS(x)
		if err != nil {
			t.Fatal(err)
		}
		want := chains * draws * (1 - rho) / (1 + rho)
		if math.Abs(got-want) > 0.1*want {
			t.Errorf("ρ = %g: ESS %.0f, want %.0f within 10 %%", rho, got, want)
		}
	}
}

func TestESSRefusesBadChains(t *testing.T) {
	for _, tc := range []struct {
		chains [][]float64
		want   string
	}{
		{nil, "no chains"},
		{[][]float64{{1, 2, 3}}, "3 draws: want at least 4"},
		{[][]float64{{1, 2, 3, 4}, {1, 2, 3}}, "chain 1 has 3 draws"},
		{[][]float64{{1, 2, math.NaN(), 4}}, "chain 0, draw 2 is NaN"},
	} {
		for _, f := range []func([][]float64) (float64, error){ESS, BulkESS, TailESS} {
			if _, err := f(tc.chains); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: error %v, want one containing %q", tc.chains, err, tc.want)
			}
		}
	}
	// One constant value: every draw counts.
	if got, err := BulkESS([][]float64{{2, 2, 2, 2}, {2, 2, 2, 2}}); err != nil || got != 8 {
		t.Errorf("constant chains: %v, %v; want 8", got, err)
	}
}
