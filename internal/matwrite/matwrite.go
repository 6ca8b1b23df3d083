// Package matwrite encodes MATLAB level-5 MAT-files byte by byte, for the
// tests of the MAT-file reader (datasets/matfile) and of the loaders built on
// it (datasets/svhn, datasets/omniglot, datasets/caltech101).
//
// It follows MathWorks' "MAT-File Format" document and shares no code with
// the reader, so a test compares the reader against a second encoding of the
// format: a 128-byte header, then data elements, each an 8-byte tag (data
// type, byte count) followed by its data padded to 8 bytes, or, for at most
// 4 bytes, a 4-byte small tag (byte count << 16 | data type) and the data.
// A variable is an miMATRIX element holding array flags, dimensions, name
// and real part; miCOMPRESSED wraps one element in a zlib stream.
package matwrite

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"slices"
)

// Data types of data elements (MATLAB's miINT8 … miUTF8).
const (
	MiINT8       uint32 = 1
	MiUINT8      uint32 = 2
	MiINT16      uint32 = 3
	MiUINT16     uint32 = 4
	MiINT32      uint32 = 5
	MiUINT32     uint32 = 6
	MiSINGLE     uint32 = 7
	MiDOUBLE     uint32 = 9
	MiINT64      uint32 = 12
	MiUINT64     uint32 = 13
	MiMATRIX     uint32 = 14
	MiCOMPRESSED uint32 = 15
	MiUTF8       uint32 = 16
)

// Array classes (MATLAB's mxCHAR_CLASS, …) used by the tests.
const (
	MxCHAR   byte = 4
	MxDOUBLE byte = 6
	MxUINT8  byte = 9
)

// Array flags: bits of the second byte of the first flags word.
const (
	FlagLogical byte = 0x02
	FlagComplex byte = 0x08
)

// Variable describes one array to encode.
type Variable struct {
	Name  string
	Class byte    // MxDOUBLE, MxUINT8, …; 0 writes an invalid class
	Flags byte    // array flags, e.g. FlagComplex
	Dims  []int32 // MATLAB's order: the values are column-major
	Type  uint32  // storage data type of the real part, e.g. MiDOUBLE
	// Values are the real part, encoded as Type (converted as Go converts
	// float64 to that type).
	Values []float64
	// Raw, if set, is written as the real part's bytes instead of Values.
	Raw []byte
	// Imaginary also writes an imaginary part (a copy of the real one), as
	// a complex array has.
	Imaginary bool
	// NameType is the storage data type of the name; 0 means MiINT8.
	NameType uint32
}

// Double returns a double array named name of dimensions dims holding
// values (column-major), stored as doubles.
func Double(name string, dims []int32, values []float64) Variable {
	return Variable{Name: name, Class: MxDOUBLE, Dims: dims, Type: MiDOUBLE, Values: values}
}

// GreyImages returns n side×side grey images as the published MAT-files
// of Omniglot (a side²×n array, an image per column; perRow false) and
// Caltech-101 Silhouettes (n×side², an image per row) store them: each
// image's values in MATLAB's column-major order (reshape(v, side, side) is
// the image), value(i, r, c) the value of image i at row r, column c.
func GreyImages(name string, n, side int, perRow bool, value func(i, r, c int) float64) Variable {
	size := side * side
	values := make([]float64, n*size)
	dims := []int32{int32(size), int32(n)}
	if perRow {
		dims = []int32{int32(n), int32(size)}
	}
	for i := range n {
		for c := range side {
			for r := range side {
				k := r + side*c
				if perRow {
					values[i+n*k] = value(i, r, c) // x(i, k), column-major
				} else {
					values[k+size*i] = value(i, r, c) // x(k, i)
				}
			}
		}
	}
	return Double(name, dims, values)
}

// Writer encodes in one byte order.
type Writer struct{ Order binary.AppendByteOrder }

// LittleEndian and BigEndian are the two byte orders MATLAB writes.
var (
	LittleEndian = Writer{binary.LittleEndian}
	BigEndian    = Writer{binary.BigEndian}
)

// Header returns the 128-byte file header: descriptive text, subsystem data
// offset, version 0x0100 and the endian indicator, which reads "IM" in a
// little-endian file and "MI" in a big-endian one.
func (w Writer) Header() []byte {
	h := []byte("MATLAB 5.0 MAT-file, written by internal/matwrite")
	h = append(h, bytes.Repeat([]byte{' '}, 116-len(h))...)
	h = append(h, make([]byte, 8)...) // subsystem data offset
	h = w.Order.AppendUint16(h, 0x0100)
	return w.Order.AppendUint16(h, 'M'<<8|'I')
}

// Element encodes a data element in the full format, padded to 8 bytes.
func (w Writer) Element(typ uint32, data []byte) []byte {
	out := w.Tag(typ, uint32(len(data)), data...)
	return append(out, make([]byte, (8-len(data)%8)%8)...)
}

// Small encodes a data element of at most 4 bytes in the small format.
func (w Writer) Small(typ uint32, data []byte) []byte {
	out := w.Order.AppendUint32(nil, uint32(len(data))<<16|typ)
	return append(out, append(slices.Clone(data), make([]byte, 4-len(data))...)...)
}

// Tag encodes a full tag of data type typ and byte count n followed by
// data, unpadded (n need not be len(data), to write corrupt elements).
func (w Writer) Tag(typ, n uint32, data ...byte) []byte {
	return append(w.Order.AppendUint32(w.Order.AppendUint32(nil, typ), n), data...)
}

// Encode encodes values as data type typ. It panics on a type that is not
// numeric.
func (w Writer) Encode(typ uint32, values []float64) []byte {
	var out []byte
	for _, v := range values {
		switch typ {
		case MiINT8:
			out = append(out, byte(int8(v)))
		case MiUINT8:
			out = append(out, byte(v))
		case MiINT16:
			out = w.Order.AppendUint16(out, uint16(int16(v)))
		case MiUINT16:
			out = w.Order.AppendUint16(out, uint16(v))
		case MiINT32:
			out = w.Order.AppendUint32(out, uint32(int32(v)))
		case MiUINT32:
			out = w.Order.AppendUint32(out, uint32(v))
		case MiSINGLE:
			out = w.Order.AppendUint32(out, math.Float32bits(float32(v)))
		case MiDOUBLE:
			out = w.Order.AppendUint64(out, math.Float64bits(v))
		case MiINT64:
			out = w.Order.AppendUint64(out, uint64(int64(v)))
		case MiUINT64:
			out = w.Order.AppendUint64(out, uint64(v))
		default:
			panic("matwrite: data type is not numeric")
		}
	}
	return out
}

// Matrix encodes v as an miMATRIX element.
func (w Writer) Matrix(v Variable) []byte {
	flags := w.Order.AppendUint32(nil, uint32(v.Flags)<<8|uint32(v.Class))
	body := w.Element(MiUINT32, w.Order.AppendUint32(flags, 0))
	var dims []byte
	for _, d := range v.Dims {
		dims = w.Order.AppendUint32(dims, uint32(d))
	}
	body = append(body, w.Element(MiINT32, dims)...)
	nameTyp := v.NameType
	if nameTyp == 0 {
		nameTyp = MiINT8
	}
	body = append(body, w.smallOrFull(nameTyp, []byte(v.Name))...)
	real := v.Raw
	if real == nil {
		real = w.Encode(v.Type, v.Values)
	}
	body = append(body, w.smallOrFull(v.Type, real)...)
	if v.Imaginary {
		body = append(body, w.Element(v.Type, real)...)
	}
	return w.Element(MiMATRIX, body)
}

// smallOrFull encodes data in the small format when it fits, as MATLAB
// does.
func (w Writer) smallOrFull(typ uint32, data []byte) []byte {
	if len(data) <= 4 {
		return w.Small(typ, data)
	}
	return w.Element(typ, data)
}

// Compressed wraps an element in an miCOMPRESSED element (not padded).
func (w Writer) Compressed(elem []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(elem) // writes to a bytes.Buffer do not fail
	zw.Close()
	return w.Tag(MiCOMPRESSED, uint32(buf.Len()), buf.Bytes()...)
}

// Elements encodes each variable as one top-level element, compressing
// those whose index is in compress.
func (w Writer) Elements(vars []Variable, compress ...int) [][]byte {
	out := make([][]byte, len(vars))
	for i, v := range vars {
		out[i] = w.Matrix(v)
		if slices.Contains(compress, i) {
			out[i] = w.Compressed(out[i])
		}
	}
	return out
}

// File encodes a MAT-file of the variables, compressing those whose index
// is in compress.
func (w Writer) File(vars []Variable, compress ...int) []byte {
	return slices.Concat(append([][]byte{w.Header()}, w.Elements(vars, compress...)...)...)
}
