package eval

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// The effective sample sizes below follow Vehtari, Gelman, Simpson,
// Carpenter and Bürkner (2021), "Rank-normalization, folding, and
// localization: an improved R̂ for assessing convergence of MCMC", as Stan
// and ArviZ compute them; the tests check them against ArviZ's numbers on
// fixed arrays and against the AR(1) closed form.

// ESS returns the effective sample size of m chains of n ≥ 4 draws each of
// one scalar quantity, as they are (no splitting, no rank normalisation).
// With acov_j(t) the biased autocovariance of chain j at lag t, W the mean
// of the chains' unbiased variances and var⁺ = (n−1)/n·W + the variance of
// the chain means (m > 1),
//
//	ρ̂_t = 1 − (W − mean_j acov_j(t)) / var⁺,
//
// summed by Geyer's initial monotone sequence: pairs ρ̂_{2k} + ρ̂_{2k+1}
// while positive, made non-increasing; τ̂ = −1 + 2 Σ ρ̂_t, at least
// 1/log₁₀(mn), and ESS = mn/τ̂. Chains of one constant value have mn.
func ESS(chains [][]float64) (float64, error) {
	n, err := checkChains("ESS", chains, 4)
	if err != nil {
		return 0, err
	}
	return ess(chains, n), nil
}

// BulkESS returns the bulk effective sample size: ESS of the chains split
// in halves (as SplitGelmanRubin) and rank-normalised — every draw
// replaced by Φ⁻¹((r − 3/8)/(S + 1/4)), r its rank among all S draws
// (ties averaged) — so that it is defined for heavy tails and diagnoses
// the centre of the distribution.
func BulkESS(chains [][]float64) (float64, error) {
	if _, err := checkChains("bulk ESS", chains, 4); err != nil {
		return 0, err
	}
	halves := split(chains)
	return ess(rankNormalise(halves), len(halves[0])), nil
}

// TailESS returns the tail effective sample size: the smaller of the ESS
// of the split chains' indicators x ≤ q₀.₀₅ and x ≤ q₀.₉₅, the quantiles
// of all draws (linear interpolation, R's type 7), which diagnoses how
// well the 5 % and 95 % quantiles are estimated.
func TailESS(chains [][]float64) (float64, error) {
	if _, err := checkChains("tail ESS", chains, 4); err != nil {
		return 0, err
	}
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	slices.Sort(all)
	halves := split(chains)
	low := ess(indicator(halves, quantile7(all, 0.05)), len(halves[0]))
	high := ess(indicator(halves, quantile7(all, 0.95)), len(halves[0]))
	return math.Min(low, high), nil
}

// checkChains checks that there is a chain, that every chain has the same
// n ≥ minDraws draws and that all are finite; name labels errors.
func checkChains(name string, chains [][]float64, minDraws int) (int, error) {
	if len(chains) == 0 {
		return 0, fmt.Errorf("eval: %s: no chains", name)
	}
	n := len(chains[0])
	if n < minDraws {
		return 0, fmt.Errorf("eval: %s: chains of %d draws: want at least %d", name, n, minDraws)
	}
	for j, c := range chains {
		if len(c) != n {
			return 0, fmt.Errorf("eval: %s: chain %d has %d draws, want %d like chain 0", name, j, len(c), n)
		}
		for i, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("eval: %s: chain %d, draw %d is %v", name, j, i, v)
			}
		}
	}
	return n, nil
}

// ess is ESS of m chains of n draws, checked.
func ess(chains [][]float64, n int) float64 {
	m := len(chains)
	total := float64(m * n)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range chains {
		for _, v := range c {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi-lo < 1e-15 { // one constant value: every draw is as good as independent
		return total
	}
	means := make([]float64, m)
	for j, c := range chains {
		for _, v := range c {
			means[j] += v / float64(n)
		}
	}
	// acov is the mean over the chains of their biased autocovariances
	// at lag t, computed as the Geyer sums need them.
	acov := func(t int) float64 {
		var sum float64
		for j, c := range chains {
			for i := 0; i+t < n; i++ {
				sum += (c[i] - means[j]) * (c[i+t] - means[j])
			}
		}
		return sum / float64(n) / float64(m)
	}
	w := acov(0) * float64(n) / float64(n-1)
	varPlus := w * float64(n-1) / float64(n)
	if m > 1 {
		var grand, between float64
		for _, mu := range means {
			grand += mu / float64(m)
		}
		for _, mu := range means {
			between += (mu - grand) * (mu - grand) / float64(m-1)
		}
		varPlus += between
	}
	rho := make([]float64, n)
	rho[0] = 1
	even, odd := 1.0, 1-(w-acov(1))/varPlus
	rho[1] = odd
	// Geyer's initial positive sequence.
	t := 1
	for t < n-3 && even+odd > 0 {
		even, odd = 1-(w-acov(t+1))/varPlus, 1-(w-acov(t+2))/varPlus
		if even+odd >= 0 {
			rho[t+1], rho[t+2] = even, odd
		}
		t += 2
	}
	maxT := t - 2
	if even > 0 {
		rho[maxT+1] = even
	}
	// Geyer's initial monotone sequence.
	for t := 1; t <= maxT-2; t += 2 {
		if rho[t+1]+rho[t+2] > rho[t-1]+rho[t] {
			rho[t+1] = (rho[t-1] + rho[t]) / 2
			rho[t+2] = rho[t+1]
		}
	}
	tau := -1.0
	for _, r := range rho[:maxT+1] {
		tau += 2 * r
	}
	tau += rho[maxT+1]
	tau = math.Max(tau, 1/math.Log10(total))
	return total / tau
}

// split cuts every chain into its first and last ⌊n/2⌋ draws.
func split(chains [][]float64) [][]float64 {
	n := len(chains[0])
	halves := make([][]float64, 0, 2*len(chains))
	for _, c := range chains {
		halves = append(halves, c[:n/2], c[n-n/2:])
	}
	return halves
}

// rankNormalise replaces every draw by the normal quantile of its
// fractional rank among all draws, Φ⁻¹((r − 3/8)/(S + 1/4)), ties sharing
// their average rank (Blom's offset).
func rankNormalise(chains [][]float64) [][]float64 {
	type draw struct {
		v    float64
		j, i int
	}
	var all []draw
	for j, c := range chains {
		for i, v := range c {
			all = append(all, draw{v, j, i})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].v < all[b].v })
	out := make([][]float64, len(chains))
	for j, c := range chains {
		out[j] = make([]float64, len(c))
	}
	s := float64(len(all))
	for lo := 0; lo < len(all); {
		hi := lo
		for hi+1 < len(all) && all[hi+1].v == all[lo].v {
			hi++
		}
		rank := float64(lo+hi)/2 + 1 // ranks count from 1
		z := distuv.UnitNormal.Quantile((rank - 3.0/8) / (s + 1.0/4))
		for k := lo; k <= hi; k++ {
			out[all[k].j][all[k].i] = z
		}
		lo = hi + 1
	}
	return out
}

// indicator is 1 where a draw is ≤ q, else 0.
func indicator(chains [][]float64, q float64) [][]float64 {
	out := make([][]float64, len(chains))
	for j, c := range chains {
		out[j] = make([]float64, len(c))
		for i, v := range c {
			if v <= q {
				out[j][i] = 1
			}
		}
	}
	return out
}

// quantile7 is the q-quantile of sorted values by linear interpolation
// between order statistics (R's type 7, NumPy's default).
func quantile7(sorted []float64, q float64) float64 {
	h := float64(len(sorted)-1) * q
	k := int(math.Floor(h))
	if k+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[k] + (h-float64(k))*(sorted[k+1]-sorted[k])
}
