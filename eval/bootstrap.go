package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Bootstrap draws resamples of n items with replacement (a seeded stream)
// and returns stat of each resample, given as indices into the items.
// Resamples where stat is NaN (say, an AUPRC of a resample without
// anomalies) are left out.
func Bootstrap(n, resamples int, seed uint64, stat func(indices []int) float64) []float64 {
	rng := bootstrapStream(seed)
	indices := make([]int, n)
	values := make([]float64, resamples)
	for r := range values {
		drawResample(rng, indices)
		values[r] = stat(indices)
	}
	return withoutNaN(values)
}

// bootstrapStream is the seeded stream the bootstraps draw resamples from.
func bootstrapStream(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// drawResample fills indices with draws, with replacement, of as many
// items as it holds.
func drawResample(rng *rand.Rand, indices []int) {
	for i := range indices {
		indices[i] = rng.IntN(len(indices))
	}
}

// withoutNaN returns values without its NaNs, in place.
func withoutNaN(values []float64) []float64 {
	return slices.DeleteFunc(values, math.IsNaN)
}

// PercentileInterval returns the central interval holding the fraction
// level of values: their (1−level)/2 and (1+level)/2 quantiles, linearly
// interpolated between order statistics (NumPy's default).
func PercentileInterval(values []float64, level float64) (lo, hi float64, err error) {
	if len(values) == 0 || !(level > 0 && level < 1) {
		return 0, 0, fmt.Errorf("eval: percentile interval of %d values at level %v: want values and 0 < level < 1", len(values), level)
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return quantile(sorted, (1-level)/2), quantile(sorted, (1+level)/2), nil
}

// quantile is the q-quantile of sorted values, interpolated linearly.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// MeanAUPRC is the AUPRC of each column of scores over the images at
// indices, averaged over the columns (the snapshot-averaged AUPRC of a
// bootstrap resample); NaN when the resample has no anomaly.
func MeanAUPRC(labels []bool, columns [][]float64, indices []int) float64 {
	l := make([]bool, len(indices))
	s := make([]float64, len(indices))
	for i, j := range indices {
		l[i] = labels[j]
	}
	mean := 0.0
	for _, c := range columns {
		for i, j := range indices {
			s[i] = c[j]
		}
		a, err := AUPRC(s, l)
		if err != nil {
			return math.NaN()
		}
		mean += a / float64(len(columns))
	}
	return mean
}

// Interval is a central confidence interval [Lo, Hi] of an estimate.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// MeanInterval is the 95 % percentile-bootstrap interval of the mean of
// values over resamples resamples of a seeded stream.
func MeanInterval(values []float64, resamples int, seed uint64) (Interval, error) {
	means := Bootstrap(len(values), resamples, seed, func(indices []int) float64 {
		var s float64
		for _, i := range indices {
			s += values[i]
		}
		return s / float64(len(indices))
	})
	lo, hi, err := PercentileInterval(means, 0.95)
	return Interval{lo, hi}, err
}

// AUPRCInterval is the 95 % percentile-bootstrap interval of the AUPRC of
// scores (anomalies, labels true, score high) over resamples resamples of
// the items, from a seeded stream.
func AUPRCInterval(scores []float64, labels []bool, resamples int, seed uint64) (Interval, error) {
	values := Bootstrap(len(scores), resamples, seed, func(indices []int) float64 {
		return MeanAUPRC(labels, [][]float64{scores}, indices)
	})
	lo, hi, err := PercentileInterval(values, 0.95)
	return Interval{lo, hi}, err
}

// FrechetDistanceInterval is the 95 % percentile-bootstrap interval of
// FrechetDistanceToStats(features, mu, sigma) over resamples resamples of
// the feature vectors (a seeded stream): how much the FID of a sample
// moves with the sample drawn, its generator fixed.
func FrechetDistanceInterval(features []float64, mu []float64, sigma mat.Symmetric, resamples int, seed uint64) (Interval, error) {
	return FrechetDistanceIntervalEach(features, mu, sigma, resamples, seed, nil)
}

// FrechetDistanceIntervalEach is FrechetDistanceInterval calling each (if
// not nil) after every resample: each costs a Fréchet distance, O(d³), so
// long intervals want a progress bar. The resamples are computed
// concurrently, one per core (for 2048-d Inception features about 9 s a
// resample on two cores).
func FrechetDistanceIntervalEach(features []float64, mu []float64, sigma mat.Symmetric, resamples int, seed uint64, each func()) (Interval, error) {
	dim := len(mu)
	if dim == 0 || len(features)%dim != 0 {
		return Interval{}, fmt.Errorf("eval: Fréchet distance interval: %d feature values are not whole vectors of the reference statistics' dimension %d", len(features), dim)
	}
	if err := checkGaussians(mu, sigma, mu, sigma); err != nil {
		return Interval{}, err
	}
	l := choleskyFactor(sigma) // the reference's, once for every resample
	distances, err := bootstrapParallel(len(features)/dim, resamples, seed, runtime.GOMAXPROCS(0), func(indices []int) (float64, error) {
		m, s, err := gaussianStats(len(indices), dim, func(k int) []float64 {
			i := indices[k]
			return features[i*dim : (i+1)*dim]
		})
		if err != nil {
			return 0, err
		}
		return frechetDistance(m, s, mu, sigma, l)
	}, each)
	if err != nil {
		return Interval{}, err
	}
	lo, hi, err := PercentileInterval(distances, 0.95)
	return Interval{lo, hi}, err
}

// bootstrapParallel is Bootstrap with up to workers resamples' stat
// computed at once (gonum's eigen-decompositions run on one core): the
// resamples are drawn in order from Bootstrap's stream, so the values are
// Bootstrap's, in its order. each (if not nil) is called under lock after
// every resample. The first error, in resample order, is returned.
func bootstrapParallel(n, resamples int, seed uint64, workers int, stat func(indices []int) (float64, error), each func()) ([]float64, error) {
	type job struct {
		r       int
		indices []int
	}
	jobs := make(chan job)
	values, errs := make([]float64, resamples), make([]error, resamples)
	var wg sync.WaitGroup
	var lock sync.Mutex
	for range max(1, min(workers, resamples)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				values[j.r], errs[j.r] = stat(j.indices)
				if each != nil {
					lock.Lock()
					each()
					lock.Unlock()
				}
			}
		}()
	}
	rng := bootstrapStream(seed)
	for r := range resamples {
		indices := make([]int, n) // the worker's until it is done
		drawResample(rng, indices)
		jobs <- job{r, indices}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return withoutNaN(values), nil
}

// LogMeanExp is log(mean(exp(v))) for a non-empty v, taken without
// overflow: the log of an importance-sampling estimate from log weights.
func LogMeanExp(v []float64) float64 { return floats.LogSumExp(v) - math.Log(float64(len(v))) }

// LogMeanExpInterval is the 95 % percentile interval of LogMeanExp over
// resamples resamplings of v with replacement (seeded by seed).
func LogMeanExpInterval(v []float64, resamples int, seed uint64) (Interval, error) {
	sample := make([]float64, len(v))
	estimates := Bootstrap(len(v), resamples, seed, func(indices []int) float64 {
		for i, j := range indices {
			sample[i] = v[j]
		}
		return LogMeanExp(sample)
	})
	lo, hi, err := PercentileInterval(estimates, 0.95)
	return Interval{Lo: lo, Hi: hi}, err
}
