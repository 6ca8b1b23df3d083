package vectors

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lattice is a Set of the points of a side×side grid with spacing h, each
// repeated copies times.
func lattice(side int, h float64, copies int) *Set {
	s := &Set{D: 2}
	for i := range side {
		for j := range side {
			for range copies {
				s.Values = append(s.Values, float64(i)*h, float64(j)*h)
				s.N++
			}
		}
	}
	return s
}

func TestMedianNeighbourDistance(t *testing.T) {
	// n uniform points on [0, 1]: the distance to the nearest other is the
	// smaller of two exponential gaps of rate n, exponential of rate 2n,
	// median ln 2 / (2n); 2,000 queries give it within about 3 %.
	const n = 20000
	r := rand.New(rand.NewPCG(7, 0))
	uniform := &Set{N: n, D: 1, Values: make([]float64, n)}
	for i := range uniform.Values {
		uniform.Values[i] = r.Float64()
	}
	for _, tc := range []struct {
		name    string
		s       *Set
		queries int
		want    float64
		rel     float64
	}{
		{"grid", lattice(12, 0.3, 1), 1000, 0.3, 1e-12},
		{"grid with each row three times", lattice(12, 0.3, 3), 1000, 0.3, 1e-12},
		{"grid, some rows", lattice(30, 0.05, 2), 100, 0.05, 1e-12},
		{"uniform on [0, 1]", uniform, 2000, math.Ln2 / (2 * n), 0.12},
		{"one row repeated", lattice(1, 1, 5), 1000, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.s.MedianNeighbourDistance(tc.queries, 1)
			if math.Abs(got-tc.want) > tc.rel*tc.want {
				t.Errorf("median neighbour distance %.6g, want %.6g (within %g)", got, tc.want, tc.rel)
			}
		})
	}
}
