package eval

import (
	"fmt"
	"math"
	"math/bits"
)

// HammingMMD returns the unbiased estimate of the squared maximum mean
// discrepancy between two sets of binary vectors of d bits (rows of a and
// b, flat, a value above one half counting as 1), under the exponential
// Hamming kernel k(x, y) = exp(−H(x, y)/d) that Dai et al. (2020) use for
// the Gray-coded toy sets:
//
//	MMD² = Σ_{i≠j} k(aᵢ, aⱼ)/(n(n−1)) + Σ_{i≠j} k(bᵢ, bⱼ)/(m(m−1)) − 2 Σ k(aᵢ, bⱼ)/(nm).
//
// It is near 0 for two samples of one distribution (and may be slightly
// negative), larger the farther apart the distributions are.
func HammingMMD(a, b []float32, d int) (float64, error) {
	if d < 1 || len(a)%d != 0 || len(b)%d != 0 || len(a) < 2*d || len(b) < 2*d {
		return 0, fmt.Errorf("eval: MMD of %d and %d values of %d bits: want whole vectors, at least two in each set", len(a), len(b), d)
	}
	pa, pb := pack(a, d), pack(b, d)
	// The kernel takes d+1 values: look them up.
	kernel := make([]float64, d+1)
	for h := range kernel {
		kernel[h] = math.Exp(-float64(h) / float64(d))
	}
	within := func(p [][]uint64) float64 {
		var sum float64
		for i := range p {
			for j := i + 1; j < len(p); j++ {
				sum += 2 * kernel[hamming(p[i], p[j])]
			}
		}
		n := float64(len(p))
		return sum / (n * (n - 1))
	}
	var cross float64
	for _, x := range pa {
		for _, y := range pb {
			cross += kernel[hamming(x, y)]
		}
	}
	return within(pa) + within(pb) - 2*cross/float64(len(pa)*len(pb)), nil
}

// pack packs each row of d bits into 64-bit words.
func pack(flat []float32, d int) [][]uint64 {
	rows := make([][]uint64, len(flat)/d)
	for r := range rows {
		words := make([]uint64, (d+63)/64)
		for i, v := range flat[r*d : (r+1)*d] {
			if v > 0.5 {
				words[i/64] |= 1 << (i % 64)
			}
		}
		rows[r] = words
	}
	return rows
}

func hamming(x, y []uint64) int {
	h := 0
	for i := range x {
		h += bits.OnesCount64(x[i] ^ y[i])
	}
	return h
}
