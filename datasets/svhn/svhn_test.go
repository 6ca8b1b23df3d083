package svhn

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The tests write MAT-files by hand following MathWorks' "MAT-File Format"
// document: a 128-byte header, then data elements, each an 8-byte tag (data
// type, byte count) followed by its data padded to 8 bytes, or, for at most
// 4 bytes, a 4-byte small tag (byte count << 16 | data type) and the data.

// Array classes and flags of the format.
const (
	mxCHAR   = 4
	mxDOUBLE = 6
	mxUINT8  = 9
)

// variable describes one array to encode.
type variable struct {
	name    string
	class   byte
	flags   byte // array flags, e.g. flagComplex
	dims    []int32
	typ     uint32    // storage data type of the real part
	values  []float64 // encoded as typ
	raw     []byte    // if set, the real part's bytes instead of values
	imagine bool      // also write an imaginary part (for complex arrays)
	nameTyp uint32    // storage data type of the name; 0 means miINT8
}

type matWriter struct{ order binary.AppendByteOrder }

func (m matWriter) header() []byte {
	h := []byte("MATLAB 5.0 MAT-file, written by the svhn tests")
	h = append(h, bytes.Repeat([]byte{' '}, 116-len(h))...)
	h = append(h, make([]byte, 8)...) // subsystem data offset
	h = m.order.AppendUint16(h, 0x0100)
	return m.order.AppendUint16(h, 'M'<<8|'I') // reads "IM" little-endian
}

// element encodes a data element in the full format, padded to 8 bytes.
func (m matWriter) element(typ uint32, data []byte) []byte {
	out := m.order.AppendUint32(nil, typ)
	out = m.order.AppendUint32(out, uint32(len(data)))
	out = append(out, data...)
	return append(out, make([]byte, (8-len(data)%8)%8)...)
}

// small encodes a data element of at most 4 bytes in the small format.
func (m matWriter) small(typ uint32, data []byte) []byte {
	out := m.order.AppendUint32(nil, uint32(len(data))<<16|typ)
	return append(out, append(slices.Clone(data), make([]byte, 4-len(data))...)...)
}

func (m matWriter) encode(typ uint32, values []float64) []byte {
	var out []byte
	for _, v := range values {
		switch typ {
		case miINT8:
			out = append(out, byte(int8(v)))
		case miUINT8:
			out = append(out, byte(v))
		case miINT16:
			out = m.order.AppendUint16(out, uint16(int16(v)))
		case miUINT16:
			out = m.order.AppendUint16(out, uint16(v))
		case miINT32:
			out = m.order.AppendUint32(out, uint32(int32(v)))
		case miUINT32:
			out = m.order.AppendUint32(out, uint32(v))
		case miSINGLE:
			out = m.order.AppendUint32(out, math.Float32bits(float32(v)))
		case miDOUBLE:
			out = m.order.AppendUint64(out, math.Float64bits(v))
		case miINT64:
			out = m.order.AppendUint64(out, uint64(int64(v)))
		case miUINT64:
			out = m.order.AppendUint64(out, uint64(v))
		default:
			panic("unknown type")
		}
	}
	return out
}

// matrix encodes v as an miMATRIX element.
func (m matWriter) matrix(v variable) []byte {
	flags := m.order.AppendUint32(nil, uint32(v.flags)<<8|uint32(v.class))
	body := m.element(miUINT32, m.order.AppendUint32(flags, 0))
	var dims []byte
	for _, d := range v.dims {
		dims = m.order.AppendUint32(dims, uint32(d))
	}
	body = append(body, m.element(miINT32, dims)...)
	nameTyp := v.nameTyp
	if nameTyp == 0 {
		nameTyp = miINT8
	}
	if len(v.name) <= 4 {
		body = append(body, m.small(nameTyp, []byte(v.name))...)
	} else {
		body = append(body, m.element(nameTyp, []byte(v.name))...)
	}
	real := v.raw
	if real == nil {
		real = m.encode(v.typ, v.values)
	}
	if len(real) <= 4 {
		body = append(body, m.small(v.typ, real)...)
	} else {
		body = append(body, m.element(v.typ, real)...)
	}
	if v.imagine {
		body = append(body, m.element(v.typ, real)...)
	}
	return m.element(miMATRIX, body)
}

// compressed wraps an element in an miCOMPRESSED element (not padded).
func (m matWriter) compressed(elem []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(elem)
	zw.Close()
	out := m.order.AppendUint32(nil, miCOMPRESSED)
	out = m.order.AppendUint32(out, uint32(buf.Len()))
	return append(out, buf.Bytes()...)
}

// file encodes a MAT-file of the variables, compressing those whose index
// is in compress.
func (m matWriter) file(vars []variable, compress ...int) []byte {
	out := m.header()
	for i, v := range vars {
		if slices.Contains(compress, i) {
			out = append(out, m.compressed(m.matrix(v))...)
		} else {
			out = append(out, m.matrix(v)...)
		}
	}
	return out
}

// Test images are 2×3 (rows ≠ columns, so a transposition would show), RGB.
const testH, testW, testC = 2, 3, 3

// testPixel is the byte of pixel (n, h, w, c): distinct for every position
// of the first 4 images, 0 for the first and 255 for the last.
func testPixel(n, h, w, c int) byte {
	k := ((n*testH+h)*testW+w)*testC + c
	return byte(k * 255 / (4*testH*testW*testC - 1))
}

// testX returns the X variable of n test images, its values in MATLAB's
// column-major order: the row index varies fastest, the image index slowest.
func testX(n int, class byte, typ uint32) variable {
	var values []float64
	for i := range n {
		for c := range testC {
			for w := range testW {
				for h := range testH {
					values = append(values, float64(testPixel(i, h, w, c)))
				}
			}
		}
	}
	dims := []int32{testH, testW, testC, int32(n)}
	if n == 1 {
		dims = dims[:3] // as MATLAB stores a single image
	}
	return variable{name: "X", class: class, dims: dims, typ: typ, values: values}
}

// testY returns the y variable of n labels, class double as in SVHN.
func testY(labels []float64, typ uint32) variable {
	return variable{name: "y", class: mxDOUBLE, dims: []int32{int32(len(labels)), 1}, typ: typ, values: labels}
}

var le, be = matWriter{binary.LittleEndian}, matWriter{binary.BigEndian}

func TestLoad(t *testing.T) {
	labels := []float64{10, 1, 5, 9}
	wantLabels := []int{0, 1, 5, 9}
	char := variable{name: "note", class: mxCHAR, dims: []int32{1, 2}, typ: miUINT16, values: []float64{'h', 'i'}}
	complexY := variable{name: "z", class: mxDOUBLE, flags: flagComplex, dims: []int32{1, 1}, typ: miDOUBLE, values: []float64{1}, imagine: true}
	tests := []struct {
		name  string
		split string
		n     int
		file  []byte
	}{
		{"plain, y stored as uint8", "train", 4,
			le.file([]variable{testX(4, mxUINT8, miUINT8), testY(labels, miUINT8)})},
		{"compressed, y stored as double", "test", 4,
			le.file([]variable{testX(4, mxUINT8, miUINT8), testY(labels, miDOUBLE)}, 0, 1)},
		{"big-endian, y compressed", "extra", 4,
			be.file([]variable{testX(4, mxUINT8, miUINT8), testY(labels, miDOUBLE)}, 1)},
		{"y first, X as double", "train", 4,
			le.file([]variable{testY(labels, miDOUBLE), testX(4, mxDOUBLE, miDOUBLE)}, 1)},
		{"other variables skipped", "test", 4,
			le.file([]variable{char, testX(4, mxUINT8, miUINT8), complexY, testY(labels, miUINT8)}, 0, 2)},
		{"one image, y stored in the tag", "train", 1,
			be.file([]variable{testX(1, mxUINT8, miUINT8), testY(labels[:1], miUINT8)}, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, Files[tc.split]), tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			im, err := Load(dir, tc.split)
			if err != nil {
				t.Fatal(err)
			}
			if im.Name != "svhn/"+tc.split || !slices.Equal(im.Shape(), []int{tc.n, testH, testW, testC}) {
				t.Fatalf("name %q shape %v, want %q [%d %d %d %d]", im.Name, im.Shape(), "svhn/"+tc.split, tc.n, testH, testW, testC)
			}
			if !slices.Equal(im.Labels, wantLabels[:tc.n]) {
				t.Errorf("labels %v, want %v", im.Labels, wantLabels[:tc.n])
			}
			for n := range tc.n {
				for h := range testH {
					for w := range testW {
						for c := range testC {
							want := float64(testPixel(n, h, w, c))/127.5 - 1
							got := im.Pixels[((n*testH+h)*testW+w)*testC+c]
							if math.Abs(float64(got)-want) > 1e-6 {
								t.Errorf("pixel (n=%d, h=%d, w=%d, c=%d) = %v, want %v", n, h, w, c, got, want)
							}
						}
					}
				}
			}
			if tc.n == 4 && (im.Pixels[0] != -1 || im.Pixels[len(im.Pixels)-1] != 1) {
				t.Errorf("extreme pixels %v and %v, want exactly -1 and 1", im.Pixels[0], im.Pixels[len(im.Pixels)-1])
			}
		})
	}
}

// TestLoadScipyFiles reads files written by scipy.io.savemat, a MAT-file
// writer independent of this package (see testdata/scipy_fixtures.py): the
// test data set plus a char array, a cell, a struct and a complex array.
func TestLoadScipyFiles(t *testing.T) {
	for _, dir := range []string{"testdata/scipy-plain", "testdata/scipy-compressed"} {
		t.Run(dir, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, Files["test"]))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			arrays, err := ReadMAT(f)
			if err != nil {
				t.Fatal(err)
			}
			if names := slices.Sorted(maps.Keys(arrays)); !slices.Equal(names, []string{"X", "y"}) {
				t.Errorf("variables %q, want [X y] (the others are not real numeric arrays)", names)
			}
			im, err := Load(dir, "test")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(im.Shape(), []int{4, testH, testW, testC}) || !slices.Equal(im.Labels, []int{0, 1, 5, 9}) {
				t.Fatalf("shape %v labels %v, want [4 %d %d %d] and [0 1 5 9]", im.Shape(), testH, testW, testC, im.Labels)
			}
			for n := range 4 {
				for h := range testH {
					for w := range testW {
						for c := range testC {
							want := float64(testPixel(n, h, w, c))/127.5 - 1
							if got := im.Pixels[((n*testH+h)*testW+w)*testC+c]; math.Abs(float64(got)-want) > 1e-6 {
								t.Errorf("pixel (n=%d, h=%d, w=%d, c=%d) = %v, want %v", n, h, w, c, got, want)
							}
						}
					}
				}
			}
		})
	}
}

// TestReadMATTypes checks that every numeric storage type, in both byte
// orders, reads back the hand-encoded values; that non-byte values are
// refused by Uint8s naming their index; and that UTF-8 names and logical
// arrays are read.
func TestReadMATTypes(t *testing.T) {
	values := []float64{0, 1, 127, 3, 255, 42}
	for typ := range elementSizes {
		if typ == miINT8 {
			continue // cannot hold 255; tested for its negative values below
		}
		for _, m := range []matWriter{le, be} {
			v := variable{name: "values", class: mxDOUBLE, dims: []int32{2, 3}, typ: typ, values: values}
			arrays, err := ReadMAT(bytes.NewReader(m.file([]variable{v})))
			if err != nil {
				t.Fatalf("type %d %v: %v", typ, m.order, err)
			}
			a := arrays["values"]
			if a == nil || a.Class != "double" || !slices.Equal(a.Dims, []int{2, 3}) || a.Len() != 6 {
				t.Fatalf("type %d %v: got %+v, want a double [2 3] array named \"values\"", typ, m.order, a)
			}
			got, err := a.Uint8s()
			if err != nil || !slices.Equal(got, []byte{0, 1, 127, 3, 255, 42}) {
				t.Errorf("type %d %v: Uint8s = %v, %v; want %v", typ, m.order, got, err, values)
			}
		}
	}

	bad := []struct {
		typ   uint32
		value float64
	}{{miINT8, -1}, {miINT16, 256}, {miDOUBLE, 2.5}, {miSINGLE, float64(math.Inf(1))}, {miDOUBLE, math.NaN()}}
	for _, b := range bad {
		v := variable{name: "v", class: mxDOUBLE, dims: []int32{1, 2}, typ: b.typ, values: []float64{7, b.value}}
		arrays, err := ReadMAT(bytes.NewReader(le.file([]variable{v})))
		if err != nil {
			t.Fatal(err)
		}
		_, err = arrays["v"].Uint8s()
		if err == nil || !strings.Contains(err.Error(), "at index 1 is not an integer in [0, 255]") {
			t.Errorf("type %d value %v: Uint8s error %v, want one naming index 1", b.typ, b.value, err)
		}
	}

	// MATLAB may store a name as UTF-8 (miUTF8) instead of miINT8.
	utf8Name := variable{name: "größe", nameTyp: miUTF8, class: mxDOUBLE, dims: []int32{1, 1}, typ: miUINT8, values: []float64{3}}
	arrays, err := ReadMAT(bytes.NewReader(be.file([]variable{utf8Name})))
	if err != nil || arrays["größe"] == nil || arrays["größe"].Len() != 1 {
		t.Errorf("name stored as miUTF8: %v, %v; want one variable \"größe\"", arrays, err)
	}

	logical := variable{name: "mask", class: mxUINT8, flags: flagLogical, dims: []int32{1, 3}, typ: miUINT8, values: []float64{1, 0, 1}}
	arrays, err = ReadMAT(bytes.NewReader(le.file([]variable{logical}, 0)))
	if err != nil || arrays["mask"] == nil || arrays["mask"].Class != "logical" {
		t.Errorf("logical array: %v, %v; want class \"logical\"", arrays, err)
	}
}

// TestReadMATErrors checks that each malformed file, written by hand
// following the MAT-file format, is refused with an error naming the
// problem (and, where it reports them, the offending sizes and offsets).
func TestReadMATErrors(t *testing.T) {
	x := testX(4, mxUINT8, miUINT8)
	valid := le.file([]variable{x})
	withTag := func(b []byte, at int, typ uint32) []byte {
		b = slices.Clone(b)
		binary.LittleEndian.PutUint32(b[at:], typ)
		return b
	}
	// Offsets in valid: header 128, matrix tag 128, flags tag 136, dims tag 152.
	corruptZlib := le.compressed(le.matrix(x))
	corruptZlib[len(corruptZlib)-1] ^= 0xff // the Adler-32 checksum
	shortDims := x
	shortDims.dims = []int32{int32(len(x.values))}
	mismatch := x
	mismatch.dims = []int32{testH, testW, testC, 5}
	huge := x
	huge.dims = []int32{1 << 30, 1 << 30, 3}
	// count = 2³¹−1 bytes exactly: within the limit, so only the 1-byte real
	// part is wrong.
	atLimit := variable{name: "X", class: mxUINT8, dims: []int32{math.MaxInt32, 1}, typ: miUINT8, raw: []byte{1}}
	doubles := variable{name: "d", class: mxDOUBLE, dims: []int32{2, 3}, typ: miDOUBLE, values: []float64{1, 2, 3, 4, 5}}
	byteName := x
	byteName.nameTyp = miUINT8
	negative := x
	negative.dims = []int32{2, -3}
	utf16 := x
	utf16.typ, utf16.raw = miUTF8+1, []byte("text")
	withVersion := func(v uint16) []byte {
		b := slices.Clone(valid)
		binary.LittleEndian.PutUint16(b[124:], v)
		return b
	}
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "truncated 128-byte MAT-file header"},
		{"short header", valid[:100], "truncated 128-byte MAT-file header"},
		{"no endian indicator", append(make([]byte, 128), valid[128:]...), "not a MATLAB level-5 MAT-file"},
		{"version 7.3", withVersion(0x0200), "MATLAB 7.3 (HDF5)"},
		{"unknown version", withVersion(9), "version 0x0009"},
		{"truncated tag", valid[:131], "byte 128: truncated tag (3 of 8 bytes)"},
		{"truncated matrix", valid[:len(valid)-20], "byte 128: truncated matrix"},
		{"top-level int8 element", withTag(valid, 128, miINT8), "data type 1, want miMATRIX"},
		{"flags not uint32", withTag(valid, 136, miINT32), "array flags of data type 5"},
		{"dims not int32", withTag(valid, 152, miUINT8), "dimensions of data type 2"},
		{"one dimension", le.file([]variable{shortDims}), "want miINT32 (5) and at least 2 dimensions"},
		{"negative dimension", le.file([]variable{negative}), "negative dimension -3"},
		{"huge dimensions", le.file([]variable{huge}), "dimensions [1073741824 1073741824] exceed the 2147483647-byte limit"},
		{"dimensions at the limit", le.file([]variable{atLimit}), "real part of 1 bytes, want 2147483647"},
		{"real part size mismatch", le.file([]variable{mismatch}), "real part of 72 bytes, want 90"},
		{"5 doubles for 2×3", le.file([]variable{doubles}), "real part of 40 bytes, want 48"},
		{"name stored as uint8", le.file([]variable{byteName}), "array name of data type 2"},
		// io.EOF at an element boundary inside a matrix still means truncation.
		{"cut after the matrix tag", valid[:136], "byte 128: truncated matrix: array flags: tag: unexpected EOF"},
		{"real part not numeric", le.file([]variable{utf16}), "real part of data type 17"},
		{"corrupt zlib header", append(le.header(), le.m32(miCOMPRESSED, 4, 1, 2, 3, 4)...), "zlib: invalid header"},
		{"corrupt zlib checksum", append(le.header(), corruptZlib...), "zlib: invalid checksum"},
		{"truncated compressed", append(le.header(), le.compressed(le.matrix(x))[:30]...), "compressed element: truncated matrix"},
		{"compressed non-matrix", append(le.header(), le.compressed(le.element(miUINT8, []byte{1}))...), "holds data type 2"},
		{"duplicate name", le.file([]variable{x, x}), `a second variable named "X"`},
		{"class 0", le.file([]variable{{name: "bad", dims: []int32{1, 1}, typ: miUINT8, values: []float64{1}}}), "unknown array class 0"},
	}
	for _, tc := range tests {
		arrays, err := ReadMAT(bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ReadMAT = %d arrays, error %v; want an error containing %q", tc.name, len(arrays), err, tc.want)
		}
	}
}

// m32 encodes a tag of type typ and size n followed by data, unpadded.
func (m matWriter) m32(typ, n uint32, data ...byte) []byte {
	return append(m.order.AppendUint32(m.order.AppendUint32(nil, typ), n), data...)
}

func TestLoadErrors(t *testing.T) {
	labels := []float64{10, 1, 5, 9}
	x, y := testX(4, mxUINT8, miUINT8), testY(labels, miUINT8)
	xRGBA := x
	xRGBA.dims = []int32{testH, testW, 4, 3}
	tests := []struct {
		name string
		file []byte // nil: no file
		want []string
	}{
		{"missing file", nil, []string{"train_32x32.mat does not exist", "http://ufldl.stanford.edu/housenumbers/train_32x32.mat"}},
		{"no y", le.file([]variable{x}), []string{"train_32x32.mat", `want numeric variables X and y, found ["X"]`}},
		{"too few labels", le.file([]variable{x, testY(labels[:3], miUINT8)}), []string{"variable y has 3 values", "want one per image of X, 4"}},
		{"label 0", le.file([]variable{x, testY([]float64{10, 0, 1, 2}, miUINT8)}), []string{"label 0 of image 1, want 1 to 10"}},
		{"label 11", le.file([]variable{x, testY([]float64{1, 2, 11, 2}, miDOUBLE)}), []string{"label 11 of image 2"}},
		{"fractional label", le.file([]variable{x, testY([]float64{1, 2.5, 3, 4}, miDOUBLE)}), []string{`variable "y": value 2.5 at index 1`}},
		{"four channels", le.file([]variable{xRGBA, y}), []string{"variable X has dimensions [2 3 4 3], want [height width 3 N]"}},
		{"no images", le.file([]variable{testY(nil, miUINT8), {name: "X", class: mxUINT8, dims: []int32{testH, testW, testC, 0}, typ: miUINT8}}),
			[]string{"train_32x32.mat", "want all positive"}},
		{"corrupt file", le.file([]variable{x, y})[:300], []string{"svhn: ", "train_32x32.mat: data element at byte"}},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		if tc.file != nil {
			if err := os.WriteFile(filepath.Join(dir, "train_32x32.mat"), tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(dir, "train")
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Load error %v, want one containing %q", tc.name, err, want)
			}
		}
	}
	if _, err := Load(t.TempDir(), "validation"); err == nil || !strings.Contains(err.Error(), `split "validation"`) {
		t.Errorf("Load(validation) error %v, want one naming the split", err)
	}
}

// TestTruncated checks that every proper prefix of a valid file fails to
// load: no truncation yields a silently smaller data set.
func TestTruncated(t *testing.T) {
	vars := []variable{testX(4, mxUINT8, miUINT8), testY([]float64{10, 1, 5, 9}, miDOUBLE)}
	// y's matrix carries 3 bytes after its sub-elements (ReadMAT discards
	// them), so its size is not a multiple of 8 and the file ends in 5 bytes
	// of padding, which a truncation may cut.
	yBody := slices.Clone(le.matrix(vars[1])[8:])
	trailing := append(le.file(vars[:1]), le.element(miMATRIX, append(yBody, 1, 2, 3))...)
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"plain", le.file(vars)},
		{"compressed", le.file(vars, 0, 1)},
		{"big-endian mixed", be.file(vars, 1)},
		{"padded last element", trailing},
	} {
		arrays, err := ReadMAT(bytes.NewReader(tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := fromArrays(arrays); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for cut := range len(tc.file) {
			arrays, err := ReadMAT(bytes.NewReader(tc.file[:cut]))
			if err == nil {
				_, err = fromArrays(arrays)
			}
			if err == nil {
				t.Errorf("%s cut to %d of %d bytes: no error", tc.name, cut, len(tc.file))
			}
		}
	}
}

func FuzzReadMAT(f *testing.F) {
	vars := []variable{testX(2, mxUINT8, miUINT8), testY([]float64{10, 3}, miDOUBLE)}
	f.Add(le.file(vars))
	f.Add(le.file(vars, 0, 1))
	f.Add(be.file(vars, 0))
	f.Add(be.file([]variable{{name: "values", class: mxDOUBLE, dims: []int32{1, 2}, typ: miINT16, values: []float64{-1, 300}}}))
	for _, dir := range []string{"testdata/scipy-plain", "testdata/scipy-compressed"} {
		b, err := os.ReadFile(filepath.Join(dir, Files["test"]))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		arrays, err := ReadMAT(bytes.NewReader(data))
		if err != nil {
			return
		}
		for name, a := range arrays {
			count := 1
			for _, d := range a.Dims {
				count *= d
			}
			if a.Name != name || len(a.Dims) < 2 || a.Len() != count {
				t.Fatalf("array %q: name %q dims %v with %d values", name, a.Name, a.Dims, a.Len())
			}
			if b, err := a.Uint8s(); err == nil && len(b) != count {
				t.Fatalf("array %q: Uint8s gave %d values, want %d", name, len(b), count)
			}
		}
		if im, err := fromArrays(arrays); err == nil {
			if err := im.Validate(); err != nil && im.N > 0 {
				t.Fatalf("fromArrays returned an invalid set: %v", err)
			}
		}
	})
}
