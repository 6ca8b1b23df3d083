package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/internal/testutil"
)

func randomDense(rng *rand.Rand, r, c int) *mat.Dense {
	a := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	return a
}

// randomRotation returns the orthogonal factor of a Gaussian matrix.
func randomRotation(rng *rand.Rand, d int) *mat.Dense {
	var qr mat.QR
	qr.Factorize(randomDense(rng, d, d))
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// rotate returns Q s Qᵀ.
func rotate(q *mat.Dense, s mat.Symmetric) *mat.SymDense {
	var qs, qsq mat.Dense
	qs.Mul(q, s)
	qsq.Mul(&qs, q.T())
	d := s.SymmetricDim()
	out := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			out.SetSym(i, j, (qsq.At(i, j)+qsq.At(j, i))/2)
		}
	}
	return out
}

func outer(u []float64) *mat.SymDense {
	s := mat.NewSymDense(len(u), nil)
	s.SymRankOne(s, 1, mat.NewVecDense(len(u), u))
	return s
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestFrechetDistanceClosedForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	spd := testutil.RandomSPD(rng, 6, 0.1)
	mu6 := testutil.RandomVector(rng, 6)
	q := randomRotation(rng, 4)
	a := []float64{0.5, 2, 3, 7}
	b := []float64{1.5, 0.2, 3, 11}
	muA, muB := testutil.RandomVector(rng, 4), testutil.RandomVector(rng, 4)
	u, v := testutil.RandomVector(rng, 5), testutil.RandomVector(rng, 5)
	zero5 := make([]float64, 5)

	// Σ(√a − √b)² for diagonal or commuting covariances.
	var diagTerm float64
	for i := range a {
		diagTerm += (math.Sqrt(a[i]) - math.Sqrt(b[i])) * (math.Sqrt(a[i]) - math.Sqrt(b[i]))
	}

	tests := []struct {
		name     string
		mu1      []float64
		s1       mat.Symmetric
		mu2      []float64
		s2       mat.Symmetric
		want     float64
		tolerant float64
	}{
		{"identical Gaussians", mu6, spd, mu6, spd, 0, 1e-12},
		{"same covariance, shifted mean", mu6, spd, make([]float64, 6), spd, dot(mu6, mu6), 1e-12},
		{"1-D: (μ1−μ2)² + (s1−s2)²", []float64{1}, testutil.Diag(4), []float64{-2}, testutil.Diag(9), 9 + 1, 1e-14},
		{"diagonal", muA, testutil.Diag(a...), muB, testutil.Diag(b...), sqDist(muA, muB) + diagTerm, 1e-12},
		{"commuting (common eigenvectors)", muA, rotate(q, testutil.Diag(a...)), muB, rotate(q, testutil.Diag(b...)), sqDist(muA, muB) + diagTerm, 1e-12},
		{"singular diagonal", []float64{0, 0, 0}, testutil.Diag(1, 0, 4), []float64{0, 0, 0}, testutil.Diag(4, 0, 0), 1 + 4, 1e-12},
		{"both zero covariance", []float64{1, 2}, testutil.Diag(0, 0), []float64{1, 5}, testutil.Diag(0, 0), 9, 0},
		{"zero against full", zero5, mat.NewSymDense(5, nil), zero5, testutil.RandomSPD(rng, 5, 0.5), 0, 0}, // want filled below
		// Σ1 = uuᵀ, Σ2 = vvᵀ: Σ1Σ2 = (u·v) u vᵀ has the single non-zero
		// eigenvalue (u·v)², so the trace of its square root is |u·v|.
		{"rank one against rank one", u, outer(u), v, outer(v), sqDist(u, v) + dot(u, u) + dot(v, v) - 2*math.Abs(dot(u, v)), 1e-12},
		// Rotated singular covariances.
		{"singular, commuting", muA, rotate(q, testutil.Diag(0, 2, 0, 7)), muB, rotate(q, testutil.Diag(1, 0, 0, 11)), sqDist(muA, muB) + 1 + 2 + (math.Sqrt(7)-math.Sqrt(11))*(math.Sqrt(7)-math.Sqrt(11)), 1e-12},
	}
	tests[7].want = mat.Trace(tests[7].s2)
	tests[7].tolerant = 1e-12

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range []string{"1,2", "2,1"} {
				var got float64
				var err error
				if order == "1,2" {
					got, err = FrechetDistance(tc.mu1, tc.s1, tc.mu2, tc.s2)
				} else {
					got, err = FrechetDistance(tc.mu2, tc.s2, tc.mu1, tc.s1)
				}
				if err != nil {
					t.Fatalf("order %s: %v", order, err)
				}
				if math.Abs(got-tc.want) > tc.tolerant*math.Max(1, tc.want) {
					t.Errorf("order %s: distance = %.15g, want %.15g (±%g)", order, got, tc.want, tc.tolerant)
				}
			}
		})
	}
}

// denmanBeavers returns the principal square root of a (whose eigenvalues
// must avoid the closed negative real axis) by the Denman–Beavers
// iteration Y ← (Y + Z⁻¹)/2, Z ← (Z + Y⁻¹)/2 from Y = a, Z = I.
func denmanBeavers(t *testing.T, a mat.Matrix) *mat.Dense {
	t.Helper()
	n, _ := a.Dims()
	y := mat.DenseCopyOf(a)
	z := mat.NewDense(n, n, nil)
	for i := range n {
		z.Set(i, i, 1)
	}
	for range 100 {
		var yInv, zInv mat.Dense
		if err := yInv.Inverse(y); err != nil {
			t.Fatalf("Denman–Beavers: %v", err)
		}
		if err := zInv.Inverse(z); err != nil {
			t.Fatalf("Denman–Beavers: %v", err)
		}
		var next mat.Dense
		next.Add(y, &zInv)
		next.Scale(0.5, &next)
		z.Add(z, &yInv)
		z.Scale(0.5, z)
		var change mat.Dense
		change.Sub(&next, y)
		y = &next
		if mat.Norm(&change, 1) <= 1e-15*mat.Norm(y, 1) {
			return y
		}
	}
	t.Fatal("Denman–Beavers did not converge in 100 iterations")
	return nil
}

func TestFrechetDistanceMatchesDenmanBeavers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{1, 2, 5, 10, 30} {
		for trial := range 5 {
			s1, s2 := testutil.RandomSPD(rng, d, 0.2), testutil.RandomSPD(rng, d, 0.2)
			mu1, mu2 := testutil.RandomVector(rng, d), testutil.RandomVector(rng, d)

			var prod mat.Dense
			prod.Mul(s1, s2)
			root := denmanBeavers(t, &prod)
			var square, residual mat.Dense
			square.Mul(root, root)
			residual.Sub(&square, &prod)
			if r := mat.Norm(&residual, 1) / mat.Norm(&prod, 1); r > 1e-12 {
				t.Fatalf("d=%d trial %d: Denman–Beavers root squared is off by %g", d, trial, r)
			}
			want := sqDist(mu1, mu2) + mat.Trace(s1) + mat.Trace(s2) - 2*mat.Trace(root)

			got, err := FrechetDistance(mu1, s1, mu2, s2)
			if err != nil {
				t.Fatalf("d=%d trial %d: %v", d, trial, err)
			}
			if math.Abs(got-want) > 1e-8 {
				t.Errorf("d=%d trial %d: distance = %.15g, Denman–Beavers gives %.15g", d, trial, got, want)
			}
		}
	}
}

func TestFrechetDistanceRotationInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name  string
		d     int
		floor float64
	}{{"well conditioned", 8, 0.5}, {"nearly singular", 8, 1e-9}, {"larger", 40, 0.1}} {
		t.Run(tc.name, func(t *testing.T) {
			s1, s2 := testutil.RandomSPD(rng, tc.d, tc.floor), testutil.RandomSPD(rng, tc.d, tc.floor)
			mu1, mu2 := testutil.RandomVector(rng, tc.d), testutil.RandomVector(rng, tc.d)
			want, err := FrechetDistance(mu1, s1, mu2, s2)
			if err != nil {
				t.Fatal(err)
			}
			q := randomRotation(rng, tc.d)
			var qmu1, qmu2 mat.VecDense
			qmu1.MulVec(q, mat.NewVecDense(tc.d, mu1))
			qmu2.MulVec(q, mat.NewVecDense(tc.d, mu2))
			got, err := FrechetDistance(qmu1.RawVector().Data, rotate(q, s1), qmu2.RawVector().Data, rotate(q, s2))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Errorf("rotated distance = %.15g, original %.15g", got, want)
			}
		})
	}
}

// TestFrechetDistanceOffsetFallback makes the first eigen-decompositions
// fail and checks that the ε·I retry gives pytorch-fid's offset formula.
func TestFrechetDistanceOffsetFallback(t *testing.T) {
	a := []float64{1, 0, 4}
	b := []float64{4, 9, 0}
	mu1, mu2 := []float64{1, 2, 3}, []float64{0, 2, 5}
	eps := FrechetOffset
	// Diagonal: Tr(Σ1) + Tr(Σ2) − 2 Σ √((a+ε)(b+ε)).
	want := sqDist(mu1, mu2)
	for i := range a {
		want += a[i] + b[i] - 2*math.Sqrt((a[i]+eps)*(b[i]+eps))
	}

	// Σ2 is singular, so the first attempt takes the exact route: calls 1–3
	// (Σ1, Σ2, M). The retry starts with the call after the failing one, on
	// Σ2 + εI, which is positive definite: the quick route first (one
	// call), then, if it fails, the exact one.
	tests := []struct {
		name    string
		fail    func(call int) bool
		wantErr string
	}{
		{"Σ1 decomposition fails", func(c int) bool { return c == 1 }, ""},
		{"Σ2 decomposition fails", func(c int) bool { return c == 2 }, ""},
		{"M decomposition fails", func(c int) bool { return c == 3 }, ""},
		{"the retry's quick route fails", func(c int) bool { return c <= 2 }, ""},
		{"retry fails too", func(c int) bool { return true }, "sigma1 did not converge (also with the 1e-06·I offset)"},
	}
	defer func(f func(*mat.EigenSym, mat.Symmetric, bool) bool) { factorizeSym = f }(factorizeSym)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			factorizeSym = func(e *mat.EigenSym, s mat.Symmetric, vectors bool) bool {
				calls++
				if tc.fail(calls) {
					return false
				}
				return e.Factorize(s, vectors)
			}
			got, err := FrechetDistance(mu1, testutil.Diag(a...), mu2, testutil.Diag(b...))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("distance = %.15g, want %.15g", got, want)
			}
		})
	}
}

func TestFrechetDistanceErrors(t *testing.T) {
	ok := testutil.Diag(1, 2)
	mu := []float64{0, 0}
	tests := []struct {
		name     string
		mu1      []float64
		s1       mat.Symmetric
		mu2      []float64
		s2       mat.Symmetric
		wantText string
	}{
		{"empty", nil, ok, nil, ok, "mu1 is empty"},
		{"mu2 dimension", mu, ok, []float64{0}, ok, "mu2 has dimension 1, want 2"},
		{"sigma1 dimension", mu, testutil.Diag(1), mu, ok, "sigma1 is 1×1, want 2×2"},
		{"sigma2 dimension", mu, ok, mu, testutil.Diag(1, 2, 3), "sigma2 is 3×3, want 2×2"},
		{"NaN mean", []float64{0, math.NaN()}, ok, mu, ok, "mu1[1] = NaN"},
		{"infinite covariance", mu, ok, mu, testutil.Diag(1, math.Inf(1)), "sigma2[1,1] = +Inf"},
		{"indefinite sigma1", mu, testutil.Diag(1, -0.5), mu, ok, "sigma1 has eigenvalue -0.5"},
		{"indefinite sigma2", mu, ok, mu, mat.NewSymDense(2, []float64{1, 2, 2, 1}), "sigma2 has eigenvalue -1"},
		{"overflow", mu, testutil.Diag(1e300, 1), mu, testutil.Diag(1e300, 1), "numerical failure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FrechetDistance(tc.mu1, tc.s1, tc.mu2, tc.s2)
			if err == nil || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error = %v, want one containing %q", err, tc.wantText)
			}
		})
	}
}

// TestFrechetDistancePSDToleranceIsRelative checks that how negative an
// eigenvalue may be is relative to the covariance's scale (1e-9 × the
// largest magnitude): a tiny negative eigenvalue of a large covariance is
// clamped to 0, giving the hand-computed distance of diagonal Gaussians
// (with Tr(Σ1) unclamped), while the same ratio of 1e-8 at a small scale is
// rejected.
func TestFrechetDistancePSDToleranceIsRelative(t *testing.T) {
	mu := []float64{0, 0}
	tests := []struct {
		name     string
		s1, s2   *mat.SymDense
		want     float64
		wantText string
	}{
		// √(1e6·4e6) = 2e6: 1e6 − 1e-4 + 4e6 + 1 − 2·2e6.
		{"large scale, −1e-10 relative", testutil.Diag(1e6, -1e-4), testutil.Diag(4e6, 1), 1e6 + 1 - 1e-4, ""},
		// √(1·4) = 2: 1 − 1e-10 + 4 + 1 − 2·2.
		{"unit scale, −1e-10 relative", testutil.Diag(1, -1e-10), testutil.Diag(4, 1), 2 - 1e-10, ""},
		{"small scale, −1e-8 relative", testutil.Diag(1e-6, -1e-14), testutil.Diag(1, 1), 0, "sigma1 has eigenvalue -1e-14"},
		{"unit scale, −1e-8 relative", testutil.Diag(1, 1), testutil.Diag(-1e-8, 1), 0, "sigma2 has eigenvalue -1e-08"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FrechetDistance(mu, tc.s1, mu, tc.s2)
			if tc.wantText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantText) {
					t.Errorf("error = %v, want one containing %q", err, tc.wantText)
				}
				return
			}
			if err != nil || math.Abs(got-tc.want) > 1e-12*tc.want {
				t.Errorf("distance = %.15g (%v), want %.15g", got, err, tc.want)
			}
		})
	}
}

// TestCleanEigenvalues checks the documented noise rule against hand-computed
// results: eigenvalues ≤ n·ε·max|λ| (ε = 2⁻⁵², the boundary included) or
// negative become 0, larger ones stay, and the smallest eigenvalue as given
// and the largest magnitude are returned.
func TestCleanEigenvalues(t *testing.T) {
	tests := []struct {
		name            string
		lambda, want    []float64
		lowest, largest float64
	}{
		{"at the noise bound 2·ε·1", []float64{1, 0x1p-51}, []float64{1, 0}, 0x1p-51, 1},
		{"twice the noise bound", []float64{1, 0x1p-50}, []float64{1, 0x1p-50}, 0x1p-50, 1},
		{"negative largest magnitude", []float64{-4, 2, 0}, []float64{0, 2, 0}, -4, 4},
		{"all zero", []float64{0, 0}, []float64{0, 0}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lambda := slices.Clone(tc.lambda)
			lowest, largest := cleanEigenvalues(lambda)
			if !slices.Equal(lambda, tc.want) || lowest != tc.lowest || largest != tc.largest {
				t.Errorf("cleanEigenvalues(%v) = %v, lowest %v, largest %v; want %v, %v, %v",
					tc.lambda, lambda, lowest, largest, tc.want, tc.lowest, tc.largest)
			}
		})
	}
}

// TestFrechetDistanceSingularRandom compares a rank-deficient Σ1 = A Aᵀ
// (A of size d×r, r < d) with the identity Tr((A Aᵀ Σ2)^{1/2}) =
// Tr((Aᵀ Σ2 A)^{1/2}), whose r×r matrix is invertible, so Denman–Beavers
// applies.
func TestFrechetDistanceSingularRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct{ d, r int }{{3, 1}, {6, 2}, {12, 7}, {20, 19}} {
		a := randomDense(rng, tc.d, tc.r)
		s1 := mat.NewSymDense(tc.d, nil)
		s1.SymOuterK(1, a)
		s2 := testutil.RandomSPD(rng, tc.d, 0.3)
		mu1, mu2 := testutil.RandomVector(rng, tc.d), testutil.RandomVector(rng, tc.d)

		var s2a, small mat.Dense
		s2a.Mul(s2, a)
		small.Mul(a.T(), &s2a)
		want := sqDist(mu1, mu2) + mat.Trace(s1) + mat.Trace(s2) - 2*mat.Trace(denmanBeavers(t, &small))

		got, err := FrechetDistance(mu1, s1, mu2, s2)
		if err != nil {
			t.Fatalf("d=%d r=%d: %v", tc.d, tc.r, err)
		}
		if math.Abs(got-want) > 1e-8 {
			t.Errorf("d=%d r=%d: distance = %.15g, want %.15g", tc.d, tc.r, got, want)
		}
	}
}

func TestFrechetDistanceToStats(t *testing.T) {
	// One dimension: samples 1, 2, 3, 4 have mean 2.5 and unbiased variance
	// 5/3; against N(0, 1) the distance is 2.5² + 5/3 + 1 − 2√(5/3).
	ref := mat.NewSymDense(1, []float64{1})
	got, err := FrechetDistanceToStats([]float64{1, 2, 3, 4}, []float64{0}, ref)
	if err != nil {
		t.Fatal(err)
	}
	if want := 6.25 + 5.0/3 + 1 - 2*math.Sqrt(5.0/3); math.Abs(got-want) > 1e-12 {
		t.Errorf("FrechetDistanceToStats = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name     string
		features []float64
		want     string
	}{
		{"ragged", []float64{1, 2, 3}, "not whole vectors"},
		{"too few samples", []float64{1, 2, 3, 4}, "want n > dim"},
	} {
		_, err := FrechetDistanceToStats(tc.features, []float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestFrechetDistanceTakesTheQuickRoute checks which route decides: with a
// positive definite Σ2 one eigen-decomposition without eigenvectors (of
// Lᵀ Σ1 L), agreeing with the exact route to rounding; with a singular Σ2
// the exact route's three, the first with eigenvectors.
func TestFrechetDistanceTakesTheQuickRoute(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const d = 30
	// A zero variance: Cholesky's pivot is exactly 0.
	singular := testutil.RandomSPD(rng, d, 0.2)
	for i := range d {
		singular.SetSym(i, d-1, 0)
	}
	defer func(f func(*mat.EigenSym, mat.Symmetric, bool) bool) { factorizeSym = f }(factorizeSym)
	for _, tc := range []struct {
		name      string
		s2        *mat.SymDense
		wantCalls []bool // vectors asked for, call by call
	}{
		{"positive definite Σ2", testutil.RandomSPD(rng, d, 0.2), []bool{false}},
		{"singular Σ2", singular, []bool{true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1 := testutil.RandomSPD(rng, d, 0.2)
			mu1, mu2 := testutil.RandomVector(rng, d), testutil.RandomVector(rng, d)
			var calls []bool
			factorizeSym = func(e *mat.EigenSym, s mat.Symmetric, vectors bool) bool {
				calls = append(calls, vectors)
				return e.Factorize(s, vectors)
			}
			got, err := FrechetDistance(mu1, s1, mu2, tc.s2)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("eigen-decompositions with vectors %v, want %v", calls, tc.wantCalls)
			}
			exact, err := traceSqrtProduct(s1, tc.s2, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := sqDist(mu1, mu2) + mat.Trace(s1) + mat.Trace(tc.s2) - 2*exact
			if math.Abs(got-want) > 1e-10*want {
				t.Errorf("distance %.15g, the exact route's %.15g", got, want)
			}
		})
	}
}

// BenchmarkFrechetDistanceInception times one FID at the Inception
// features' size, 5,000 samples of 2048 dimensions against reference
// statistics, by the quick route and by the exact one, and a bootstrap
// interval of 4 resamples (docs/evaluation.md; seconds an operation: run
// with -benchtime 1x).
func BenchmarkFrechetDistanceInception(b *testing.B) {
	const n, d = 5000, 2048
	rng := rand.New(rand.NewPCG(1, 2))
	ref, samples := make([]float64, n*d), make([]float64, n*d)
	for i := range ref {
		ref[i] = rng.NormFloat64()
		samples[i] = ref[i] + 0.3*rng.NormFloat64()
	}
	mu, sigma, err := GaussianStatsFlat(ref, d)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("quick", func(b *testing.B) {
		for b.Loop() {
			if _, err := FrechetDistanceToStats(samples, mu, sigma); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("interval-4-resamples", func(b *testing.B) {
		for b.Loop() {
			if _, err := FrechetDistanceInterval(samples, mu, sigma, 4, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exact", func(b *testing.B) {
		m, s, err := GaussianStatsFlat(samples, d)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := frechetDistance(m, s, mu, sigma, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
