package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSteinKernelByFiniteDifferences checks the IMQ Stein kernel's
// derivative terms against central differences of k(x, y) = (1 + ‖x − y‖²)^(−1/2):
// u(x, y) = s(x)·s(y) k + s(x)·∇_y k + s(y)·∇_x k + Σ_i ∂²k/∂x_i∂y_i.
func TestSteinKernelByFiniteDifferences(t *testing.T) {
	k := func(x, y []float64) float64 {
		var r2 float64
		for i := range x {
			r2 += (x[i] - y[i]) * (x[i] - y[i])
		}
		return 1 / math.Sqrt(1+r2)
	}
	rng := rand.New(rand.NewPCG(1, 9))
	const h = 1e-4
	for range 20 {
		d := 1 + rng.IntN(4)
		x, y, sx, sy := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
		for i := range d {
			x[i], y[i], sx[i], sy[i] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		}
		shift := func(v []float64, i int, by float64) []float64 {
			w := append([]float64(nil), v...)
			w[i] += by
			return w
		}
		want := k(x, y)
		var dotS float64
		for i := range d {
			dotS += sx[i] * sy[i]
		}
		want *= dotS
		for i := range d {
			dxk := (k(shift(x, i, h), y) - k(shift(x, i, -h), y)) / (2 * h)
			dyk := (k(x, shift(y, i, h)) - k(x, shift(y, i, -h))) / (2 * h)
			dxdyk := (k(shift(x, i, h), shift(y, i, h)) - k(shift(x, i, h), shift(y, i, -h)) -
				k(shift(x, i, -h), shift(y, i, h)) + k(shift(x, i, -h), shift(y, i, -h))) / (4 * h * h)
			want += sx[i]*dyk + sy[i]*dxk + dxdyk
		}
		if got := steinIMQ(x, y, sx, sy); math.Abs(got-want) > 1e-6*(1+math.Abs(want)) {
			t.Errorf("d = %d: Stein kernel %.9f, finite differences %.9f", d, got, want)
		}
	}
}

// TestKSDNearZeroAtTheTargetAndGrowingWithAShift: points of N(δ, I₂)
// scored by N(0, I₂)'s score −x: at δ = 0 the estimate is within its
// sampling noise of 0; it grows with δ.
func TestKSDNearZeroAtTheTargetAndGrowingWithAShift(t *testing.T) {
	const n, d = 600, 2
	rng := rand.New(rand.NewPCG(2, 3))
	base := make([][]float64, n)
	for i := range base {
		base[i] = []float64{rng.NormFloat64(), rng.NormFloat64()}
	}
	previous := math.Inf(-1)
	for _, delta := range []float64{0, 0.25, 0.5, 1} {
		x, score := make([][]float64, n), make([][]float64, n)
		for i := range x {
			x[i], score[i] = make([]float64, d), make([]float64, d)
			for k := range d {
				x[i][k] = base[i][k] + delta
				score[i][k] = -x[i][k]
			}
		}
		v, err := KernelSteinDiscrepancy(x, score)
		if err != nil {
			t.Fatal(err)
		}
		if delta == 0 && math.Abs(v) > 0.01 {
			t.Errorf("δ = 0: KSD² %.5f, want within 0.01 of 0", v)
		}
		if delta > 0 && v <= previous {
			t.Errorf("δ = %g: KSD² %.5f, not above the smaller shift's %.5f", delta, v, previous)
		}
		t.Logf("δ = %g: KSD² %.5f", delta, v)
		previous = v
	}
	if previous < 0.1 {
		t.Errorf("δ = 1: KSD² %.4f, want clearly positive", previous)
	}
}

func TestKSDRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		x, s [][]float64
		want string
	}{
		{[][]float64{{1}}, [][]float64{{1}}, "1 points"},
		{[][]float64{{1}, {2}}, [][]float64{{1}}, "2 points but 1 scores"},
		{[][]float64{{1, 2}, {2}}, [][]float64{{1, 2}, {2}}, "point 1 has dimension 1"},
		{[][]float64{{1}, {math.NaN()}}, [][]float64{{1}, {2}}, "not finite"},
	} {
		if _, err := KernelSteinDiscrepancy(tc.x, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}
