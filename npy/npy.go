// Package npy reads and writes NumPy's .npy arrays and .npz archives of
// them, so that arrays move between this project and Python: float32 and
// float64 (and, for reading, integer) values, either byte order, C or
// Fortran order. What a file declares — its header, its shape, an
// archive member's size — is checked against the file's real size before
// anything is allocated, and nothing but plain numeric arrays is accepted
// (no pickled objects).
package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Array is an array's shape and its values in C (row-major) order.
type Array struct {
	Shape  []int
	Values []float64
}

// maxHeader bounds an .npy header: NumPy writes well under a kilobyte.
const maxHeader = 1 << 16

// MaxBytes bounds the bytes of one array: 2 GiB, a 16,384² float64 matrix.
const MaxBytes = 1 << 31

// headerField matches one key of an .npy header's dictionary.
var headerField = regexp.MustCompile(`'(descr|fortran_order|shape)'\s*:\s*('[^']*'|True|False|\([0-9,\s]*\))`)

// Decode parses an .npy file into its shape and its values in C order.
func Decode(raw []byte) (Array, error) {
	if len(raw) < 10 || string(raw[:6]) != "\x93NUMPY" {
		return Array{}, errors.New("not an .npy array: want it to start with \\x93NUMPY")
	}
	var headerLen, start int
	switch raw[6] {
	case 1:
		headerLen, start = int(binary.LittleEndian.Uint16(raw[8:])), 10
	case 2, 3:
		if len(raw) < 12 {
			return Array{}, errors.New(".npy header truncated")
		}
		headerLen, start = int(binary.LittleEndian.Uint32(raw[8:])), 12
	default:
		return Array{}, fmt.Errorf(".npy format version %d.%d: want 1.0, 2.0 or 3.0", raw[6], raw[7])
	}
	if headerLen > maxHeader || start+headerLen > len(raw) {
		return Array{}, fmt.Errorf(".npy header of %d bytes runs past the array's %d", headerLen, len(raw))
	}
	header := string(raw[start : start+headerLen])
	fields := map[string]string{}
	for _, m := range headerField.FindAllStringSubmatch(header, -1) {
		fields[m[1]] = m[2]
	}
	if len(fields) != 3 {
		return Array{}, fmt.Errorf(".npy header %.200q: want descr, fortran_order and shape", header)
	}
	kind, err := parseDescr(strings.Trim(fields["descr"], "'"))
	if err != nil {
		return Array{}, err
	}
	shape, count, err := parseShape(fields["shape"])
	if err != nil {
		return Array{}, err
	}
	body := raw[start+headerLen:]
	if count > MaxBytes/kind.size || len(body) != count*kind.size {
		return Array{}, fmt.Errorf(".npy shape %s of %s holds %d bytes, the file %d", fields["shape"], fields["descr"], count*kind.size, len(body))
	}
	values := make([]float64, count)
	for i := range values {
		values[i] = kind.read(body[i*kind.size:])
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
	return Array{Shape: shape, Values: values}, nil
}

// dtype is how one value of an array is stored.
type dtype struct {
	size int
	read func(b []byte) float64
}

// parseDescr reads an .npy dtype: float (f4, f8), signed (i1…i8) or
// unsigned (u1…u8) integers, in either byte order.
func parseDescr(descr string) (dtype, error) {
	bad := fmt.Errorf(".npy dtype %q: want float32 or float64 ('<f4', '<f8', '>f8', …) or integers ('<i8', '|u1', …)", descr)
	if len(descr) != 3 || !strings.ContainsRune("<>=|", rune(descr[0])) {
		return dtype{}, bad
	}
	var order binary.ByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	size := int(descr[2] - '0')
	switch descr[1:] {
	case "f4":
		return dtype{4, func(b []byte) float64 { return float64(math.Float32frombits(order.Uint32(b))) }}, nil
	case "f8":
		return dtype{8, func(b []byte) float64 { return math.Float64frombits(order.Uint64(b)) }}, nil
	case "i1", "u1":
		signed := descr[1] == 'i'
		return dtype{1, func(b []byte) float64 { return integer(uint64(b[0]), 8, signed) }}, nil
	case "i2", "u2", "i4", "u4", "i8", "u8":
		signed := descr[1] == 'i'
		return dtype{size, func(b []byte) float64 {
			var u uint64
			switch size {
			case 2:
				u = uint64(order.Uint16(b))
			case 4:
				u = uint64(order.Uint32(b))
			default:
				u = order.Uint64(b)
			}
			return integer(u, 8*size, signed)
		}}, nil
	}
	return dtype{}, bad
}

// integer is the value of the low bits of u as a signed or unsigned
// integer.
func integer(u uint64, bits int, signed bool) float64 {
	if signed {
		return float64(int64(u<<(64-bits)) >> (64 - bits))
	}
	return float64(u)
}

// parseShape reads a shape tuple and the number of values it holds.
func parseShape(tuple string) (shape []int, count int, err error) {
	count = 1
	for _, p := range strings.Split(strings.Trim(tuple, "()"), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > MaxBytes {
			return nil, 0, fmt.Errorf(".npy shape %s: want non-negative dimensions", tuple)
		}
		shape = append(shape, n)
		if n > 0 && count > MaxBytes/n {
			return nil, 0, fmt.Errorf(".npy shape %s: too many values", tuple)
		}
		count *= n
	}
	return shape, count, nil
}

// Encode returns a as an .npy file (format 1.0) of little-endian float64
// values in C order. NumPy pads the header with spaces and a newline so
// that the data starts at a multiple of 64 bytes.
func Encode(a Array) []byte {
	dims := make([]string, len(a.Shape))
	for i, n := range a.Shape {
		dims[i] = strconv.Itoa(n)
	}
	shape := "(" + strings.Join(dims, ", ") + ")"
	if len(a.Shape) == 1 {
		shape = "(" + dims[0] + ",)"
	}
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shape)
	const prefix = 10 // magic (6), version (2), header length (2)
	pad := 64 - (prefix+len(header)+1)%64
	if pad == 64 {
		pad = 0
	}
	header += strings.Repeat(" ", pad) + "\n"
	out := make([]byte, 0, prefix+len(header)+8*len(a.Values))
	out = append(out, "\x93NUMPY\x01\x00"...)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(header)))
	out = append(out, header...)
	for _, v := range a.Values {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	return out
}

// memberLimit bounds what one array of an archive of size n may inflate
// to: 64 MiB, or 16 times the archive — numbers hardly compress — so that
// a small deflate bomb cannot claim gigabytes.
func memberLimit(n int) uint64 { return min(MaxBytes, 64<<20+16*uint64(n)) }

// ArrayNames lists the arrays of an .npz archive, in archive order.
func ArrayNames(data []byte) ([]string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not an .npz (zip) archive: %w", err)
	}
	var names []string
	for _, f := range zr.File {
		if name, ok := strings.CutSuffix(f.Name, ".npy"); ok {
			names = append(names, name)
		}
	}
	return names, nil
}

// DecodeNPZ reads the named arrays of an .npz archive, stored or deflated.
func DecodeNPZ(data []byte, names ...string) (map[string]Array, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not an .npz (zip) archive: %w", err)
	}
	arrays := map[string]Array{}
	for _, name := range names {
		i := slices.IndexFunc(zr.File, func(f *zip.File) bool { return f.Name == name+".npy" })
		if i < 0 {
			return nil, fmt.Errorf("no array %q", name)
		}
		f := zr.File[i]
		if limit := memberLimit(len(data)); f.UncompressedSize64 > limit {
			return nil, fmt.Errorf("array %s: %d bytes, over the %d allowed for an archive of %d", name, f.UncompressedSize64, limit, len(data))
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("array %s: %w", name, err)
		}
		// The declared size bounds what is read (and allocated); a stream
		// that inflates to more is cut and then fails the size check.
		raw, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("array %s: %w", name, err)
		}
		if uint64(len(raw)) != f.UncompressedSize64 {
			return nil, fmt.Errorf("array %s: %d bytes, the archive says %d (corrupt archive)", name, len(raw), f.UncompressedSize64)
		}
		if arrays[name], err = Decode(raw); err != nil {
			return nil, fmt.Errorf("array %s: %w", name, err)
		}
	}
	return arrays, nil
}

// EncodeNPZ returns the named arrays as an uncompressed .npz archive of
// float64 C-order .npy arrays, in the order of names, as np.savez writes
// them.
func EncodeNPZ(names []string, arrays map[string]Array) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(Encode(arrays[name])); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
