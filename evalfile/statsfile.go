package evalfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/atomicfile"
)

// statsMagic opens every statistics file.
const statsMagic = "EDLEBMGS"

// statsVersion is the format version SaveStats writes and LoadStats reads.
const statsVersion = 1

// statsHeaderSize is the magic, the version and the dimension.
const statsHeaderSize = len(statsMagic) + 4 + 4

// SaveStats writes the Gaussian statistics mu and sigma (as from
// GaussianStats) to path, so that the statistics of a reference data set
// are computed once. The file is written atomically: to a temporary file in
// the same directory, synced, then renamed over path.
//
// The format, all numbers little-endian:
//
//	offset      size          content
//	0           8             magic "EDLEBMGS"
//	8           4             format version, uint32 = 1
//	12          4             dimension d ≥ 1, uint32
//	16          8·d           mu, float64
//	16+8d       8·d(d+1)/2    sigma's upper triangle row by row
//	                          (σ_00 … σ_0,d−1, σ_11 … σ_1,d−1, …), float64
//	end−4       4             CRC-32 (IEEE) of all preceding bytes, uint32
//
// A path ending in ".npz" (NPZExt) is written in NumPy's format instead,
// as pytorch-fid reads statistics: float64 arrays "mu" [d] and "sigma"
// [d, d].
//
// len(mu) must equal sigma's dimension, and every value must be finite.
func SaveStats(path string, mu []float64, sigma mat.Symmetric) error {
	d := len(mu)
	switch {
	case d == 0:
		return fmt.Errorf("eval: saving statistics to %s: mu is empty: want dimension ≥ 1", path)
	case uint64(d) > math.MaxUint32:
		return fmt.Errorf("eval: saving statistics to %s: dimension %d exceeds the format's limit %d", path, d, uint32(math.MaxUint32))
	case sigma.SymmetricDim() != d:
		return fmt.Errorf("eval: saving statistics to %s: sigma is %d×%[2]d but mu has dimension %[3]d: want equal dimensions", path, sigma.SymmetricDim(), d)
	}
	buf := make([]byte, 0, statsFileSize(uint32(d)))
	buf = append(buf, statsMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, statsVersion)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(d))
	for i, x := range mu {
		if !isFinite(x) {
			return fmt.Errorf("eval: saving statistics to %s: mu[%d] = %v: want a finite number", path, i, x)
		}
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
	}
	for i := range d {
		for j := i; j < d; j++ {
			x := sigma.At(i, j)
			if !isFinite(x) {
				return fmt.Errorf("eval: saving statistics to %s: sigma[%d,%d] = %v: want a finite number", path, i, j, x)
			}
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
		}
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf))
	if isNPZ(path) {
		var err error
		if buf, err = encodeNPZ(mu, sigma); err != nil {
			return fmt.Errorf("eval: saving statistics to %s: %w", path, err)
		}
	}
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(buf)
		return err
	}); err != nil {
		return fmt.Errorf("eval: saving statistics: %w", err)
	}
	return nil
}

// LoadStats reads statistics written by SaveStats, or by NumPy (pytorch-fid)
// for a path ending in ".npz". A file that is not in the format, is
// truncated or has trailing bytes, or fails its checksum is an error naming
// path and the problem.
func LoadStats(path string) ([]float64, *mat.SymDense, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("eval: loading statistics: %w", err)
	}
	decode := decodeStats
	if isNPZ(path) {
		decode = decodeNPZ
	}
	mu, sigma, err := decode(data)
	if err != nil {
		return nil, nil, fmt.Errorf("eval: loading statistics from %s: %w", path, err)
	}
	return mu, sigma, nil
}

// decodeStats parses the bytes of a statistics file.
func decodeStats(data []byte) ([]float64, *mat.SymDense, error) {
	if len(data) < statsHeaderSize || !bytes.Equal(data[:len(statsMagic)], []byte(statsMagic)) {
		return nil, nil, fmt.Errorf("not a statistics file: want it to start with %q", statsMagic)
	}
	le := binary.LittleEndian
	if v := le.Uint32(data[8:]); v != statsVersion {
		return nil, nil, fmt.Errorf("format version %d: want %d", v, statsVersion)
	}
	dim := le.Uint32(data[12:])
	if dim == 0 {
		return nil, nil, errors.New("dimension 0: want ≥ 1")
	}
	if want := statsFileSize(dim); int64(len(data)) != want {
		return nil, nil, fmt.Errorf("%d bytes, want %d for dimension %d (truncated or corrupt file)", len(data), want, dim)
	}
	d := int(dim) // fits: the file holds d² bytes
	body, sum := data[:len(data)-4], le.Uint32(data[len(data)-4:])
	if got := crc32.ChecksumIEEE(body); got != sum {
		return nil, nil, fmt.Errorf("checksum %08x, want %08x stored in the file (corrupt file)", got, sum)
	}

	next := func(k int) float64 { return math.Float64frombits(le.Uint64(body[statsHeaderSize+8*k:])) }
	mu := make([]float64, d)
	for i := range mu {
		mu[i] = next(i)
	}
	sigma := mat.NewSymDense(d, nil)
	k := d
	for i := range d {
		for j := i; j < d; j++ {
			sigma.SetSym(i, j, next(k))
			k++
		}
	}
	return mu, sigma, nil
}

// isNPZ reports whether path names a NumPy .npz file.
func isNPZ(path string) bool { return strings.EqualFold(filepath.Ext(path), NPZExt) }

// statsFileSize is the size in bytes of a statistics file of dimension d,
// computed in int64, which no uint32 dimension overflows.
func statsFileSize(d uint32) int64 {
	n := int64(d)
	return int64(statsHeaderSize) + 8*n + 8*n*(n+1)/2 + 4
}
