package evalfile

import (
	"archive/zip"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/npy"
)

// fixtureStats is the closed form testdata/make_npz_fixtures.py writes:
// mu[i] = 0.5i − 1, sigma = AAᵀ + I with a(i, k) = sin(i + 2k + 1).
func fixtureStats(d int) ([]float64, *mat.SymDense) {
	mu := make([]float64, d)
	sigma := mat.NewSymDense(d, nil)
	for i := range d {
		mu[i] = 0.5*float64(i) - 1
		for j := i; j < d; j++ {
			var s float64
			for k := range d {
				s += math.Sin(float64(i+2*k+1)) * math.Sin(float64(j+2*k+1))
			}
			if i == j {
				s++
			}
			sigma.SetSym(i, j, s)
		}
	}
	return mu, sigma
}

// Statistics NumPy wrote — compressed float64 as pytorch-fid saves them,
// and float32 in Fortran order — read as the closed form they hold.
func TestLoadStatsReadsNumPysNPZ(t *testing.T) {
	for _, c := range []struct {
		file string
		d    int
		tol  float64
	}{{"stats-d5-f8.npz", 5, 1e-12}, {"stats-d4-f4-fortran.npz", 4, 1e-6}} {
		t.Run(c.file, func(t *testing.T) {
			mu, sigma, err := LoadStats(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			wantMu, wantSigma := fixtureStats(c.d)
			if len(mu) != c.d || sigma.SymmetricDim() != c.d {
				t.Fatalf("dimensions %d and %d, want %d", len(mu), sigma.SymmetricDim(), c.d)
			}
			for i := range c.d {
				if math.Abs(mu[i]-wantMu[i]) > c.tol*(1+math.Abs(wantMu[i])) {
					t.Errorf("mu[%d] = %v, want %v", i, mu[i], wantMu[i])
				}
				for j := range c.d {
					if got, want := sigma.At(i, j), wantSigma.At(i, j); math.Abs(got-want) > c.tol*(1+math.Abs(want)) {
						t.Errorf("sigma[%d,%d] = %v, want %v", i, j, got, want)
					}
				}
			}
		})
	}
}

// npyOf is an .npy file of values of the given shape.
func npyOf(shape []int, values []float64) []byte {
	return npy.Encode(npy.Array{Shape: shape, Values: values})
}

// numpy is Debian's Python with NumPy, which scripts/test.sh installs.
const numpy = "/usr/bin/python3"

// Statistics SaveStats writes to a .npz file are what NumPy reads: the
// same mu and sigma, float64, as pytorch-fid's np.load(path)["mu"] gets.
func TestSaveStatsNPZReadByNumPy(t *testing.T) {
	mu, sigma := fixtureStats(3)
	path := filepath.Join(t.TempDir(), "stats.npz")
	if err := SaveStats(path, mu, sigma); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(numpy, "-c", `import sys, numpy as np
f = np.load(sys.argv[1])
print(f["mu"].dtype, f["sigma"].dtype, f["sigma"].shape)
print(" ".join(repr(float(v)) for v in f["mu"]))
print(" ".join(repr(float(v)) for v in f["sigma"].ravel()))`, path).CombinedOutput()
	if err != nil {
		t.Fatalf("NumPy (%s) cannot read the file: %v\n%s(apt-get install python3-numpy; ./scripts/test.sh installs it)", numpy, err, out)
	}
	var want strings.Builder
	fmt.Fprintln(&want, "float64 float64 (3, 3)")
	for i, v := range mu {
		if i > 0 {
			want.WriteString(" ")
		}
		want.WriteString(pyRepr(v))
	}
	want.WriteString("\n")
	for i := range 3 {
		for j := range 3 {
			if i+j > 0 {
				want.WriteString(" ")
			}
			want.WriteString(pyRepr(sigma.At(i, j)))
		}
	}
	want.WriteString("\n")
	if string(out) != want.String() {
		t.Errorf("NumPy read\n%s\nwant\n%s", out, want.String())
	}
	// And back: what NumPy can read, LoadStats reads exactly.
	gotMu, gotSigma, err := LoadStats(path)
	if err != nil || !slices.Equal(gotMu, mu) || !mat.Equal(gotSigma, sigma) {
		t.Errorf("LoadStats of its own .npz: %v, %v (%v)", gotMu, gotSigma, err)
	}
}

// pyRepr is Python's repr of a float64 of moderate size: the shortest
// string that reads back as the same value, with ".0" for whole numbers.
func pyRepr(v float64) string {
	s := fmt.Sprintf("%v", v)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// npzOf builds an archive of the given members, stored.
func npzOf(t testing.TB, members map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range members {
			if !yield(k) {
				return
			}
		}
	}) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(members[name])
	}
	zw.Close()
	return buf.Bytes()
}

// deflateBomb is an archive whose mu.npy inflates to n zero bytes from a
// thousandth of that.
func deflateBomb(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "mu.npy", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, n))
	zw.Close()
	return buf.Bytes()
}

// Bad .npz files are errors naming the file and what is wrong (package
// npy's tests cover damaged arrays one by one).
func TestLoadStatsBadNPZ(t *testing.T) {
	mu := npyOf([]int{2}, []float64{1, 2})
	sigma := npyOf([]int{2, 2}, []float64{1, 0, 0, 1})
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"not a zip", []byte("EDLEBMGS…"), "not an .npz (zip) archive"},
		{"no sigma", npzOf(t, map[string][]byte{"mu.npy": mu}), `no array "sigma"`},
		{"sigma of another size", npzOf(t, map[string][]byte{"mu.npy": mu, "sigma.npy": npyOf([]int{3, 3}, make([]float64, 9))}), "want [2 2] to match mu"},
		{"asymmetric sigma", npzOf(t, map[string][]byte{"mu.npy": mu, "sigma.npy": npyOf([]int{2, 2}, []float64{1, 0.5, 0, 1})}), "a covariance is symmetric"},
		{"NaN in mu", npzOf(t, map[string][]byte{"mu.npy": npyOf([]int{2}, []float64{1, math.NaN()}), "sigma.npy": sigma}), "mu[1] = NaN"},
		{"not an array", npzOf(t, map[string][]byte{"mu.npy": []byte("hello"), "sigma.npy": sigma}), "not an .npy array"},
		{"deflate bomb", deflateBomb(t, 100<<20), "over the"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.npz")
			os.WriteFile(path, c.data, 0o644)
			_, _, err := LoadStats(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("LoadStats: %v, want an error naming %s and saying %q", err, path, c.want)
			}
		})
	}
}

// FuzzLoadStatsNPZ: any bytes as a .npz file give statistics or an error
// naming the file, never a panic or an allocation beyond the archive's
// declared sizes; accepted statistics are finite and symmetric.
func FuzzLoadStatsNPZ(f *testing.F) {
	for _, name := range []string{"stats-d5-f8.npz", "stats-d4-f4-fortran.npz"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(npzOf(f, map[string][]byte{"mu.npy": npyOf([]int{1}, []float64{3}), "sigma.npy": npyOf([]int{1, 1}, []float64{2})}))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := fuzzFile(t, "stats.npz", data)
		mu, sigma, err := LoadStats(path)
		checkNamesFile(t, err, path)
		if err != nil {
			return
		}
		for i := range mu {
			for j := range mu {
				if v := sigma.At(i, j); !isFinite(v) || v != sigma.At(j, i) {
					t.Fatalf("accepted sigma[%d,%d] = %v", i, j, v)
				}
			}
		}
	})
}
