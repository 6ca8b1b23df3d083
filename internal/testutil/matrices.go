package testutil

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// RandomVector is d standard normal draws.
func RandomVector(rng *rand.Rand, d int) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// RandomSPD returns A Aᵀ/d + floor·I for a d×d Gaussian A: symmetric
// positive definite with eigenvalues bounded below by floor.
func RandomSPD(rng *rand.Rand, d int, floor float64) *mat.SymDense {
	a := mat.NewDense(d, d, RandomVector(rng, d*d))
	s := mat.NewSymDense(d, nil)
	s.SymOuterK(1/float64(d), a)
	for i := range d {
		s.SetSym(i, i, s.At(i, i)+floor)
	}
	return s
}

// Diag is the diagonal matrix of values.
func Diag(values ...float64) *mat.SymDense {
	s := mat.NewSymDense(len(values), nil)
	for i, v := range values {
		s.SetSym(i, i, v)
	}
	return s
}
