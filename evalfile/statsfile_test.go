package evalfile

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/internal/testutil"
)

func TestSaveLoadStatsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, d := range []int{1, 2, 9, 64} {
		mu := testutil.RandomVector(rng, d)
		mu[0] = math.Copysign(0, -1) // bit-exact round trip, sign of zero included
		sigma := testutil.RandomSPD(rng, d, 1e-300)
		path := filepath.Join(t.TempDir(), "stats.bin")
		if err := SaveStats(path, mu, sigma); err != nil {
			t.Fatalf("d=%d: %v", d, err)
		}
		gotMu, gotSigma, err := LoadStats(path)
		if err != nil {
			t.Fatalf("d=%d: %v", d, err)
		}
		for i := range mu {
			if math.Float64bits(gotMu[i]) != math.Float64bits(mu[i]) {
				t.Errorf("d=%d: mu[%d] = %v, want %v", d, i, gotMu[i], mu[i])
			}
		}
		if !mat.Equal(gotSigma, sigma) {
			t.Errorf("d=%d: sigma differs after the round trip", d)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(16 + 8*d + 8*d*(d+1)/2 + 4); info.Size() != want {
			t.Errorf("d=%d: file has %d bytes, want %d", d, info.Size(), want)
		}
	}
}

// TestSaveStatsFormat builds the file of a 2-D example byte by byte from
// the documented layout.
func TestSaveStatsFormat(t *testing.T) {
	mu := []float64{1.5, -2}
	sigma := mat.NewSymDense(2, []float64{4, 0.25, 0.25, 9})
	var want []byte
	want = append(want, "EDLEBMGS"...)
	want = append(want, 1, 0, 0, 0) // version
	want = append(want, 2, 0, 0, 0) // dimension
	for _, x := range []float64{1.5, -2, 4, 0.25, 9} {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		want = append(want, b[:]...)
	}
	sum := crc32.ChecksumIEEE(want)
	want = append(want, byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24))

	path := filepath.Join(t.TempDir(), "stats.bin")
	if err := SaveStats(path, mu, sigma); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("file bytes\n got %x\nwant %x", got, want)
	}
}

func TestSaveStatsReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stats.bin")
	if err := SaveStats(path, []float64{1}, testutil.Diag(2)); err != nil {
		t.Fatal(err)
	}
	if err := SaveStats(path, []float64{3, 4}, testutil.Diag(5, 6)); err != nil {
		t.Fatal(err)
	}
	mu, sigma, err := LoadStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(mu) != 2 || mu[1] != 4 || sigma.At(1, 1) != 6 {
		t.Errorf("loaded mu = %v, sigma = %v: want the second save", mu, mat.Formatted(sigma))
	}
	// A failed save leaves the old file and no temporary files.
	if err := SaveStats(path, []float64{1, 2, 3}, testutil.Diag(1, 2)); err == nil {
		t.Fatal("saving mismatched statistics succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "stats.bin" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only stats.bin", names)
	}
	if _, _, err := LoadStats(path); err != nil {
		t.Errorf("old file unreadable after a failed save: %v", err)
	}
}

func TestSaveStatsErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		path  string
		mu    []float64
		sigma mat.Symmetric
		want  string
	}{
		{"empty mu", filepath.Join(dir, "a"), nil, testutil.Diag(1), "mu is empty"},
		{"dimension mismatch", filepath.Join(dir, "b"), []float64{1, 2}, testutil.Diag(1, 2, 3), "sigma is 3×3 but mu has dimension 2"},
		{"NaN mean", filepath.Join(dir, "c"), []float64{1, math.NaN()}, testutil.Diag(1, 2), "mu[1] = NaN"},
		{"infinite covariance", filepath.Join(dir, "d"), []float64{1, 2}, testutil.Diag(math.Inf(1), 2), "sigma[0,0] = +Inf"},
		{"missing directory", filepath.Join(dir, "no", "such", "dir", "e"), []float64{1}, testutil.Diag(1), filepath.Join(dir, "no", "such", "dir", "e")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := SaveStats(tc.path, tc.mu, tc.sigma)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
			if _, statErr := os.Stat(tc.path); statErr == nil {
				t.Errorf("%s exists after a failed save", tc.path)
			}
		})
	}
}

func TestLoadStatsCorrupt(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.bin")
	if err := SaveStats(good, []float64{1, 2, 3}, testutil.RandomSPD(rand.New(rand.NewPCG(17, 18)), 3, 0.1)); err != nil {
		t.Fatal(err)
	}
	valid, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), valid...)) }
	// withDim rewrites the dimension and fixes the checksum, so that only
	// the size check can catch it.
	withDim := func(d uint32) []byte {
		return edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[12:], d)
			n := len(b) - 4
			binary.LittleEndian.PutUint32(b[n:], crc32.ChecksumIEEE(b[:n]))
			return b
		})
	}

	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty file", nil, "not a statistics file"},
		{"short header", valid[:10], "not a statistics file"},
		{"wrong magic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), "not a statistics file"},
		{"future version", edit(func(b []byte) []byte { b[8] = 2; return b }), "format version 2: want 1"},
		{"dimension 0", withDim(0), "dimension 0"},
		{"header only", valid[:16], "16 bytes, want 92 for dimension 3"},
		{"truncated payload", valid[:len(valid)-9], "want 92 for dimension 3"},
		{"missing checksum", valid[:len(valid)-4], "want 92 for dimension 3"},
		{"trailing byte", append(append([]byte(nil), valid...), 0), "93 bytes, want 92"},
		{"dimension too large", withDim(4), "want 132 for dimension 4"},
		{"huge dimension", withDim(math.MaxUint32), "truncated or corrupt"},
		{"flipped bit in sigma", edit(func(b []byte) []byte { b[50] ^= 0x10; return b }), "checksum"},
		{"flipped bit in checksum", edit(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "checksum"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.bin")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadStats(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error = %v, want one naming %s and containing %q", err, path, tc.want)
			}
		})
	}
	if _, _, err := LoadStats(filepath.Join(dir, "absent.bin")); err == nil || !strings.Contains(err.Error(), "absent.bin") {
		t.Errorf("loading a missing file: error = %v, want one naming it", err)
	}
}
