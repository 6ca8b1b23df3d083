package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// naiveStats is the textbook double loop over samples and component pairs.
func naiveStats(x [][]float64) ([]float64, [][]float64) {
	n, d := len(x), len(x[0])
	mu := make([]float64, d)
	for _, row := range x {
		for j := range d {
			mu[j] += row[j] / float64(n)
		}
	}
	cov := make([][]float64, d)
	for a := range d {
		cov[a] = make([]float64, d)
		for b := range d {
			for _, row := range x {
				cov[a][b] += (row[a] - mu[a]) * (row[b] - mu[b])
			}
			cov[a][b] /= float64(n - 1)
		}
	}
	return mu, cov
}

func TestGaussianStatsHandComputed(t *testing.T) {
	// Points (0,0), (2,0), (0,2): mean (⅔, ⅔); deviations (−⅔,−⅔),
	// (4/3,−⅔), (−⅔,4/3); Σxx = (4+16+4)/9/2 = 4/3, Σxy = (4−8−8)/9/2 = −⅔.
	x := [][]float64{{0, 0}, {2, 0}, {0, 2}}
	mu, sigma, err := GaussianStats(x)
	if err != nil {
		t.Fatal(err)
	}
	wantMu := []float64{2.0 / 3, 2.0 / 3}
	wantSigma := mat.NewSymDense(2, []float64{4.0 / 3, -2.0 / 3, -2.0 / 3, 4.0 / 3})
	for i := range wantMu {
		if math.Abs(mu[i]-wantMu[i]) > 1e-15 {
			t.Errorf("mu[%d] = %v, want %v", i, mu[i], wantMu[i])
		}
	}
	if !mat.EqualApprox(sigma, wantSigma, 1e-15) {
		t.Errorf("sigma = %v, want %v", mat.Formatted(sigma), mat.Formatted(wantSigma))
	}
}

func TestGaussianStatsMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	tests := []struct {
		name   string
		n, dim int
		offset float64 // a large common offset tests the two-pass centring
	}{
		{"1-D", 5, 1, 0},
		{"n = dim + 1", 4, 3, 0},
		{"one chunk", 100, 7, 0},
		{"several chunks, ragged last", 2*statsChunk + 37, 5, 0},
		{"exact chunk multiple", statsChunk * 2, 3, 0},
		{"large offset", 300, 4, 1e6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([][]float64, tc.n)
			flat := make([]float64, 0, tc.n*tc.dim)
			for i := range x {
				x[i] = make([]float64, tc.dim)
				for j := range x[i] {
					// Correlated components with different scales.
					x[i][j] = tc.offset + float64(j+1)*rng.NormFloat64()
					if j > 0 {
						x[i][j] += 0.5 * x[i][j-1]
					}
				}
				flat = append(flat, x[i]...)
			}
			wantMu, wantCov := naiveStats(x)

			for _, variant := range []string{"rows", "flat"} {
				var mu []float64
				var sigma *mat.SymDense
				var err error
				if variant == "rows" {
					mu, sigma, err = GaussianStats(x)
				} else {
					mu, sigma, err = GaussianStatsFlat(flat, tc.dim)
				}
				if err != nil {
					t.Fatalf("%s: %v", variant, err)
				}
				for j := range wantMu {
					if math.Abs(mu[j]-wantMu[j]) > 1e-12*math.Max(1, math.Abs(wantMu[j])) {
						t.Errorf("%s: mu[%d] = %v, want %v", variant, j, mu[j], wantMu[j])
					}
				}
				for a := range tc.dim {
					for b := range tc.dim {
						if math.Abs(sigma.At(a, b)-wantCov[a][b]) > 1e-9 {
							t.Errorf("%s: sigma[%d,%d] = %v, want %v", variant, a, b, sigma.At(a, b), wantCov[a][b])
						}
					}
				}
			}
		})
	}
}

func TestGaussianStatsErrors(t *testing.T) {
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"no samples", func() error { _, _, err := GaussianStats(nil); return err }, "no samples"},
		{"n = dim", func() error { _, _, err := GaussianStats([][]float64{{1, 2}, {3, 4}}); return err }, "n = 2 samples of dimension dim = 2"},
		{"n < dim, flat", func() error { _, _, err := GaussianStatsFlat(make([]float64, 12), 4); return err }, "n = 3 samples of dimension dim = 4"},
		{"ragged rows", func() error { _, _, err := GaussianStats([][]float64{{1, 2}, {3}, {4, 5}}); return err }, "sample 1 has dimension 1, want 2"},
		{"dimension 0", func() error { _, _, err := GaussianStats([][]float64{{}, {}}); return err }, "dimension 0"},
		{"flat not divisible", func() error { _, _, err := GaussianStatsFlat(make([]float64, 7), 2); return err }, "7 values with dimension 2"},
		{"flat dimension 0", func() error { _, _, err := GaussianStatsFlat(make([]float64, 4), 0); return err }, "dimension 0"},
		{"NaN", func() error { _, _, err := GaussianStats([][]float64{{1}, {math.NaN()}, {2}}); return err }, "sample 1, component 0 is NaN"},
		{"Inf", func() error { _, _, err := GaussianStatsFlat([]float64{1, 2, 3, math.Inf(-1), 5, 6}, 2); return err }, "sample 1, component 1 is -Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestGaussianStatsFrechetEndToEnd checks that statistics of two large
// samples from known Gaussians give roughly the known distance.
func TestGaussianStatsFrechetEndToEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const n = 20000
	sample := func(mean, std []float64) [][]float64 {
		x := make([][]float64, n)
		for i := range x {
			x[i] = make([]float64, len(mean))
			for j := range mean {
				x[i][j] = mean[j] + std[j]*rng.NormFloat64()
			}
		}
		return x
	}
	mu1, sigma1, err := GaussianStats(sample([]float64{0, 1, 0}, []float64{1, 2, 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	mu2, sigma2, err := GaussianStats(sample([]float64{1, 1, 0}, []float64{1, 1, 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := FrechetDistance(mu1, sigma1, mu2, sigma2)
	if err != nil {
		t.Fatal(err)
	}
	// ‖Δμ‖² = 1 and (√4 − √1)² = 1.
	if math.Abs(got-2) > 0.1 {
		t.Errorf("distance from samples = %v, want ≈ 2", got)
	}
}
