package eval

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// FrechetOffset is the ε of the fallback in FrechetDistance: when the
// eigen-decompositions fail, the trace of the matrix square root is
// recomputed from Σ1 + εI and Σ2 + εI, as pytorch-fid does when scipy's
// sqrtm fails.
const FrechetOffset = 1e-6

// psdTolerance bounds, relative to the largest eigenvalue magnitude, how
// negative an eigenvalue of a covariance may be and still count as rounding
// error of a positive semi-definite matrix (which is then clamped to 0).
const psdTolerance = 1e-9

// machineEpsilon is the float64 rounding unit, 2⁻⁵².
const machineEpsilon = 0x1p-52

// errNumerical marks a failed eigen-decomposition or a non-finite result,
// which the ε offset may cure.
var errNumerical = errors.New("numerical failure")

// factorizeSym is EigenSym.Factorize; tests replace it to exercise the
// fallback.
var factorizeSym = func(e *mat.EigenSym, a mat.Symmetric, vectors bool) bool {
	return e.Factorize(a, vectors)
}

// FrechetDistance returns the squared Fréchet (2-Wasserstein) distance
// between the Gaussians N(mu1, sigma1) and N(mu2, sigma2),
//
//	FD = ‖μ1 − μ2‖² + Tr(Σ1) + Tr(Σ2) − 2 Tr((Σ1 Σ2)^{1/2}),
//
// which is FID when the statistics are those of Inception features.
//
// Tr((Σ1 Σ2)^{1/2}) is computed without a general (non-symmetric) matrix
// square root, from the eigenvalues of a symmetric positive semi-definite
// matrix similar to Σ1Σ2. The quick route, when Σ2 is positive definite:
// with its Cholesky factor Σ2 = L Lᵀ, Lᵀ Σ1 L is similar to Σ1Σ2 and the
// trace is Σ_i √λ_i(Lᵀ Σ1 L) (one eigen-decomposition without
// eigenvectors; at the Inception features' d = 2048 about an eighth of the
// exact route's time, which spends most of its time on Σ1's
// eigenvectors). Where the Cholesky factorization fails or an eigenvalue of
// Lᵀ Σ1 L is negative beyond rounding noise, the exact route decides, the
// same with Σ1^{1/2} Σ2 Σ1^{1/2}:
//
//  1. Σ1 = V Λ Vᵀ by a symmetric eigen-decomposition, and the eigenvalues
//     of Σ2. An eigenvalue below −1e-9 × (largest magnitude) is an error
//     (the matrix is not positive semi-definite). Eigenvalues that are
//     negative or no larger than d·ε·(largest magnitude), ε = 2⁻⁵², are
//     rounding noise and are set to 0.
//  2. With B = V Λ^{1/2}, M = Bᵀ Σ2 B = Vᵀ (Σ1^{1/2} Σ2 Σ1^{1/2}) V is that
//     matrix in the eigenbasis of Σ1, symmetrised as (M + Mᵀ)/2.
//  3. Tr((Σ1 Σ2)^{1/2}) = Σ_i √λ_i(M), after setting the eigenvalues of M
//     that are negative or within d·ε·λ_max(M) of zero to 0 in the same way
//     (M is positive semi-definite by construction).
//
// Singular covariances need no special treatment on this route: zero
// eigenvalues simply contribute zero. Only if an eigen-decomposition fails
// to converge, or the trace is not finite, is the computation repeated once
// with Σ1 + εI and Σ2 + εI (ε = FrechetOffset) in place of Σ1 and Σ2 in the
// trace of the square root only, like pytorch-fid's fallback; Tr(Σ1) and
// Tr(Σ2) keep the original matrices. A second failure is an error.
//
// The result is clamped to be ≥ 0, since cancellation can make the formula
// slightly negative for (nearly) identical Gaussians. The cost is O(d³) in
// the dimension d: on the exact route three symmetric eigen-decompositions
// (one with eigenvectors) and two matrix products.
func FrechetDistance(mu1 []float64, sigma1 mat.Symmetric, mu2 []float64, sigma2 mat.Symmetric) (float64, error) {
	if err := checkGaussians(mu1, sigma1, mu2, sigma2); err != nil {
		return 0, err
	}
	return frechetDistance(mu1, sigma1, mu2, sigma2, choleskyFactor(sigma2))
}

// checkGaussians checks that the two Gaussians' statistics have one
// dimension and finite values.
func checkGaussians(mu1 []float64, sigma1 mat.Symmetric, mu2 []float64, sigma2 mat.Symmetric) error {
	d := len(mu1)
	switch {
	case d == 0:
		return errors.New("eval: Fréchet distance: mu1 is empty: want dimension ≥ 1")
	case len(mu2) != d:
		return fmt.Errorf("eval: Fréchet distance: mu2 has dimension %d, want %d like mu1", len(mu2), d)
	case sigma1.SymmetricDim() != d:
		return fmt.Errorf("eval: Fréchet distance: sigma1 is %d×%[1]d, want %d×%[2]d like mu1", sigma1.SymmetricDim(), d)
	case sigma2.SymmetricDim() != d:
		return fmt.Errorf("eval: Fréchet distance: sigma2 is %d×%[1]d, want %d×%[2]d like mu1", sigma2.SymmetricDim(), d)
	}
	for _, v := range []struct {
		name string
		mu   []float64
		s    mat.Symmetric
	}{{"1", mu1, sigma1}, {"2", mu2, sigma2}} {
		for i, x := range v.mu {
			if !isFinite(x) {
				return fmt.Errorf("eval: Fréchet distance: mu%s[%d] = %v: want a finite number", v.name, i, x)
			}
		}
		for i := range d {
			for j := i; j < d; j++ {
				if x := v.s.At(i, j); !isFinite(x) {
					return fmt.Errorf("eval: Fréchet distance: sigma%s[%d,%d] = %v: want a finite number", v.name, i, j, x)
				}
			}
		}
	}
	return nil
}

// frechetDistance is FrechetDistance of checked statistics, with l the
// Cholesky factor of sigma2 (nil if it has none): a reference compared
// with many samples is factorized once.
func frechetDistance(mu1 []float64, sigma1 mat.Symmetric, mu2 []float64, sigma2 mat.Symmetric, l *mat.Dense) (float64, error) {
	tr, err := traceSqrtProduct(sigma1, sigma2, l)
	if errors.Is(err, errNumerical) {
		s2 := addIdentity(sigma2, FrechetOffset)
		tr, err = traceSqrtProduct(addIdentity(sigma1, FrechetOffset), s2, choleskyFactor(s2))
		if err != nil {
			err = fmt.Errorf("%w (also with the %g·I offset)", err, FrechetOffset)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("eval: Fréchet distance: %w", err)
	}

	var dist float64
	for i := range mu1 {
		delta := mu1[i] - mu2[i]
		dist += delta * delta
	}
	dist += mat.Trace(sigma1) + mat.Trace(sigma2) - 2*tr
	if !isFinite(dist) {
		return 0, fmt.Errorf("eval: Fréchet distance: result %v is not finite (values too large?)", dist)
	}
	return math.Max(dist, 0), nil
}

// traceSqrtProduct returns Tr((s1 s2)^{1/2}) for positive semi-definite s1
// and s2 by the routes documented at FrechetDistance: with l, s2's
// Cholesky factor, the quick one where it decides, else the exact one.
func traceSqrtProduct(s1, s2 mat.Symmetric, l *mat.Dense) (float64, error) {
	if l != nil {
		if tr, ok := traceSqrtByFactor(s1, l); ok {
			return tr, nil
		}
	}
	var eig1 mat.EigenSym
	if !factorizeSym(&eig1, s1, true) {
		return 0, fmt.Errorf("%w: eigen-decomposition of sigma1 did not converge", errNumerical)
	}
	lambda1 := eig1.Values(nil)
	if err := checkPSD("sigma1", lambda1); err != nil {
		return 0, err
	}
	var eig2 mat.EigenSym
	if !factorizeSym(&eig2, s2, false) {
		return 0, fmt.Errorf("%w: eigen-decomposition of sigma2 did not converge", errNumerical)
	}
	if err := checkPSD("sigma2", eig2.Values(nil)); err != nil {
		return 0, err
	}

	// b = V Λ^{1/2}, so that b bᵀ = Σ1.
	var b mat.Dense
	eig1.VectorsTo(&b)
	d := len(lambda1)
	for j, l := range lambda1 {
		root := math.Sqrt(l)
		for i := range d {
			b.Set(i, j, b.At(i, j)*root)
		}
	}
	var eigM mat.EigenSym
	if !factorizeSym(&eigM, congruence(s2, &b), false) {
		return 0, fmt.Errorf("%w: eigen-decomposition of Σ1^{1/2} Σ2 Σ1^{1/2} did not converge", errNumerical)
	}
	lambdaM := eigM.Values(nil)
	cleanEigenvalues(lambdaM)
	var tr float64
	for _, l := range lambdaM {
		tr += math.Sqrt(l)
	}
	if !isFinite(tr) {
		return 0, fmt.Errorf("%w: Tr((Σ1 Σ2)^{1/2}) = %v", errNumerical, tr)
	}
	return tr, nil
}

// choleskyFactor returns the lower triangular L with s = L Lᵀ, as a
// dense matrix (gonum multiplies dense matrices with BLAS, triangular ones
// element by element), or nil when s is not positive definite (singular,
// indefinite or not finite).
func choleskyFactor(s mat.Symmetric) *mat.Dense {
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		return nil
	}
	var l mat.TriDense
	ch.LTo(&l)
	return mat.DenseCopyOf(&l)
}

// traceSqrtByFactor returns Tr((s1 s2)^{1/2}) for s2 = l lᵀ as the sum of
// the square roots of the eigenvalues of lᵀ s1 l, which is similar to
// s1 s2 (lᵀ (s1 s2) l⁻ᵀ): one symmetric eigen-decomposition without
// eigenvectors and two matrix products. It reports false, leaving the
// decision to the exact route, when that decomposition fails, the trace is
// not finite, or an eigenvalue is negative beyond rounding noise (s1 not
// positive semi-definite, which the exact route names and measures
// against s1's own scale).
func traceSqrtByFactor(s1 mat.Symmetric, l *mat.Dense) (float64, bool) {
	var eig mat.EigenSym
	if !factorizeSym(&eig, congruence(s1, l), false) {
		return 0, false
	}
	lambda := eig.Values(nil)
	if lowest, largest := cleanEigenvalues(lambda); lowest < -float64(len(lambda))*machineEpsilon*largest {
		return 0, false
	}
	var tr float64
	for _, v := range lambda {
		tr += math.Sqrt(v)
	}
	return tr, isFinite(tr)
}

// congruence returns bᵀ s b, symmetrised as (M + Mᵀ)/2 against rounding.
func congruence(s mat.Symmetric, b mat.Matrix) *mat.SymDense {
	var sb, m mat.Dense
	sb.Mul(s, b)
	m.Mul(b.T(), &sb)
	d := m.RawMatrix().Rows
	sym := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2)
		}
	}
	return sym
}

// cleanEigenvalues sets to 0 every eigenvalue in lambda that is negative or
// within rounding noise of zero, |λ| ≤ n·ε·max|λ| (n = len(lambda), ε the
// float64 machine epsilon), and returns the smallest eigenvalue as given and
// the largest magnitude.
func cleanEigenvalues(lambda []float64) (lowest, largest float64) {
	lowest = math.Inf(1)
	for _, l := range lambda {
		lowest = math.Min(lowest, l)
		largest = math.Max(largest, math.Abs(l))
	}
	noise := float64(len(lambda)) * machineEpsilon * largest
	for i, l := range lambda {
		if l <= noise {
			lambda[i] = 0
		}
	}
	return lowest, largest
}

// checkPSD cleans the eigenvalues of the named covariance and reports an
// error if one is clearly negative.
func checkPSD(name string, lambda []float64) error {
	lowest, largest := cleanEigenvalues(lambda)
	if lowest < -psdTolerance*largest {
		return fmt.Errorf("%s has eigenvalue %g (largest magnitude %g): want a positive semi-definite covariance", name, lowest, largest)
	}
	return nil
}

// addIdentity returns s + eps·I as a new matrix.
func addIdentity(s mat.Symmetric, eps float64) *mat.SymDense {
	d := s.SymmetricDim()
	out := mat.NewSymDense(d, nil)
	out.CopySym(s)
	for i := range d {
		out.SetSym(i, i, out.At(i, i)+eps)
	}
	return out
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// FrechetDistanceToStats is the Fréchet distance between the Gaussian
// statistics of n feature vectors (features, n·len(mu) values one vector
// after another) and the reference statistics mu, sigma — FID of a sample
// against cached training-set statistics.
func FrechetDistanceToStats(features []float64, mu []float64, sigma mat.Symmetric) (float64, error) {
	if len(mu) == 0 || len(features)%len(mu) != 0 {
		return 0, fmt.Errorf("eval: Fréchet distance: %d feature values are not whole vectors of the reference statistics' dimension %d", len(features), len(mu))
	}
	m, s, err := GaussianStatsFlat(features, len(mu))
	if err != nil {
		return 0, err
	}
	return FrechetDistance(m, s, mu, sigma)
}
