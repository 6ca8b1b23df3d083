package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Bootstrap draws resamples of n items with replacement (a seeded stream)
// and returns stat of each resample, given as indices into the items.
// Resamples where stat is NaN (say, an AUPRC of a resample without
// anomalies) are left out.
func Bootstrap(n, resamples int, seed uint64, stat func(indices []int) float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	indices := make([]int, n)
	values := make([]float64, 0, resamples)
	for range resamples {
		for i := range indices {
			indices[i] = rng.IntN(n)
		}
		if v := stat(indices); !math.IsNaN(v) {
			values = append(values, v)
		}
	}
	return values
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

// LogSumExp is log Σ exp(v), taken about the largest term so that it stays
// finite where the plain sum overflows; −Inf for no terms or all −Inf.
func LogSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
