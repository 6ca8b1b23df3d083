package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestGelmanRubinHandComputed(t *testing.T) {
	tests := []struct {
		name   string
		split  bool
		chains [][]float64
		want   float64
	}{
		// Means 2 and 4, s² = 1 each: W = 1, B/n = 2,
		// V̂ = ⅔·1 + 2 = 8/3.
		{"two shifted chains", false, [][]float64{{1, 2, 3}, {3, 4, 5}}, math.Sqrt(8.0 / 3)},
		// s² = 2 and 0: W = 1; equal means: B = 0; V̂ = ½.
		{"equal means, R̂ < 1", false, [][]float64{{0, 2}, {1, 1}}, math.Sqrt(0.5)},
		// Means 1, 2, 6 (grand mean 3): B/n = (4+1+9)/2 = 7; s² = 1, 1, 4:
		// W = 2; V̂ = ⅔·2 + 7 = 25/3.
		{"three chains", false, [][]float64{{0, 1, 2}, {1, 2, 3}, {4, 6, 8}}, math.Sqrt(25.0 / 6)},
		// Halves {1,2,3} and {4,5,6}: means 2, 5, W = 1, B/n = 4.5,
		// V̂ = ⅔ + 4.5 = 31/6.
		{"split, one chain", true, [][]float64{{1, 2, 3, 4, 5, 6}}, math.Sqrt(31.0 / 6)},
		{"split, odd length drops the middle", true, [][]float64{{1, 2, 3, 99, 4, 5, 6}}, math.Sqrt(31.0 / 6)},
		// Halves {0,2}, {2,0}, {1,1}, {1,1}... means all 1: B = 0;
		// s² = 2, 2, 0, 0: W = 1; V̂ = ½.
		{"split, two chains", true, [][]float64{{0, 2, 2, 0}, {1, 1, 1, 1}}, math.Sqrt(0.5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got float64
			var err error
			if tc.split {
				got, err = SplitGelmanRubin(tc.chains)
			} else {
				got, err = GelmanRubin(tc.chains)
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-14 {
				t.Errorf("R̂ = %.16g, want %.16g", got, tc.want)
			}
		})
	}
}

// referenceRHat computes R̂ from gonum/stat's means and unbiased variances:
// W is the mean of the chains' variances and B/n the variance of their means.
func referenceRHat(chains [][]float64) float64 {
	m, n := float64(len(chains)), float64(len(chains[0]))
	means := make([]float64, len(chains))
	var w float64
	for j, c := range chains {
		mean, variance := stat.MeanVariance(c, nil)
		means[j] = mean
		w += variance / m
	}
	bOverN := stat.Variance(means, nil)
	return math.Sqrt(((n-1)/n*w + bOverN) / w)
}

func TestGelmanRubinRandomChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	gaussianChains := func(m, n int, mean func(j, t int) float64) [][]float64 {
		chains := make([][]float64, m)
		for j := range chains {
			chains[j] = make([]float64, n)
			for i := range chains[j] {
				chains[j][i] = mean(j, i) + rng.NormFloat64()
			}
		}
		return chains
	}
	const n = 2000
	tests := []struct {
		name             string
		chains           [][]float64
		plainLo, plainHi float64
		splitLo, splitHi float64
	}{
		{"iid from one distribution", gaussianChains(4, n, func(int, int) float64 { return 0 }), 0.99, 1.01, 0.99, 1.01},
		{"different means", gaussianChains(4, n, func(j, _ int) float64 { return 3 * float64(j%2) }), 1.5, math.Inf(1), 1.5, math.Inf(1)},
		// Every chain drifts the same way: only splitting notices.
		{"common drift", gaussianChains(4, n, func(_, i int) float64 { return 4 * float64(i) / n }), 0.99, 1.01, 1.3, math.Inf(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, err := GelmanRubin(tc.chains)
			if err != nil {
				t.Fatal(err)
			}
			if plain < tc.plainLo || plain > tc.plainHi {
				t.Errorf("R̂ = %v, want in [%v, %v]", plain, tc.plainLo, tc.plainHi)
			}
			if want := referenceRHat(tc.chains); math.Abs(plain-want) > 1e-12 {
				t.Errorf("R̂ = %.15g, gonum/stat reference %.15g", plain, want)
			}
			split, err := SplitGelmanRubin(tc.chains)
			if err != nil {
				t.Fatal(err)
			}
			if split < tc.splitLo || split > tc.splitHi {
				t.Errorf("split R̂ = %v, want in [%v, %v]", split, tc.splitLo, tc.splitHi)
			}
			var halves [][]float64
			for _, c := range tc.chains {
				halves = append(halves, c[:n/2], c[n/2:])
			}
			if want := referenceRHat(halves); math.Abs(split-want) > 1e-12 {
				t.Errorf("split R̂ = %.15g, gonum/stat reference %.15g", split, want)
			}
		})
	}
}

func TestGelmanRubinErrors(t *testing.T) {
	tests := []struct {
		name   string
		split  bool
		chains [][]float64
		want   string
	}{
		{"no chains", false, nil, "0 chains: want at least 2"},
		{"one chain", false, [][]float64{{1, 2, 3}}, "1 chains: want at least 2"},
		{"one draw", false, [][]float64{{1}, {2}}, "chains of 1 draws: want at least 2"},
		{"unequal lengths", false, [][]float64{{1, 2, 3}, {1, 2}}, "chain 1 has 2 draws, want 3"},
		{"NaN", false, [][]float64{{1, 2}, {math.NaN(), 2}}, "chain 1: value 0 is NaN"},
		{"constant chains", false, [][]float64{{0.1, 0.1, 0.1}, {0.3, 0.3, 0.3}}, "W = 0"},
		{"split, no chains", true, nil, "no chains"},
		{"split, too short", true, [][]float64{{1, 2, 3}}, "chains of 3 draws: want at least 4"},
		{"split, unequal lengths", true, [][]float64{{1, 2, 3, 4}, {1, 2, 3, 4, 5}}, "chain 1 has 5 draws, want 4"},
		{"split, infinite", true, [][]float64{{1, 2, 3, math.Inf(1)}}, "chain 0: value 3 is +Inf"},
		{"split, constant", true, [][]float64{{7, 7, 7, 7}}, "W = 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.split {
				_, err = SplitGelmanRubin(tc.chains)
			} else {
				_, err = GelmanRubin(tc.chains)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAutocorrelationHandComputed(t *testing.T) {
	tests := []struct {
		name   string
		x      []float64
		maxLag int
		want   []float64
	}{
		// Deviations −1.5, −.5, .5, 1.5; Σd² = 5; lag sums 1.25, −1.5, −2.25.
		{"ramp", []float64{1, 2, 3, 4}, 3, []float64{1, 0.25, -0.3, -0.45}},
		{"alternating", []float64{1, -1, 1, -1}, 3, []float64{1, -0.75, 0.5, -0.25}},
		{"lag 0 only", []float64{3, 5}, 0, []float64{1}},
		// Mean 1, deviations −1, 2, −1: Σd² = 6; lag 1: −2 −2 = −4.
		{"spike", []float64{0, 3, 0}, 2, []float64{1, -4.0 / 6, 1.0 / 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Autocorrelation(tc.x, tc.maxLag)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d lags, want %d", len(got), len(tc.want))
			}
			for k := range got {
				if math.Abs(got[k]-tc.want[k]) > 1e-15 {
					t.Errorf("ρ_%d = %v, want %v", k, got[k], tc.want[k])
				}
			}
		})
	}
}

// TestMCMCDiagnosticsLargeOffset checks that R̂ and the autocorrelation do
// not change when 1e8 is added to every draw, against values hand-computed
// for the unshifted draws: the sums of squared deviations must not cancel
// catastrophically when the mean is large and not exactly representable.
func TestMCMCDiagnosticsLargeOffset(t *testing.T) {
	const offset = 1e8
	shift := func(x ...float64) []float64 {
		for i := range x {
			x[i] += offset
		}
		return x
	}
	// Deviations −⅓, −⅓, ⅔: Σd² = ⅔; lag sums −1/9, −2/9.
	rho, err := Autocorrelation(shift(0, 0, 1), 2)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []float64{1, -1.0 / 6, -1.0 / 3} {
		if math.Abs(rho[k]-want) > 1e-6 {
			t.Errorf("ρ_%d = %v, want %v", k, rho[k], want)
		}
	}
	// Means ⅓ and 4/3 (B/n = ½), s² = ⅓ each (W = ⅓):
	// V̂ = ⅔·⅓ + ½ = 13/18, R̂ = √(13/6).
	rHat, err := GelmanRubin([][]float64{shift(0, 0, 1), shift(1, 1, 2)})
	if want := math.Sqrt(13.0 / 6); err != nil || math.Abs(rHat-want) > 1e-6 {
		t.Errorf("R̂ = %v (%v), want %v", rHat, err, want)
	}
}

// TestAutocorrelationAR1 checks ρ_k ≈ φ^k for a long stationary AR(1)
// series x_t = φ x_{t−1} + ε_t.
func TestAutocorrelationAR1(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n = 200000
	for _, phi := range []float64{0.9, 0.5, -0.7} {
		x := make([]float64, n)
		x[0] = rng.NormFloat64() / math.Sqrt(1-phi*phi) // stationary start
		for i := 1; i < n; i++ {
			x[i] = phi*x[i-1] + rng.NormFloat64()
		}
		rho, err := Autocorrelation(x, 6)
		if err != nil {
			t.Fatal(err)
		}
		for k, r := range rho {
			// The standard error is below 0.01 for these φ and n.
			if want := math.Pow(phi, float64(k)); math.Abs(r-want) > 0.02 {
				t.Errorf("φ = %v: ρ_%d = %.4f, want ≈ %.4f", phi, k, r, want)
			}
		}
	}
}

func TestAutocorrelationErrors(t *testing.T) {
	tests := []struct {
		name   string
		x      []float64
		maxLag int
		want   string
	}{
		{"empty", nil, 0, "maxLag = 0 for 0 values"},
		{"negative lag", []float64{1, 2}, -1, "maxLag = -1"},
		{"lag too large", []float64{1, 2, 3}, 3, "want 0 ≤ maxLag < 3"},
		{"constant", []float64{0.1, 0.1, 0.1}, 1, "zero variance"},
		{"single value", []float64{4}, 0, "zero variance"},
		{"NaN", []float64{1, math.NaN(), 2}, 1, "value 1 is NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Autocorrelation(tc.x, tc.maxLag)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
