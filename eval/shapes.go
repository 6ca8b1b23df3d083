package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// KSComplement is 1 − the two-sample Kolmogorov–Smirnov statistic of a
// and b, 1 − sup_x |F_a(x) − F_b(x)| over their empirical distribution
// functions: 1 for samples of one law, 0 for samples that do not overlap
// (SDMetrics' KSComplement, its Column Shapes score of a numeric column).
// The cost is O((n+m) log(n+m)); values must not be NaN.
func KSComplement(a, b []float64) (float64, error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, errors.New("eval: KSComplement: an empty sample")
	}
	if slices.ContainsFunc(a, math.IsNaN) || slices.ContainsFunc(b, math.IsNaN) {
		return 0, errors.New("eval: KSComplement: a NaN value")
	}
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	var i, j int
	var sup float64
	for i < len(a) || j < len(b) {
		// Step past every value equal to the next one, in both samples:
		// the distribution functions are compared between values.
		x := math.Inf(1)
		if i < len(a) {
			x = a[i]
		}
		if j < len(b) && b[j] < x {
			x = b[j]
		}
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		sup = max(sup, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return 1 - sup, nil
}

// TVComplement is 1 − the total variation distance between the category
// frequencies of a and b, 1 − ½ Σ_c |p_a(c) − p_b(c)|, each value a
// category index in [0, k) (SDMetrics' TVComplement, its Column Shapes
// score of a categorical column).
func TVComplement(a, b []int, k int) (float64, error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, errors.New("eval: TVComplement: an empty sample")
	}
	pa, pb := make([]float64, k), make([]float64, k)
	for _, s := range []struct {
		values []int
		p      []float64
	}{{a, pa}, {b, pb}} {
		for _, c := range s.values {
			if c < 0 || c >= k {
				return 0, fmt.Errorf("eval: TVComplement: category %d of %d", c, k)
			}
			s.p[c] += 1 / float64(len(s.values))
		}
	}
	var tv float64
	for c := range k {
		tv += math.Abs(pa[c]-pb[c]) / 2
	}
	return 1 - tv, nil
}
