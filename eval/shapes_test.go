package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveKS is the two-sample KS statistic by its definition: the largest
// |F_a(x) − F_b(x)| over every value x of either sample, each F counted
// by a loop.
func naiveKS(a, b []float64) float64 {
	cdf := func(s []float64, x float64) float64 {
		n := 0
		for _, v := range s {
			if v <= x {
				n++
			}
		}
		return float64(n) / float64(len(s))
	}
	var sup float64
	for _, x := range append(append([]float64{}, a...), b...) {
		sup = math.Max(sup, math.Abs(cdf(a, x)-cdf(b, x)))
	}
	return sup
}

// TestKSComplement against the definition's loop, on samples with ties
// (values on a grid) and without, of one law and of shifted ones; and its
// closed cases: one sample twice gives 1, samples apart give 0.
func TestKSComplement(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name  string
		shift float64
		grid  bool
	}{{"one law", 0, false}, {"shifted", 0.5, false}, {"on a grid", 0, true}, {"on a grid, shifted", 1, true}} {
		a, b := make([]float64, 300), make([]float64, 170)
		for _, s := range [][]float64{a, b} {
			for i := range s {
				s[i] = rng.NormFloat64()
				if tc.grid {
					s[i] = math.Round(2 * s[i])
				}
			}
		}
		for i := range b {
			b[i] += tc.shift
		}
		got, err := KSComplement(a, b)
		if want := 1 - naiveKS(a, b); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: %v (%v), the definition's %v", tc.name, got, err, want)
		}
	}
	if got, _ := KSComplement([]float64{3, 1, 2, 2}, []float64{2, 1, 3, 2}); got != 1 {
		t.Errorf("one sample twice: %v, want 1", got)
	}
	if got, _ := KSComplement([]float64{1, 2}, []float64{5, 6, 7}); got != 0 {
		t.Errorf("samples apart: %v, want 0", got)
	}
	if _, err := KSComplement(nil, []float64{1}); err == nil {
		t.Error("an empty sample: no error")
	}
	if _, err := KSComplement([]float64{math.NaN()}, []float64{1}); err == nil {
		t.Error("NaN: no error")
	}
}

// TestTVComplement on shares counted by hand: a = (0, 0, 1, 2) has shares
// ½, ¼, ¼; b = (1, 1, 1, 0) has ¼, ¾, 0: TV = ½(¼ + ½ + ¼) = ½.
func TestTVComplement(t *testing.T) {
	if got, err := TVComplement([]int{0, 0, 1, 2}, []int{1, 1, 1, 0}, 3); err != nil || math.Abs(got-0.5) > 1e-12 {
		t.Errorf("TVComplement = %v (%v), want 0.5", got, err)
	}
	if got, _ := TVComplement([]int{0, 1}, []int{1, 0}, 2); math.Abs(got-1) > 1e-12 {
		t.Errorf("one law: %v, want 1", got)
	}
	if got, _ := TVComplement([]int{0, 0}, []int{1}, 2); math.Abs(got) > 1e-12 {
		t.Errorf("apart: %v, want 0", got)
	}
	if _, err := TVComplement([]int{0, 3}, []int{1}, 3); err == nil {
		t.Error("a category past k: no error")
	}
}
