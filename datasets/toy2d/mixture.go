package toy2d

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// logSqrt2Pi is log √(2π), the normaliser of a standard normal density.
var logSqrt2Pi = 0.5 * math.Log(2*math.Pi)

// logSumExp accumulates log Σ exp(v) over added terms in one pass without
// overflow or underflow: sum holds Σ exp(v − max).
type logSumExp struct{ max, sum float64 }

func newLogSumExp() logSumExp { return logSumExp{max: math.Inf(-1)} }

func (a *logSumExp) add(v float64) {
	switch {
	case math.IsInf(v, -1):
		// exp(−∞) adds nothing; skipping it avoids ∞ − ∞ below.
	case v <= a.max:
		a.sum += math.Exp(v - a.max)
	default:
		a.sum = a.sum*math.Exp(a.max-v) + 1
		a.max = v
	}
}

func (a *logSumExp) value() float64 {
	if a.sum == 0 {
		return math.Inf(-1)
	}
	return a.max + math.Log(a.sum)
}

// gaussianMixture2D is an equal-weight mixture of isotropic 2-D Gaussians
// with a common standard deviation.
type gaussianMixture2D struct {
	centres [][2]float64
	std     float64
}

func (m gaussianMixture2D) sample(rng *rand.Rand) (x, y float64) {
	c := m.centres[rng.IntN(len(m.centres))]
	return c[0] + m.std*rng.NormFloat64(), c[1] + m.std*rng.NormFloat64()
}

func (m gaussianMixture2D) logDensity(x, y float64) float64 {
	// log N(p; c, σ²I) = −|p−c|²/(2σ²) − 2 log σ − log 2π; weights 1/K.
	norm := -2*math.Log(m.std) - 2*logSqrt2Pi - math.Log(float64(len(m.centres)))
	acc := newLogSumExp()
	for _, c := range m.centres {
		dx, dy := x-c[0], y-c[1]
		acc.add(-(dx*dx + dy*dy) / (2 * m.std * m.std))
	}
	return acc.value() + norm
}

// Mixture1D is a one-dimensional Gaussian mixture Σ_k Weights[k]·N(Means[k], Stds[k]²),
// the data of the paper's mixture-weight study (see MixtureWeightStudy).
// Sample and LogDensity assume Validate passes.
type Mixture1D struct {
	Weights, Means, Stds []float64
}

// MixtureWeightStudy returns 0.2·N(−5, 1) + 0.8·N(5, 1), the data of the
// paper's study of ED as a function of the mixture weight.
func MixtureWeightStudy() Mixture1D {
	return Mixture1D{Weights: []float64{0.2, 0.8}, Means: []float64{-5, 5}, Stds: []float64{1, 1}}
}

// Validate checks that the three slices have the same non-zero length, the
// weights are non-negative and sum to 1, and the standard deviations are positive.
func (m Mixture1D) Validate() error {
	k := len(m.Weights)
	if k == 0 || len(m.Means) != k || len(m.Stds) != k {
		return fmt.Errorf("toy2d: Mixture1D has %d weights, %d means, %d stds, want the same non-zero number",
			k, len(m.Means), len(m.Stds))
	}
	total := 0.0
	for i, w := range m.Weights {
		if !(w >= 0) || !(m.Stds[i] > 0) {
			return fmt.Errorf("toy2d: Mixture1D component %d has weight %v and std %v, want weight ≥ 0 and std > 0",
				i, w, m.Stds[i])
		}
		total += w
	}
	if math.Abs(total-1) > 1e-9 {
		return fmt.Errorf("toy2d: Mixture1D weights sum to %v, want 1", total)
	}
	return nil
}

// Sample draws n independent values.
func (m Mixture1D) Sample(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		k := m.component(rng.Float64())
		out[i] = float32(m.Means[k] + m.Stds[k]*rng.NormFloat64())
	}
	return out
}

// component returns the component whose cumulative-weight interval holds u ∈ [0, 1).
func (m Mixture1D) component(u float64) int {
	for k, w := range m.Weights {
		if u < w {
			return k
		}
		u -= w
	}
	return len(m.Weights) - 1 // u beyond the total by rounding
}

// LogDensity returns log p(x), computed by log-sum-exp so that it stays
// finite far in the tails.
func (m Mixture1D) LogDensity(x float64) float64 {
	acc := newLogSumExp()
	for k, w := range m.Weights {
		z := (x - m.Means[k]) / m.Stds[k]
		acc.add(math.Log(w) - 0.5*z*z - math.Log(m.Stds[k]) - logSqrt2Pi)
	}
	return acc.value()
}
