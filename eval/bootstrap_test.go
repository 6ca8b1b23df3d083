package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// The bootstrap distribution of a sample mean has variance
// (1/n)·(1/n)Σ(x − x̄)² exactly; 4,000 resamples estimate its standard
// deviation to about 1 %.
func TestBootstrapOfTheMeanMatchesTheClosedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 50
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.ExpFloat64()
	}
	mean, variance := stat.PopMeanVariance(x, nil)
	want := math.Sqrt(variance / n)
	means := Bootstrap(n, 4000, 7, func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += x[i] / n
		}
		return s
	})
	m, sd := 0.0, 0.0
	for _, v := range means {
		m += v / float64(len(means))
	}
	for _, v := range means {
		sd += (v - m) * (v - m) / float64(len(means)-1)
	}
	if sd = math.Sqrt(sd); math.Abs(sd-want)/want > 0.05 || math.Abs(m-mean) > 3*want/math.Sqrt(4000) {
		t.Errorf("bootstrap mean %.5f ± %.5f, want %.5f ± %.5f", m, sd, mean, want)
	}
	again := Bootstrap(n, 4000, 7, func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += x[i] / n
		}
		return s
	})
	if !reflect.DeepEqual(means, again) {
		t.Error("the same seed gave different resamples")
	}
}

func TestBootstrapDropsNaN(t *testing.T) {
	calls := 0
	values := Bootstrap(3, 10, 1, func([]int) float64 {
		calls++
		if calls%2 == 0 {
			return math.NaN()
		}
		return 1
	})
	if len(values) != 5 {
		t.Errorf("%d values from 10 resamples of which 5 NaN, want 5", len(values))
	}
}

func TestPercentileInterval(t *testing.T) {
	// 0, 1, …, 100 in scrambled order: quantile q is 100q exactly.
	values := make([]float64, 101)
	for i := range values {
		values[i] = float64((i * 37) % 101)
	}
	for _, c := range []struct{ level, lo, hi float64 }{{0.95, 2.5, 97.5}, {0.5, 25, 75}, {0.9, 5, 95}} {
		lo, hi, err := PercentileInterval(values, c.level)
		if err != nil || math.Abs(lo-c.lo) > 1e-12 || math.Abs(hi-c.hi) > 1e-12 {
			t.Errorf("level %v: [%v, %v] (%v), want [%v, %v]", c.level, lo, hi, err, c.lo, c.hi)
		}
	}
	// Between order statistics: 4 values, q = 0.25 sits at position 0.75.
	if lo, hi, _ := PercentileInterval([]float64{10, 0, 30, 20}, 0.5); lo != 7.5 || hi != 22.5 {
		t.Errorf("[%v, %v], want [7.5, 22.5]", lo, hi)
	}
	for _, bad := range []struct {
		values []float64
		level  float64
	}{{nil, 0.9}, {[]float64{1}, 1}, {[]float64{1}, 0}} {
		if _, _, err := PercentileInterval(bad.values, bad.level); err == nil {
			t.Errorf("PercentileInterval(%v, %v): no error", bad.values, bad.level)
		}
	}
}

// TestPercentileIntervalEdges checks the quantiles at the ends of the order
// statistics: every quantile of one value is that value, and a level so
// close to 1 that (1+level)/2 rounds to 1 gives the maximum (and the minimum
// up to 2⁻⁵⁴ of the range) rather than reading past the last value.
func TestPercentileIntervalEdges(t *testing.T) {
	tests := []struct {
		name          string
		values        []float64
		level, lo, hi float64
	}{
		{"one value", []float64{3}, 0.9, 3, 3},
		{"level next to 1", []float64{10, 0, 30, 20}, math.Nextafter(1, 0), 0, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, err := PercentileInterval(tc.values, tc.level)
			if err != nil || math.Abs(lo-tc.lo) > 1e-12 || hi != tc.hi {
				t.Errorf("PercentileInterval(%v, %v) = [%v, %v] (%v), want [%v, %v]", tc.values, tc.level, lo, hi, err, tc.lo, tc.hi)
			}
		})
	}
}

func TestMeanAUPRC(t *testing.T) {
	labels := []bool{true, false, true, false, false}
	columns := [][]float64{{0.9, 0.1, 0.8, 0.2, 0.3}, {0.1, 0.9, 0.8, 0.2, 0.3}}
	// Column 0 ranks both anomalies first: 1. Column 1's order is 0.9 (n),
	// 0.8 (a), 0.3, 0.2, 0.1 (a): precision 1/2 at recall 1/2, 2/5 at 1.
	want := (1 + (0.5*0.5 + 0.5*0.4)) / 2
	all := []int{0, 1, 2, 3, 4}
	if got := MeanAUPRC(labels, columns, all); math.Abs(got-want) > 1e-15 {
		t.Errorf("MeanAUPRC = %v, want %v", got, want)
	}
	// Index 0 twice and 1: one anomaly scored 0.9, one normal image 0.1
	// (column 0) or 0.9 (column 1, a tie at the top: precision 2/3).
	if got := MeanAUPRC(labels, columns, []int{0, 0, 1}); math.Abs(got-(1+2.0/3)/2) > 1e-15 {
		t.Errorf("MeanAUPRC of a resample = %v, want %v", got, (1+2.0/3)/2)
	}
	if got := MeanAUPRC(labels, columns, []int{1, 3}); !math.IsNaN(got) {
		t.Errorf("MeanAUPRC without anomalies = %v, want NaN", got)
	}
}

// The percentile interval of the bootstrapped mean of n draws is about
// x̄ ± 1.96·s/√n, s² = (1/n)Σ(x − x̄)² the bootstrap distribution's
// variance times n.
func TestMeanIntervalMatchesTheNormalApproximation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 400
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()*2 + 1
	}
	mean, variance := stat.PopMeanVariance(x, nil)
	half := 1.96 * math.Sqrt(variance/n)
	got, err := MeanInterval(x, 4000, 9)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Lo-(mean-half)) > 0.1*half || math.Abs(got.Hi-(mean+half)) > 0.1*half {
		t.Errorf("interval [%.4f, %.4f], want about [%.4f, %.4f]", got.Lo, got.Hi, mean-half, mean+half)
	}
}

// The bootstrap interval of a sample's Fréchet distance to fixed
// statistics is about as wide as the spread of the distance over fresh
// samples of the same distribution (here N((0.5, 0, 0), I) against N(0, I),
// whose distance is 0.25).
func TestFrechetDistanceIntervalSpansTheSamplingSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, dim = 400, 3
	draw := func() []float64 {
		f := make([]float64, n*dim)
		for i := range f {
			f[i] = rng.NormFloat64()
			if i%dim == 0 {
				f[i] += 0.5
			}
		}
		return f
	}
	mu, sigma := make([]float64, dim), mat.NewSymDense(dim, nil)
	for i := range dim {
		sigma.SetSym(i, i, 1)
	}
	var fresh []float64
	for range 400 {
		d, err := FrechetDistanceToStats(draw(), mu, sigma)
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, d)
	}
	lo, hi, err := PercentileInterval(fresh, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	features, resampled := draw(), 0
	got, err := FrechetDistanceIntervalEach(features, mu, sigma, 400, 11, func() { resampled++ })
	if err != nil {
		t.Fatal(err)
	}
	if resampled != 400 {
		t.Errorf("each called %d times, want once for each of the 400 resamples", resampled)
	}
	if plain, err := FrechetDistanceInterval(features, mu, sigma, 400, 11); err != nil || plain != got {
		t.Errorf("FrechetDistanceInterval gives %+v (%v), with each %+v: want the same", plain, err, got)
	}
	if ratio := (got.Hi - got.Lo) / (hi - lo); ratio < 0.6 || ratio > 1.6 {
		t.Errorf("bootstrap interval [%.4f, %.4f] is %.2f× as wide as the fresh samples' [%.4f, %.4f]", got.Lo, got.Hi, ratio, lo, hi)
	}
	if !(got.Lo < 0.25+0.5*(hi-lo) && got.Hi > 0.25-0.5*(hi-lo)) {
		t.Errorf("bootstrap interval [%.4f, %.4f] is far from the distance 0.25", got.Lo, got.Hi)
	}
	if _, err := FrechetDistanceInterval(make([]float64, 7), mu, sigma, 10, 1); err == nil || !strings.Contains(err.Error(), "dimension 3") {
		t.Errorf("7 values of 3-d features: error %v, want one naming the dimension", err)
	}
}

// TestBootstrapParallelIsBootstrap checks that the concurrent bootstrap
// draws Bootstrap's resamples and returns its values in its order, NaNs
// left out, whatever the number of workers, and reports the first error in
// resample order.
func TestBootstrapParallelIsBootstrap(t *testing.T) {
	stat := func(indices []int) float64 { // a resample's sum, NaN when it starts with item 0
		if indices[0] == 0 {
			return math.NaN()
		}
		s := 0
		for _, i := range indices {
			s += i * i
		}
		return float64(s)
	}
	want := Bootstrap(7, 50, 3, stat)
	for _, workers := range []int{1, 2, 5, 64} {
		calls := 0
		got, err := bootstrapParallel(7, 50, 3, workers, func(indices []int) (float64, error) { return stat(indices), nil }, func() { calls++ })
		if err != nil || !slices.Equal(got, want) || calls != 50 {
			t.Errorf("%d workers: %v (%v, %d calls), want Bootstrap's %v and 50 calls", workers, got, err, calls, want)
		}
	}
	// Resamples 10 and 30 fail; with 4 workers either may fail first in time.
	_, err := bootstrapParallel(7, 50, 3, 4, func(indices []int) (float64, error) {
		for _, s := range []int{10, 30} {
			if slices.Equal(indices, nthResample(7, 3, s)) {
				return 0, fmt.Errorf("resample %d", s)
			}
		}
		return 1, nil
	}, nil)
	if err == nil || err.Error() != "resample 10" {
		t.Errorf("error %v, want the 10th resample's", err)
	}
}

// nthResample returns the indices of Bootstrap's resample r (from 0) of n
// items with seed.
func nthResample(n int, seed uint64, r int) []int {
	var out []int
	count := 0
	Bootstrap(n, r+1, seed, func(indices []int) float64 {
		if count == r {
			out = slices.Clone(indices)
		}
		count++
		return 0
	})
	return out
}
