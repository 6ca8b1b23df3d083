// Package ising is the data of the paper's Ising experiment (appendix,
// "Energy Discrepancy on the Discrete Space {0,1}^d", after Grathwohl et
// al. 2021): Ising models on a periodic 2-D lattice, with couplings
// J = σ·A for the lattice's adjacency matrix A, and samples from them drawn
// by Gibbs sampling.
//
// A state is D spins sᵢ ∈ {−1, +1}, of log-probability
// log p(s) = sᵀJs + bᵀs − log Z (J symmetric, zero diagonal). The learning
// code sees bits xᵢ = (sᵢ + 1)/2 ∈ {0, 1} (Bits).
package ising

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Model is an Ising model on D spins.
type Model struct {
	// J is the symmetric D×D coupling matrix, row-major, zero diagonal.
	J []float64
	// B is the field, D values.
	B []float64
	// D is the number of spins.
	D int
}

// LatticeAdjacency returns the adjacency matrix (row-major, side²×side²) of
// the periodic side×side lattice: each spin is joined to its four
// neighbours, the lattice wrapping around at the edges. side must be at
// least 3 (on smaller lattices a spin's neighbours coincide).
func LatticeAdjacency(side int) ([]float64, error) {
	if side < 3 {
		return nil, fmt.Errorf("ising: lattice side %d: must be at least 3", side)
	}
	d := side * side
	a := make([]float64, d*d)
	for r := range side {
		for c := range side {
			i := r*side + c
			for _, j := range []int{((r+1)%side)*side + c, r*side + (c+1)%side} {
				a[i*d+j], a[j*d+i] = 1, 1
			}
		}
	}
	return a, nil
}

// Lattice returns the model of the periodic side×side lattice with
// couplings J = sigma·A and no field, as in Grathwohl et al.'s experiment
// (sigma > 0 ferromagnetic, < 0 antiferromagnetic).
func Lattice(side int, sigma float64) (*Model, error) {
	a, err := LatticeAdjacency(side)
	if err != nil {
		return nil, err
	}
	for i := range a {
		a[i] *= sigma
	}
	d := side * side
	return &Model{J: a, B: make([]float64, d), D: d}, nil
}

// LogWeight is the unnormalised log-probability sᵀJs + bᵀs of the spins s.
func (m *Model) LogWeight(s []float64) float64 {
	var w float64
	for i := range m.D {
		var row float64
		for j := range m.D {
			row += m.J[i*m.D+j] * s[j]
		}
		w += s[i] * (row + m.B[i])
	}
	return w
}

// ProbUp is p(sᵢ = +1 | the other spins): the two states differ in
// 4·sᵢ·Σ_{j≠i} Jᵢⱼsⱼ + 2·bᵢsᵢ of log-weight (J symmetric), so it is
// σ(4·Σ_{j≠i} Jᵢⱼsⱼ + 2bᵢ).
func (m *Model) ProbUp(s []float64, i int) float64 {
	var field float64
	for j := range m.D {
		if j != i {
			field += m.J[i*m.D+j] * s[j]
		}
	}
	return 1 / (1 + math.Exp(-(4*field + 2*m.B[i])))
}

// Sweep updates every spin of s once, in order, from its conditional
// distribution (one sweep of systematic-scan Gibbs sampling).
func (m *Model) Sweep(rng *rand.Rand, s []float64) {
	for i := range m.D {
		if rng.Float64() < m.ProbUp(s, i) {
			s[i] = 1
		} else {
			s[i] = -1
		}
	}
}

// Sample returns n states, each the end of its own Gibbs chain of sweeps
// sweeps from uniformly random spins, as n×D spins row-major. Chain k
// draws from a PCG generator seeded with (seed, k), so the samples depend
// only on the arguments.
func (m *Model) Sample(n, sweeps int, seed uint64) ([]float64, error) {
	if n < 1 || sweeps < 1 {
		return nil, fmt.Errorf("ising: sampling %d states with %d sweeps each: want at least 1 of both", n, sweeps)
	}
	out := make([]float64, n*m.D)
	for k := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(k)))
		s := out[k*m.D : (k+1)*m.D]
		for i := range s {
			s[i] = float64(2*rng.IntN(2) - 1)
		}
		for range sweeps {
			m.Sweep(rng, s)
		}
	}
	return out, nil
}

// Bits maps spins sᵢ ∈ {−1, +1} to bits (sᵢ + 1)/2 ∈ {0, 1}, the form the
// Bernoulli energy discrepancy takes.
func Bits(spins []float64) []float32 {
	bits := make([]float32, len(spins))
	for i, s := range spins {
		bits[i] = float32((s + 1) / 2)
	}
	return bits
}

// LatticeLogZ is the exact log-partition function log Σ_s exp(sᵀJs) of
// Lattice(side, sigma) for sigma ≥ 0, by Kaufman's (1949) solution of
// the periodic square lattice: with K = 2σ the coupling of a bond
// (sᵀJs counts each bond twice), N = side²,
//
//	Z = ½ (2 sinh 2K)^(N/2) (Y₁ + Y₂ + Y₃ + Y₄),
//	Y₁,₂ = Π_{r=1..side} 2 cosh, sinh(side·γ_{2r−1}/2),
//	Y₃,₄ = Π_{r=1..side} 2 cosh, sinh(side·γ_{2r−2}/2),
//
// cosh γ_k = cosh 2K coth 2K − cos(πk/side) for k ≥ 1, and
// γ₀ = 2K + log tanh K (negative above the critical temperature, which
// makes Y₄ negative). It lets annealed importance sampling be checked on
// lattices far too large to enumerate.
func LatticeLogZ(side int, sigma float64) (float64, error) {
	if side < 3 {
		return 0, fmt.Errorf("ising: lattice side %d: must be at least 3", side)
	}
	if !(sigma >= 0) || math.IsInf(sigma, 1) {
		return 0, fmt.Errorf("ising: σ = %v: the exact log Z is for finite σ ≥ 0", sigma)
	}
	n := float64(side * side)
	if sigma == 0 {
		return n * math.Ln2, nil
	}
	k := 2 * sigma
	gamma := func(i int) float64 {
		if i == 0 {
			return 2*k + math.Log(math.Tanh(k))
		}
		return math.Acosh(math.Cosh(2*k)/math.Tanh(2*k) - math.Cos(math.Pi*float64(i)/float64(side)))
	}
	// log Π 2cosh and log |Π 2sinh| with the product's sign.
	logProducts := func(first int) (logCosh, logSinh, sign float64) {
		sign = 1
		for r := range side {
			g := float64(side) * gamma(first+2*r) / 2
			logCosh += math.Log(2 * math.Cosh(g))
			if g < 0 {
				sign = -sign
			}
			logSinh += math.Log(2 * math.Abs(math.Sinh(g)))
		}
		return logCosh, logSinh, sign
	}
	c1, s1, _ := logProducts(1)
	c3, s3, sign4 := logProducts(0)
	top := max(c1, s1, c3, s3)
	sum := math.Exp(c1-top) + math.Exp(s1-top) + math.Exp(c3-top) + sign4*math.Exp(s3-top)
	return math.Log(0.5) + n/2*math.Log(2*math.Sinh(2*k)) + top + math.Log(sum), nil
}
