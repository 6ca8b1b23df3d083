package evalfile

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/npy"
)

// NPZExt is the file extension that makes SaveStats and LoadStats use
// NumPy's .npz format with arrays "mu" and "sigma", as pytorch-fid writes
// and reads its statistics (np.savez_compressed(path, mu=mu, sigma=sigma)),
// so statistics move between this project and other FID tools.
const NPZExt = ".npz"

// encodeNPZ returns mu and sigma as an uncompressed .npz archive of two
// float64 C-order .npy arrays, as np.savez writes them.
func encodeNPZ(mu []float64, sigma mat.Symmetric) ([]byte, error) {
	d := len(mu)
	flat := make([]float64, 0, d*d)
	for i := range d {
		for j := range d {
			flat = append(flat, sigma.At(i, j))
		}
	}
	return npy.EncodeNPZ([]string{"mu", "sigma"}, map[string]npy.Array{
		"mu": {Shape: []int{d}, Values: mu}, "sigma": {Shape: []int{d, d}, Values: flat}})
}

// decodeNPZ reads the arrays "mu" [d] and "sigma" [d, d] of an .npz
// archive (package npy: stored or deflated, float32 or float64, either byte
// order, C or Fortran order, sizes checked before anything is allocated)
// and checks that they are statistics.
func decodeNPZ(data []byte) ([]float64, *mat.SymDense, error) {
	arrays, err := npy.DecodeNPZ(data, "mu", "sigma")
	if err != nil {
		return nil, nil, fmt.Errorf("%w (want the arrays mu and sigma, as pytorch-fid saves them)", err)
	}
	mu, sigmaFlat := arrays["mu"].Values, arrays["sigma"].Values
	d := len(mu)
	if len(arrays["mu"].Shape) != 1 || d == 0 {
		return nil, nil, fmt.Errorf("mu has shape %v: want one dimension d ≥ 1", arrays["mu"].Shape)
	}
	if s := arrays["sigma"].Shape; len(s) != 2 || s[0] != d || s[1] != d {
		return nil, nil, fmt.Errorf("sigma has shape %v: want [%d %d] to match mu", s, d, d)
	}
	for i, x := range mu {
		if !isFinite(x) {
			return nil, nil, fmt.Errorf("mu[%d] = %v: want a finite number", i, x)
		}
	}
	sigma := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			a, b := sigmaFlat[i*d+j], sigmaFlat[j*d+i]
			if !isFinite(a) || !isFinite(b) {
				return nil, nil, fmt.Errorf("sigma[%d,%d] = %v: want a finite number", i, j, a)
			}
			if math.Abs(a-b) > 1e-6*(math.Abs(a)+math.Abs(b)) {
				return nil, nil, fmt.Errorf("sigma[%d,%d] = %v but sigma[%d,%d] = %v: a covariance is symmetric", i, j, a, j, i, b)
			}
			sigma.SetSym(i, j, (a+b)/2)
		}
	}
	return mu, sigma, nil
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
