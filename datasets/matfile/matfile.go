// Package matfile reads the real numeric arrays of MATLAB level-5 MAT-files,
// the format of the published files of SVHN (train_32x32.mat, …), Omniglot
// 28×28 (chardata.mat) and Caltech-101 Silhouettes
// (caltech101_silhouettes_28_split1.mat), following MathWorks' "MAT-File
// Format" document.
//
// It reads files saved by MATLAB with -v6 or -v7 or by scipy.io.savemat, in
// either byte order, with plain or zlib-compressed (miCOMPRESSED) data
// elements. Its limits: it returns only real numeric and logical arrays
// (char, cell, struct, sparse and object variables and complex arrays are
// skipped); it does not read MATLAB 7.3 files, which are HDF5; it holds
// every array in memory, and refuses one that declares more than
// MaxArrayBytes. Sizes read from the file are checked against these limits,
// and a data buffer grows only as its bytes arrive, so that a corrupt size
// cannot force a huge allocation.
package matfile

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// MaxArrayBytes bounds the data size a MAT-file may declare for one array, so
// that a corrupt file cannot make ReadMAT attempt a huge allocation. The
// largest array this project reads, X of SVHN's extra_32x32.mat, holds
// 1.63 GB.
const MaxArrayBytes = 1<<31 - 1

// Data types of MAT-file data elements (MATLAB's miINT8 … miCOMPRESSED).
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15
	miUTF8       = 16
)

// elementSizes gives the size in bytes of one value of each numeric data type.
var elementSizes = map[uint32]int{
	miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4,
	miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8,
}

// numericClasses names MATLAB's numeric array classes (mxDOUBLE_CLASS = 6 …
// mxUINT64_CLASS = 15), the only ones ReadMAT returns.
var numericClasses = map[byte]string{
	6: "double", 7: "single", 8: "int8", 9: "uint8", 10: "int16",
	11: "uint16", 12: "int32", 13: "uint32", 14: "int64", 15: "uint64",
}

// Array flags: bits of the second byte of the first flags word.
const (
	flagLogical = 0x02
	flagComplex = 0x08
)

// Limits on the small sub-elements of a matrix, far above what MATLAB writes
// (names have at most 63 characters).
const (
	maxDims     = 32
	maxNameSize = 1024
)

// Array is a real numeric array read from a MAT-file.
type Array struct {
	// Name is the variable name.
	Name string
	// Class is the MATLAB class: "double", "single", "int8", "uint8", …,
	// "uint64", or "logical".
	Class string
	// Dims holds the dimensions in MATLAB's order: the values are stored
	// column-major, the first index varying fastest.
	Dims []int

	dataType uint32 // storage type of data, which may be narrower than Class
	data     []byte
	order    binary.ByteOrder
}

// Len returns the number of values in the array.
func (a *Array) Len() int { return len(a.data) / elementSizes[a.dataType] }

// Uint8s returns the values in MATLAB's column-major order as bytes. Values
// stored as unsigned bytes (as MATLAB does for uint8 arrays and for doubles
// that are all small integers) are returned without copying; others are
// converted, and it errors on a value that is not an integer in [0, 255].
func (a *Array) Uint8s() ([]uint8, error) {
	if a.dataType == miUINT8 {
		return a.data, nil
	}
	out := make([]uint8, a.Len())
	for i := range out {
		v := a.value(i)
		if !(v >= 0 && v <= 255 && v == math.Trunc(v)) {
			return nil, fmt.Errorf("variable %q: value %v at index %d is not an integer in [0, 255]", a.Name, v, i)
		}
		out[i] = uint8(v)
	}
	return out, nil
}

// Float64s returns the values in MATLAB's column-major order (the first index
// varying fastest) converted to float64, whatever their storage type (MATLAB
// stores doubles that are all small integers as bytes, for instance).
// 64-bit integers beyond 2⁵³ are rounded to the nearest float64.
func (a *Array) Float64s() []float64 {
	out := make([]float64, a.Len())
	for i := range out {
		out[i] = a.value(i)
	}
	return out
}

// value returns value i converted to float64 (64-bit integers beyond 2⁵³
// are rounded, which Uint8s rejects anyway).
func (a *Array) value(i int) float64 {
	size := elementSizes[a.dataType]
	b := a.data[i*size : (i+1)*size]
	switch a.dataType {
	case miINT8:
		return float64(int8(b[0]))
	case miUINT8:
		return float64(b[0])
	case miINT16:
		return float64(int16(a.order.Uint16(b)))
	case miUINT16:
		return float64(a.order.Uint16(b))
	case miINT32:
		return float64(int32(a.order.Uint32(b)))
	case miUINT32:
		return float64(a.order.Uint32(b))
	case miSINGLE:
		return float64(math.Float32frombits(a.order.Uint32(b)))
	case miDOUBLE:
		return math.Float64frombits(a.order.Uint64(b))
	case miINT64:
		return float64(int64(a.order.Uint64(b)))
	default: // miUINT64, the last type of elementSizes
		return float64(a.order.Uint64(b))
	}
}

// ReadMAT reads a MATLAB level-5 MAT-file (as written by MATLAB's save with
// -v6 or -v7, or by scipy.io.savemat), in either byte order, with plain or
// zlib-compressed (miCOMPRESSED) data elements, and returns its real numeric
// arrays by name. Variables of other classes (char, cell, struct, sparse,
// objects) and complex arrays are skipped. It errors on a file that is not a
// level-5 MAT-file (MATLAB 7.3 files are HDF5), on a truncated or corrupt
// element, on an array larger than MaxArrayBytes, and on a name used twice.
func ReadMAT(r io.Reader) (map[string]*Array, error) {
	var header [128]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, fmt.Errorf("truncated 128-byte MAT-file header: %w", err)
	}
	var order binary.ByteOrder
	switch string(header[126:]) {
	case "IM":
		order = binary.LittleEndian
	case "MI":
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("endian indicator %q at byte 126, want \"IM\" or \"MI\" (not a MATLAB level-5 MAT-file)", header[126:])
	}
	if v := order.Uint16(header[124:]); v != 0x0100 {
		if v == 0x0200 {
			return nil, errors.New("MAT-file version 0x0200: a MATLAB 7.3 (HDF5) file, want a level-5 file (version 0x0100, saved with -v7 or older)")
		}
		return nil, fmt.Errorf("MAT-file version 0x%04x, want 0x0100 (level 5)", v)
	}

	m := &matReader{order: order}
	arrays := make(map[string]*Array)
	cr := &countingReader{r: r, n: int64(len(header))}
	for {
		offset := cr.n
		typ, size, err := m.readTopTag(cr)
		if err == io.EOF {
			return arrays, nil
		}
		if err != nil {
			return nil, fmt.Errorf("data element at byte %d: %w", offset, err)
		}
		var a *Array
		switch typ {
		case miMATRIX:
			a, err = m.readMatrix(&io.LimitedReader{R: cr, N: int64(size)})
			if err == nil {
				err = skip(cr, padding(size))
			}
		case miCOMPRESSED:
			// Compressed elements are not padded to 8 bytes.
			a, err = m.readCompressed(&io.LimitedReader{R: cr, N: int64(size)})
		default:
			err = fmt.Errorf("data type %d, want miMATRIX (%d) or miCOMPRESSED (%d)", typ, miMATRIX, miCOMPRESSED)
		}
		if err != nil {
			return nil, fmt.Errorf("data element at byte %d: %w", offset, err)
		}
		if a == nil {
			continue
		}
		if _, dup := arrays[a.Name]; dup {
			return nil, fmt.Errorf("data element at byte %d: a second variable named %q", offset, a.Name)
		}
		arrays[a.Name] = a
	}
}

// ReadFile reads the MAT-file at path with ReadMAT. A decoding error is
// prefixed with the path; the error for a file that cannot be opened is
// os.Open's, which names the path and, for a missing file, wraps
// fs.ErrNotExist (so a loader can say where to get it).
func ReadFile(path string) (map[string]*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	arrays, err := ReadMAT(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return arrays, nil
}

// matReader decodes data elements in one byte order.
type matReader struct {
	order binary.ByteOrder
}

// readTopTag reads the 8-byte tag of a top-level element. It returns io.EOF
// only at a clean end of the file.
func (m *matReader) readTopTag(r io.Reader) (typ, size uint32, err error) {
	var tag [8]byte
	n, err := io.ReadFull(r, tag[:])
	if err == io.EOF {
		return 0, 0, io.EOF
	}
	if err != nil {
		return 0, 0, fmt.Errorf("truncated tag (%d of 8 bytes): %w", n, err)
	}
	typ, size = m.order.Uint32(tag[:4]), m.order.Uint32(tag[4:])
	if typ>>16 != 0 {
		return 0, 0, fmt.Errorf("small-format tag (type %d), want a full tag at top level", typ&0xffff)
	}
	return typ, size, nil
}

// readCompressed decompresses one miCOMPRESSED element, which holds a
// single miMATRIX element, and decodes that matrix.
func (m *matReader) readCompressed(lr *io.LimitedReader) (*Array, error) {
	zr, err := zlib.NewReader(lr)
	if err != nil {
		return nil, fmt.Errorf("compressed element: %w", err)
	}
	typ, size, err := m.readTopTag(zr)
	if err == io.EOF {
		return nil, errors.New("compressed element holds no data")
	}
	if err != nil {
		return nil, fmt.Errorf("compressed element: %w", err)
	}
	if typ != miMATRIX {
		return nil, fmt.Errorf("compressed element holds data type %d, want miMATRIX (%d)", typ, miMATRIX)
	}
	a, err := m.readMatrix(&io.LimitedReader{R: zr, N: int64(size)})
	if err != nil {
		return nil, fmt.Errorf("compressed element: %w", err)
	}
	// Reading to the end of the zlib stream verifies its checksum.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, fmt.Errorf("compressed element: %w", err)
	}
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return nil, err
	}
	if lr.N > 0 {
		return nil, fmt.Errorf("truncated compressed element: %d bytes missing", lr.N)
	}
	return a, nil
}

// readMatrix decodes the sub-elements of one miMATRIX element: array flags,
// dimensions, name and real part. It returns nil for a variable ReadMAT
// skips. It consumes all of lr and errors if lr ends early.
func (m *matReader) readMatrix(lr *io.LimitedReader) (*Array, error) {
	a, err := m.readArray(lr)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("truncated matrix: %w", err)
		}
		return nil, err
	}
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return nil, err
	}
	if lr.N > 0 {
		return nil, fmt.Errorf("truncated matrix: %d bytes missing", lr.N)
	}
	return a, nil
}

func (m *matReader) readArray(r io.Reader) (*Array, error) {
	typ, flags, err := m.readElement(r, 8)
	if err != nil {
		return nil, fmt.Errorf("array flags: %w", err)
	}
	if typ != miUINT32 || len(flags) != 8 {
		return nil, fmt.Errorf("array flags of data type %d and %d bytes, want miUINT32 (%d) and 8 bytes", typ, len(flags), miUINT32)
	}
	word := m.order.Uint32(flags)
	classID, bits := byte(word), byte(word>>8)
	class, numeric := numericClasses[classID]
	switch {
	case classID == 0 || classID > 17:
		return nil, fmt.Errorf("unknown array class %d", classID)
	case !numeric || bits&flagComplex != 0:
		return nil, nil // the caller discards the rest of the element
	case bits&flagLogical != 0:
		class = "logical"
	}

	typ, raw, err := m.readElement(r, 4*maxDims)
	if err != nil {
		return nil, fmt.Errorf("dimensions: %w", err)
	}
	if typ != miINT32 || len(raw)%4 != 0 || len(raw) < 8 {
		return nil, fmt.Errorf("dimensions of data type %d and %d bytes, want miINT32 (%d) and at least 2 dimensions", typ, len(raw), miINT32)
	}
	dims := make([]int, len(raw)/4)
	count := int64(1)
	for i := range dims {
		d := int32(m.order.Uint32(raw[4*i:]))
		if d < 0 {
			return nil, fmt.Errorf("negative dimension %d", d)
		}
		dims[i] = int(d)
		// Each factor is < 2³¹, so the product cannot overflow before it passes the limit.
		if count *= int64(d); count > MaxArrayBytes {
			return nil, fmt.Errorf("dimensions %v exceed the %d-byte limit", dims[:i+1], int64(MaxArrayBytes))
		}
	}

	typ, name, err := m.readElement(r, maxNameSize)
	if err != nil {
		return nil, fmt.Errorf("array name: %w", err)
	}
	if typ != miINT8 && typ != miUTF8 {
		return nil, fmt.Errorf("array name of data type %d, want miINT8 (%d)", typ, miINT8)
	}
	a := &Array{Name: string(name), Class: class, Dims: dims, order: m.order}

	typ, a.data, err = m.readElement(r, MaxArrayBytes)
	if err != nil {
		return nil, fmt.Errorf("variable %q: real part: %w", a.Name, err)
	}
	size, ok := elementSizes[typ]
	if !ok {
		return nil, fmt.Errorf("variable %q: real part of data type %d, want a numeric type", a.Name, typ)
	}
	if int64(len(a.data)) != count*int64(size) {
		return nil, fmt.Errorf("variable %q: real part of %d bytes, want %d for dimensions %v of data type %d",
			a.Name, len(a.data), count*int64(size), dims, typ)
	}
	a.dataType = typ
	return a, nil
}

// readElement reads one sub-element, in the full or the small (≤ 4 bytes
// packed into the tag) format, and skips its padding. It errors if the
// element declares more than limit bytes.
func (m *matReader) readElement(r io.Reader, limit int) (typ uint32, data []byte, err error) {
	var tag [8]byte
	if _, err := io.ReadFull(r, tag[:]); err != nil {
		return 0, nil, fmt.Errorf("tag: %w", noEOF(err))
	}
	typ, size := m.order.Uint32(tag[:4]), m.order.Uint32(tag[4:])
	if small := typ >> 16; small != 0 {
		if small > 4 {
			return 0, nil, fmt.Errorf("small-format element of %d bytes, want at most 4", small)
		}
		return typ & 0xffff, bytes.Clone(tag[4 : 4+small]), nil
	}
	if int64(size) > int64(limit) {
		return 0, nil, fmt.Errorf("element of %d bytes, more than the %d-byte limit", size, limit)
	}
	if data, err = readN(r, int(size)); err != nil {
		return 0, nil, fmt.Errorf("%d-byte element: %w", size, err)
	}
	return typ, data, skip(r, padding(size))
}

// padding returns the number of bytes that pad an element of size bytes to
// a multiple of 8.
func padding(size uint32) int64 { return int64((8 - size%8) % 8) }

// skip discards n bytes of r, erroring if r ends first.
func skip(r io.Reader, n int64) error {
	if _, err := io.CopyN(io.Discard, r, n); err != nil {
		return noEOF(err)
	}
	return nil
}

// readN reads exactly n bytes, growing its buffer as the data arrives so
// that a corrupt size cannot force a huge allocation for a short file.
func readN(r io.Reader, n int) ([]byte, error) {
	const firstChunk = 1 << 20
	buf := make([]byte, min(n, firstChunk))
	for done := 0; ; {
		k, err := io.ReadFull(r, buf[done:])
		done += k
		if err != nil {
			return nil, fmt.Errorf("%d of %d bytes: %w", done, n, noEOF(err))
		}
		if done == n {
			return buf, nil
		}
		grown := make([]byte, min(n, 2*len(buf)))
		copy(grown, buf)
		buf = grown
	}
}

// noEOF turns io.EOF, which here always means data ended early, into
// io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// countingReader counts the bytes read through it, for error offsets.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
