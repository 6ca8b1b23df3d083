package eval

import (
	"fmt"
	"math"
)

// KernelSteinDiscrepancy returns the squared kernel Stein discrepancy
// between the sample points x (n ≥ 2 points of dimension d) and the
// density p whose score ∇ log p is given at each point (score[i] =
// ∇ log p(x[i]); for an energy model, −∇E). It needs no normalising
// constant and no samples from p, so it scores a sampler or a model with
// the score alone (Liu, Lee & Jordan 2016; Chwialkowski et al. 2016;
// Gorham & Mackey 2017 for the kernel). With the inverse multiquadric
// kernel k(x, y) = (1 + ‖x − y‖²)^(−1/2), the Stein kernel
//
//	u(x, y) = s(x)·s(y) k + s(x)·∇_y k + s(y)·∇_x k + tr ∇_x∇_y k
//
// is averaged over the pairs i ≠ j: an unbiased estimate (the
// U-statistic), near 0 — and possibly slightly negative — when x is drawn
// from p, and growing as the two part.
func KernelSteinDiscrepancy(x, score [][]float64) (float64, error) {
	n := len(x)
	if n < 2 {
		return 0, fmt.Errorf("eval: kernel Stein discrepancy: %d points: want at least 2", n)
	}
	if len(score) != n {
		return 0, fmt.Errorf("eval: kernel Stein discrepancy: %d points but %d scores", n, len(score))
	}
	d := len(x[0])
	for i := range x {
		if len(x[i]) != d || len(score[i]) != d {
			return 0, fmt.Errorf("eval: kernel Stein discrepancy: point %d has dimension %d and score %d, want %d like point 0", i, len(x[i]), len(score[i]), d)
		}
	}
	var sum float64
	for i := range n {
		for j := range n {
			if i != j {
				sum += steinIMQ(x[i], x[j], score[i], score[j])
			}
		}
	}
	v := sum / float64(n*(n-1))
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("eval: kernel Stein discrepancy is %v: a point or score is not finite", v)
	}
	return v, nil
}

// steinIMQ is the Stein kernel u(x, y) of the IMQ kernel
// k = q^β, q = 1 + ‖r‖², r = x − y, β = −1/2:
//
//	∇_x k = 2β q^(β−1) r,  ∇_y k = −∇_x k,
//	tr ∇_x∇_y k = −2β d q^(β−1) − 4β(β−1) q^(β−2) ‖r‖².
func steinIMQ(x, y, sx, sy []float64) float64 {
	const beta = -0.5
	d := float64(len(x))
	var r2, ss, sxr, syr float64
	for k := range x {
		r := x[k] - y[k]
		r2 += r * r
		ss += sx[k] * sy[k]
		sxr += sx[k] * r
		syr += sy[k] * r
	}
	q := 1 + r2
	kern := math.Pow(q, beta)
	g := 2 * beta * math.Pow(q, beta-1) // ∇_x k = g·r
	trace := -2*beta*d*math.Pow(q, beta-1) - 4*beta*(beta-1)*math.Pow(q, beta-2)*r2
	return ss*kern - g*sxr + g*syr + trace
}
