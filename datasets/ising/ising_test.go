package ising

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
)

func TestLatticeAdjacency(t *testing.T) {
	for _, side := range []int{3, 4, 5} {
		a, err := LatticeAdjacency(side)
		if err != nil {
			t.Fatal(err)
		}
		d := side * side
		// Neighbours on the torus: one coordinate differs by ±1 (mod
		// side), the other is equal.
		step := func(u, v int) bool { diff := (u - v + side) % side; return diff == 1 || diff == side-1 }
		for i := range d {
			for j := range d {
				ri, ci, rj, cj := i/side, i%side, j/side, j%side
				want := 0.0
				if (ri == rj && step(ci, cj)) || (ci == cj && step(ri, rj)) {
					want = 1
				}
				if a[i*d+j] != want {
					t.Fatalf("side %d: A[%d][%d] = %v, want %v", side, i, j, a[i*d+j], want)
				}
			}
		}
	}
	if _, err := LatticeAdjacency(2); err == nil {
		t.Error("LatticeAdjacency(2) returned no error")
	}
}

// randomModel is a model on d spins with random symmetric couplings and
// field.
func randomModel(d int, seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 0))
	m := &Model{J: make([]float64, d*d), B: make([]float64, d), D: d}
	for i := range d {
		m.B[i] = rng.NormFloat64() * 0.3
		for j := i + 1; j < d; j++ {
			v := rng.NormFloat64() * 0.3
			m.J[i*d+j], m.J[j*d+i] = v, v
		}
	}
	return m
}

// states enumerates all 2^d spin configurations.
func states(d int) [][]float64 {
	var out [][]float64
	for k := range 1 << d {
		s := make([]float64, d)
		for i := range d {
			s[i] = float64(2*((k>>i)&1) - 1)
		}
		out = append(out, s)
	}
	return out
}

func TestLogWeightOfTheAlignedLattice(t *testing.T) {
	m, err := Lattice(4, -0.25)
	if err != nil {
		t.Fatal(err)
	}
	up := slices.Repeat([]float64{1}, m.D)
	// sᵀJs over all pairs (i, j) with j a neighbour of i: 4 per spin.
	if got, want := m.LogWeight(up), -0.25*4*float64(m.D); math.Abs(got-want) > 1e-12 {
		t.Errorf("LogWeight(all +1) = %v, want σ·4D = %v", got, want)
	}
}

// The Gibbs conditional is the ratio of the two states' weights.
func TestProbUpMatchesEnumeration(t *testing.T) {
	m := randomModel(5, 1)
	for _, s := range states(m.D) {
		for i := range m.D {
			plus, minus := slices.Clone(s), slices.Clone(s)
			plus[i], minus[i] = 1, -1
			wp, wm := math.Exp(m.LogWeight(plus)), math.Exp(m.LogWeight(minus))
			if got, want := m.ProbUp(s, i), wp/(wp+wm); math.Abs(got-want) > 1e-12 {
				t.Fatalf("ProbUp(%v, %d) = %v, enumeration gives %v", s, i, got, want)
			}
		}
	}
}

// Gibbs chains reach the model's distribution: on a 3×3 lattice with a
// field (512 states, enumerated exactly), every spin's mean and the mean
// log-weight of 20,000 samples agree with the exact values within 4
// standard errors.
func TestSampleMatchesTheExactDistribution(t *testing.T) {
	m, err := Lattice(3, 0.15)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.B {
		m.B[i] = 0.1 * float64(i%3-1)
	}
	var z float64
	exactMean := make([]float64, m.D)
	var exactW, exactW2 float64
	for _, s := range states(m.D) {
		w := m.LogWeight(s)
		p := math.Exp(w)
		z += p
		for i, v := range s {
			exactMean[i] += p * v
		}
		exactW, exactW2 = exactW+p*w, exactW2+p*w*w
	}
	for i := range exactMean {
		exactMean[i] /= z
	}
	exactW, exactW2 = exactW/z, exactW2/z

	const n = 20000
	samples, err := m.Sample(n, 20, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.D {
		var mean float64
		for k := range n {
			mean += samples[k*m.D+i] / n
		}
		se := math.Sqrt((1 - exactMean[i]*exactMean[i]) / n)
		if math.Abs(mean-exactMean[i]) > 4*se {
			t.Errorf("spin %d: sample mean %.4f, exact %.4f (standard error %.4f)", i, mean, exactMean[i], se)
		}
	}
	var meanW float64
	for k := range n {
		meanW += m.LogWeight(samples[k*m.D:(k+1)*m.D]) / n
	}
	if se := math.Sqrt((exactW2 - exactW*exactW) / n); math.Abs(meanW-exactW) > 4*se {
		t.Errorf("mean log-weight %.4f, exact %.4f (standard error %.4f)", meanW, exactW, se)
	}
}

func TestSampleIsReproducibleAndChecked(t *testing.T) {
	m := randomModel(4, 2)
	a, err := m.Sample(3, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Sample(3, 2, 9)
	c, _ := m.Sample(3, 2, 10)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different samples")
	}
	if slices.Equal(a, c) {
		t.Error("seeds 9 and 10 gave the same samples")
	}
	for _, bad := range [][2]int{{0, 1}, {1, 0}} {
		if _, err := m.Sample(bad[0], bad[1], 1); err == nil {
			t.Errorf("Sample(%d, %d) returned no error", bad[0], bad[1])
		}
	}
	if got := Bits([]float64{-1, 1, 1, -1}); !slices.Equal(got, []float32{0, 1, 1, 0}) {
		t.Errorf("Bits = %v, want [0 1 1 0]", got)
	}
}

// TestLatticeLogZMatchesEnumeration: Kaufman's closed form against the sum
// over every state of the 3×3 and 4×4 lattices (512 and 65,536 states),
// above, near and below the critical coupling K = 2σ ≈ 0.4407.
func TestLatticeLogZMatchesEnumeration(t *testing.T) {
	for _, side := range []int{3, 4} {
		for _, sigma := range []float64{0, 0.05, 0.2, 0.22, 0.3, 0.6} {
			m, err := Lattice(side, sigma)
			if err != nil {
				t.Fatal(err)
			}
			var logWeights []float64
			for _, s := range states(m.D) {
				logWeights = append(logWeights, m.LogWeight(s))
			}
			want := floats.LogSumExp(logWeights)
			got, err := LatticeLogZ(side, sigma)
			if err != nil || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("side %d, σ %v: log Z %v (%v), enumerated %v", side, sigma, got, err, want)
			}
		}
	}
	for _, tc := range []struct {
		side  int
		sigma float64
	}{{2, 0.1}, {4, -0.1}, {4, math.NaN()}} {
		if _, err := LatticeLogZ(tc.side, tc.sigma); err == nil {
			t.Errorf("side %d, σ %v: no error", tc.side, tc.sigma)
		}
	}
}
