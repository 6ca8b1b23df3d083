package eval

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// statsChunk is how many centred samples GaussianStats holds at a time.
const statsChunk = 256

// GaussianStats returns the sample mean and the unbiased sample covariance
//
//	μ = (1/n) Σ_i x_i,  Σ = 1/(n−1) Σ_i (x_i − μ)(x_i − μ)ᵀ
//
// of n feature vectors x_i of one dimension, the statistics FID compares.
// The covariance is computed in two passes (mean first, then centred
// products), so it does not suffer the cancellation of the one-pass
// formula. There must be more samples than dimensions (n > dim): with
// n ≤ dim the covariance is singular and far too noisy to compare
// distributions. Every value must be finite.
func GaussianStats(features [][]float64) ([]float64, *mat.SymDense, error) {
	if len(features) == 0 {
		return nil, nil, errors.New("eval: Gaussian statistics: no samples: want more samples than dimensions")
	}
	dim := len(features[0])
	for i, f := range features {
		if len(f) != dim {
			return nil, nil, fmt.Errorf("eval: Gaussian statistics: sample %d has dimension %d, want %d like sample 0", i, len(f), dim)
		}
	}
	return gaussianStats(len(features), dim, func(i int) []float64 { return features[i] })
}

// GaussianStatsFlat is GaussianStats for n samples stored one after another
// in data, each of dimension dim (so len(data) = n·dim).
func GaussianStatsFlat(data []float64, dim int) ([]float64, *mat.SymDense, error) {
	if dim < 1 || len(data)%dim != 0 {
		return nil, nil, fmt.Errorf("eval: Gaussian statistics: %d values with dimension %d: want dimension ≥ 1 dividing the number of values", len(data), dim)
	}
	return gaussianStats(len(data)/dim, dim, func(i int) []float64 { return data[i*dim : (i+1)*dim] })
}

// gaussianStats computes the statistics of the n samples row(0), …,
// row(n−1), each of length dim ≥ 0.
func gaussianStats(n, dim int, row func(int) []float64) ([]float64, *mat.SymDense, error) {
	if dim == 0 {
		return nil, nil, errors.New("eval: Gaussian statistics: samples have dimension 0: want ≥ 1")
	}
	if n <= dim {
		return nil, nil, fmt.Errorf("eval: Gaussian statistics: n = %d samples of dimension dim = %d: want n > dim for a non-singular covariance (use more samples)", n, dim)
	}
	mu := make([]float64, dim)
	for i := range n {
		for j, x := range row(i) {
			if !isFinite(x) {
				return nil, nil, fmt.Errorf("eval: Gaussian statistics: sample %d, component %d is %v: want a finite number", i, j, x)
			}
			mu[j] += x
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}

	sigma := mat.NewSymDense(dim, nil)
	buf := make([]float64, min(n, statsChunk)*dim)
	for start := 0; start < n; start += statsChunk {
		rows := min(statsChunk, n-start)
		for r := range rows {
			for j, x := range row(start + r) {
				buf[r*dim+j] = x - mu[j]
			}
		}
		centred := mat.NewDense(rows, dim, buf[:rows*dim])
		// sigma += centredᵀ centred / (n−1)
		sigma.SymRankK(sigma, 1/float64(n-1), centred.T())
	}
	return mu, sigma, nil
}
