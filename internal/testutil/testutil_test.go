package testutil

import (
	"math"
	"testing"
)

func TestMaxRelativeDiff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want []float64
		floor     float64
		expect    float64
	}{
		{"equal", []float64{1, -2}, []float64{1, -2}, 1e-3, 0},
		{"relative to want", []float64{1.1, -2}, []float64{1, -2.5}, 0, 0.2},
		{"floor near zero", []float64{1e-6}, []float64{0}, 1e-3, 1e-3},
		{"NaN", []float64{math.NaN()}, []float64{1}, 0, math.Inf(1)},
		{"lengths", []float64{1}, []float64{1, 2}, 0, math.Inf(1)},
	} {
		if got := MaxRelativeDiff(tc.got, tc.want, tc.floor); math.Abs(got-tc.expect) > 1e-12 && got != tc.expect {
			t.Errorf("%s: MaxRelativeDiff = %g, want %g", tc.name, got, tc.expect)
		}
	}
}
