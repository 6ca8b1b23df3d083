package eval

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// NPZExt is the file extension that makes SaveStats and LoadStats use
// NumPy's .npz format with arrays "mu" and "sigma", as pytorch-fid writes
// and reads its statistics (np.savez_compressed(path, mu=mu, sigma=sigma)),
// so statistics move between this project and other FID tools.
const NPZExt = ".npz"

// maxNPYHeader bounds an .npy header: NumPy writes well under a kilobyte.
const maxNPYHeader = 1 << 16

// maxNPZArray bounds the bytes of one array read from an .npz file: a
// 2048-d covariance (the FID's) takes 32 MiB; this allows dimensions up to
// 16,384 in float64.
const maxNPZArray = 1 << 31

// npzArrayLimit bounds what one array of an archive of size n may inflate
// to: 64 MiB (a 2,896-d covariance), or 16 times the archive — float
// statistics hardly compress — so that a small deflate bomb cannot claim
// gigabytes.
func npzArrayLimit(n int) uint64 { return min(maxNPZArray, 64<<20+16*uint64(n)) }

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
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, a := range []struct {
		name   string
		shape  string
		values []float64
	}{{"mu.npy", fmt.Sprintf("(%d,)", d), mu}, {"sigma.npy", fmt.Sprintf("(%d, %d)", d, d), flat}} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: a.name, Method: zip.Store})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(npyBytes(a.shape, a.values)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// npyBytes is an .npy file (format 1.0) of little-endian float64 values of
// the given Python shape tuple. NumPy pads the header with spaces and a
// newline so that the data starts at a multiple of 64 bytes.
func npyBytes(shape string, values []float64) []byte {
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shape)
	const prefix = 10 // magic (6), version (2), header length (2)
	pad := 64 - (prefix+len(header)+1)%64
	if pad == 64 {
		pad = 0
	}
	header += strings.Repeat(" ", pad) + "\n"
	out := make([]byte, 0, prefix+len(header)+8*len(values))
	out = append(out, "\x93NUMPY\x01\x00"...)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(header)))
	out = append(out, header...)
	for _, v := range values {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	return out
}

// decodeNPZ reads the arrays "mu" [d] and "sigma" [d, d] of an .npz
// archive, stored or deflated, float32 or float64, either byte order, C or
// Fortran order. Sizes are checked against the archive's before anything
// is allocated, and nothing but those two plain arrays is accepted (no
// pickled objects).
func decodeNPZ(data []byte) ([]float64, *mat.SymDense, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, nil, fmt.Errorf("not an .npz (zip) archive: %w", err)
	}
	arrays := map[string][]float64{}
	shapes := map[string][]int{}
	for _, name := range []string{"mu", "sigma"} {
		f := npzEntry(zr, name+".npy")
		if f == nil {
			return nil, nil, fmt.Errorf("no array %q: want the arrays mu and sigma, as pytorch-fid saves them", name)
		}
		if limit := npzArrayLimit(len(data)); f.UncompressedSize64 > limit {
			return nil, nil, fmt.Errorf("array %s: %d bytes, over the %d allowed for an archive of %d", name, f.UncompressedSize64, limit, len(data))
		}
		rc, err := f.Open()
		if err != nil {
			return nil, nil, fmt.Errorf("array %s: %w", name, err)
		}
		// The declared size bounds what is read (and allocated); a stream
		// that inflates to more is cut and then fails the size check.
		raw, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
		rc.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("array %s: %w", name, err)
		}
		if uint64(len(raw)) != f.UncompressedSize64 {
			return nil, nil, fmt.Errorf("array %s: %d bytes, the archive says %d (corrupt archive)", name, len(raw), f.UncompressedSize64)
		}
		if shapes[name], arrays[name], err = decodeNPY(raw); err != nil {
			return nil, nil, fmt.Errorf("array %s: %w", name, err)
		}
	}
	mu, sigmaFlat := arrays["mu"], arrays["sigma"]
	d := len(mu)
	if len(shapes["mu"]) != 1 || d == 0 {
		return nil, nil, fmt.Errorf("mu has shape %v: want one dimension d ≥ 1", shapes["mu"])
	}
	if s := shapes["sigma"]; len(s) != 2 || s[0] != d || s[1] != d {
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

// npzEntry is the archive member called name, or nil.
func npzEntry(zr *zip.Reader, name string) *zip.File {
	for _, f := range zr.File {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// npyHeaderField matches one key of an .npy header's dictionary.
var npyHeaderField = regexp.MustCompile(`'(descr|fortran_order|shape)'\s*:\s*('[^']*'|True|False|\([0-9,\s]*\))`)

// decodeNPY parses an .npy file of float32 or float64 values into its
// shape and its values in C order.
func decodeNPY(raw []byte) ([]int, []float64, error) {
	if len(raw) < 10 || string(raw[:6]) != "\x93NUMPY" {
		return nil, nil, errors.New("not an .npy array: want it to start with \\x93NUMPY")
	}
	var headerLen, start int
	switch raw[6] {
	case 1:
		headerLen, start = int(binary.LittleEndian.Uint16(raw[8:])), 10
	case 2, 3:
		if len(raw) < 12 {
			return nil, nil, errors.New(".npy header truncated")
		}
		headerLen, start = int(binary.LittleEndian.Uint32(raw[8:])), 12
	default:
		return nil, nil, fmt.Errorf(".npy format version %d.%d: want 1.0, 2.0 or 3.0", raw[6], raw[7])
	}
	if headerLen > maxNPYHeader || start+headerLen > len(raw) {
		return nil, nil, fmt.Errorf(".npy header of %d bytes runs past the array's %d", headerLen, len(raw))
	}
	header := string(raw[start : start+headerLen])
	fields := map[string]string{}
	for _, m := range npyHeaderField.FindAllStringSubmatch(header, -1) {
		fields[m[1]] = m[2]
	}
	if len(fields) != 3 {
		return nil, nil, fmt.Errorf(".npy header %.200q: want descr, fortran_order and shape", header)
	}
	var order binary.ByteOrder = binary.LittleEndian
	descr := strings.Trim(fields["descr"], "'")
	if len(descr) != 3 || (descr[0] != '<' && descr[0] != '>' && descr[0] != '=') || descr[1] != 'f' || (descr[2] != '4' && descr[2] != '8') {
		return nil, nil, fmt.Errorf(".npy dtype %q: want float32 or float64 ('<f4', '<f8', '>f4', '>f8')", descr)
	}
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	size := int(descr[2] - '0')
	var shape []int
	count := 1
	for _, p := range strings.Split(strings.Trim(fields["shape"], "()"), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > maxNPZArray {
			return nil, nil, fmt.Errorf(".npy shape %s: want non-negative dimensions", fields["shape"])
		}
		shape = append(shape, n)
		if n > 0 && count > maxNPZArray/n {
			return nil, nil, fmt.Errorf(".npy shape %s: too many values", fields["shape"])
		}
		count *= n
	}
	body := raw[start+headerLen:]
	if len(body) != count*size {
		return nil, nil, fmt.Errorf(".npy shape %s of %s holds %d bytes, the file %d", fields["shape"], descr, count*size, len(body))
	}
	values := make([]float64, count)
	for i := range values {
		if size == 8 {
			values[i] = math.Float64frombits(order.Uint64(body[8*i:]))
		} else {
			values[i] = float64(math.Float32frombits(order.Uint32(body[4*i:])))
		}
	}
	if fields["fortran_order"] == "True" && len(shape) == 2 {
		rows, cols := shape[0], shape[1]
		c := make([]float64, count)
		for i := range rows {
			for j := range cols {
				c[i*cols+j] = values[j*rows+i]
			}
		}
		values = c
	}
	return shape, values, nil
}
