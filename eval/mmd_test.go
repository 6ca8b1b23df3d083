package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestHammingMMD(t *testing.T) {
	// {00, 11} against {01, 10}: within each set H = 2, k = e^−1; across,
	// H = 1 four times, k = e^−½. MMD² = e^−1 + e^−1 − 2·e^−½.
	got, err := HammingMMD([]float32{0, 0, 1, 1}, []float32{0, 1, 1, 0}, 2)
	if want := 2*math.Exp(-1) - 2*math.Exp(-0.5); err != nil || math.Abs(got-want) > 1e-12 {
		t.Errorf("MMD² = %v, %v; want %v", got, err, want)
	}

	// 70 bits (two words): two samples of one distribution are close to
	// zero, a sample of another is far.
	const d, n = 70, 300
	rng := rand.New(rand.NewPCG(1, 2))
	sample := func(p float64) []float32 {
		out := make([]float32, n*d)
		for i := range out {
			if rng.Float64() < p {
				out[i] = 1
			}
		}
		return out
	}
	same, err := HammingMMD(sample(0.2), sample(0.2), d)
	if err != nil {
		t.Fatal(err)
	}
	other, err := HammingMMD(sample(0.2), sample(0.5), d)
	if err != nil {
		t.Fatal(err)
	}
	// Bits independent, so k's mean is Π over bits: for p, q,
	// E k = (1 − r + r·e^{−1/d})^d with r = p(1−q) + q(1−p) the chance two
	// bits differ; MMD² = E_pp + E_qq − 2 E_pq.
	mean := func(p, q float64) float64 {
		r := p*(1-q) + q*(1-p)
		return math.Pow(1-r+r*math.Exp(-1.0/d), d)
	}
	want := mean(0.2, 0.2) + mean(0.5, 0.5) - 2*mean(0.2, 0.5)
	if math.Abs(same) > 0.01 || math.Abs(other-want) > 0.1*want {
		t.Errorf("MMD² same distribution %.4g (want ≈ 0), different %.4g (want ≈ %.4g)", same, other, want)
	}

	if _, err := HammingMMD([]float32{0, 1, 1}, []float32{0, 1, 1, 0}, 2); err == nil || !strings.Contains(err.Error(), "3 and 4 values") {
		t.Errorf("ragged input: %v, want an error naming the counts", err)
	}
}
