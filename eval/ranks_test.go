package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRankShareCountsPairs: the share against a naive count over every
// pair (ties one half), on samples with many ties and without.
func TestRankShareCountsPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		draw   func() float64
		n, m   int
		offset float64
	}{
		{"continuous", rng.NormFloat64, 50, 70, 0.3},
		{"ten values", func() float64 { return float64(rng.IntN(10)) }, 40, 90, 1},
		{"one value each", func() float64 { return 1 }, 3, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := make([]float64, tc.n), make([]float64, tc.m)
			for i := range a {
				a[i] = tc.draw() + tc.offset
			}
			for i := range b {
				b[i] = tc.draw()
			}
			var pairs float64
			for _, x := range a {
				for _, y := range b {
					switch {
					case x > y:
						pairs++
					case x == y:
						pairs += 0.5
					}
				}
			}
			share, _, err := RankShare(a, b)
			if want := pairs / float64(tc.n*tc.m); err != nil || math.Abs(share-want) > 1e-12 {
				t.Errorf("share %v (%v), want %v", share, err, want)
			}
		})
	}
	if _, _, err := RankShare(nil, []float64{1}); err == nil {
		t.Error("an empty sample: no error")
	}
	if _, _, err := RankShare([]float64{math.NaN()}, []float64{1}); err == nil {
		t.Error("NaN: no error")
	}
}

// TestRankShareZIsStandardUnderTheNull: two samples of one law (a
// continuous one, and one of two values, where the tie correction
// matters): over 2,000 pairs of samples z has mean 0 and variance 1, and
// exceeds 1.645 in 5 % of them, within three standard errors; a shift
// of half a standard deviation gives z far above 3.
func TestRankShareZIsStandardUnderTheNull(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name string
		draw func() float64
	}{
		{"continuous", rng.NormFloat64},
		{"two values", func() float64 { return float64(rng.IntN(2)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const trials = 2000
			var mean, square, above float64
			for range trials {
				a, b := make([]float64, 30), make([]float64, 45)
				for i := range a {
					a[i] = tc.draw()
				}
				for i := range b {
					b[i] = tc.draw()
				}
				_, z, err := RankShare(a, b)
				if err != nil {
					t.Fatal(err)
				}
				mean, square = mean+z/trials, square+z*z/trials
				if z > 1.645 {
					above++
				}
			}
			variance, share := square-mean*mean, above/trials
			// standard errors: mean 1/√n, variance ≈ √(2/n), share √(p(1−p)/n)
			if math.Abs(mean) > 3/math.Sqrt(trials) || math.Abs(variance-1) > 3*math.Sqrt(2.0/trials) || math.Abs(share-0.05) > 3*math.Sqrt(0.05*0.95/trials) {
				t.Errorf("z: mean %.4f, variance %.4f, share above 1.645 %.4f; want 0, 1, 0.05", mean, variance, share)
			}
		})
	}
	a, b := make([]float64, 400), make([]float64, 400)
	for i := range a {
		a[i], b[i] = rng.NormFloat64()+0.5, rng.NormFloat64()
	}
	if share, z, _ := RankShare(a, b); z < 5 || share < 0.6 {
		t.Errorf("a shift of 0.5: share %.3f, z %.2f; want about 0.64, 7", share, z)
	}
}
