package eval

import (
	"errors"
	"fmt"
	"math"
)

// GelmanRubin returns the classic Gelman–Rubin potential scale reduction
// factor R̂ of m ≥ 2 chains of n ≥ 2 draws each of one scalar quantity
// (Gelman & Rubin 1992, without the degrees-of-freedom correction and
// without splitting the chains; see SplitGelmanRubin). With x̄_j the mean
// and s_j² the unbiased variance of chain j, and x̄ the mean of the x̄_j:
//
//	B/n = 1/(m−1) Σ_j (x̄_j − x̄)²   (between-chain variance of the means)
//	W   = (1/m) Σ_j s_j²           (mean within-chain variance)
//	V̂   = (n−1)/n · W + B/n
//	R̂   = √(V̂ / W)
//
// R̂ near 1 means the chains agree; values above about 1.1 (the classic
// threshold; 1.01 in Vehtari et al. 2021) mean they have not mixed. Every chain must have the same
// length and finite values, and W must be > 0.
func GelmanRubin(chains [][]float64) (float64, error) {
	if len(chains) < 2 {
		return 0, fmt.Errorf("eval: Gelman–Rubin: %d chains: want at least 2", len(chains))
	}
	return gelmanRubin("Gelman–Rubin", chains)
}

// SplitGelmanRubin returns the split-R̂ of Gelman et al. (Bayesian Data
// Analysis, 3rd ed.): each chain of n ≥ 4 draws is cut into a first and a
// second half of ⌊n/2⌋ draws (the middle draw is dropped when n is odd) and
// GelmanRubin is computed on the 2m half-chains. Splitting also detects a
// chain that drifts within itself, which plain R̂ misses when all chains
// drift alike. One chain (m = 1) is enough. No rank normalisation
// (Vehtari et al. 2021) is applied, and no warm-up is discarded: pass only
// the draws to be checked.
func SplitGelmanRubin(chains [][]float64) (float64, error) {
	if len(chains) == 0 {
		return 0, errors.New("eval: split Gelman–Rubin: no chains: want at least 1")
	}
	n := len(chains[0])
	if n < 4 {
		return 0, fmt.Errorf("eval: split Gelman–Rubin: chains of %d draws: want at least 4 to split", n)
	}
	halves := make([][]float64, 0, 2*len(chains))
	for j, c := range chains {
		if len(c) != n {
			return 0, fmt.Errorf("eval: split Gelman–Rubin: chain %d has %d draws, want %d like chain 0", j, len(c), n)
		}
		if _, _, err := meanVariance(c); err != nil {
			return 0, fmt.Errorf("eval: split Gelman–Rubin: chain %d: %w", j, err)
		}
		halves = append(halves, c[:n/2], c[n-n/2:])
	}
	return gelmanRubin("split Gelman–Rubin", halves)
}

// gelmanRubin computes R̂ of at least two chains; name labels errors.
func gelmanRubin(name string, chains [][]float64) (float64, error) {
	m, n := len(chains), len(chains[0])
	if n < 2 {
		return 0, fmt.Errorf("eval: %s: chains of %d draws: want at least 2", name, n)
	}
	means := make([]float64, m)
	var w float64
	allConstant := true
	for j, c := range chains {
		if len(c) != n {
			return 0, fmt.Errorf("eval: %s: chain %d has %d draws, want %d like chain 0", name, j, len(c), n)
		}
		mean, variance, err := meanVariance(c)
		if err != nil {
			return 0, fmt.Errorf("eval: %s: chain %d: %w", name, j, err)
		}
		means[j] = mean
		w += variance / float64(n-1) / float64(m)
		allConstant = allConstant && isConstant(c)
	}
	if allConstant || w == 0 {
		return 0, fmt.Errorf("eval: %s: within-chain variance W = 0 (every chain is constant): want W > 0", name)
	}
	_, bOverN, _ := meanVariance(means)
	bOverN /= float64(m - 1)
	v := float64(n-1)/float64(n)*w + bOverN
	return math.Sqrt(v / w), nil
}

// Autocorrelation returns the normalised sample autocorrelation of x at lags
// 0, 1, …, maxLag:
//
//	ρ_k = Σ_{t=0}^{n−1−k} (x_t − x̄)(x_{t+k} − x̄) / Σ_{t=0}^{n−1} (x_t − x̄)²,
//
// so ρ_0 = 1. Both sums are divided by the same n (the usual biased
// estimator, as in statsmodels' acf), which keeps the sequence positive
// semi-definite. It needs 0 ≤ maxLag < len(x), finite values and a
// non-constant x. The cost is O(n·maxLag).
func Autocorrelation(x []float64, maxLag int) ([]float64, error) {
	if maxLag < 0 || maxLag >= len(x) {
		return nil, fmt.Errorf("eval: autocorrelation: maxLag = %d for %d values: want 0 ≤ maxLag < %[2]d", maxLag, len(x))
	}
	mean, sumSq, err := meanVariance(x)
	if err != nil {
		return nil, fmt.Errorf("eval: autocorrelation: %w", err)
	}
	if isConstant(x) || sumSq == 0 {
		return nil, fmt.Errorf("eval: autocorrelation: the %d values are constant (zero variance): want a varying series", len(x))
	}
	rho := make([]float64, maxLag+1)
	rho[0] = 1
	for k := 1; k <= maxLag; k++ {
		var s float64
		for t := 0; t+k < len(x); t++ {
			s += (x[t] - mean) * (x[t+k] - mean)
		}
		rho[k] = s / sumSq
	}
	return rho, nil
}

// meanVariance returns the mean of x and the sum of squared deviations
// from it, or an error naming the first non-finite value. x must not be
// empty.
func meanVariance(x []float64) (mean, sumSq float64, err error) {
	for i, v := range x {
		if !isFinite(v) {
			return 0, 0, fmt.Errorf("value %d is %v: want a finite number", i, v)
		}
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sumSq += (v - mean) * (v - mean)
	}
	return mean, sumSq, nil
}

// isConstant reports whether every value of x equals the first. (The
// computed variance of a constant series need not be exactly 0, since its
// computed mean can differ from the value in the last bit.)
func isConstant(x []float64) bool {
	for _, v := range x {
		if v != x[0] {
			return false
		}
	}
	return true
}
