package matfile

import (
	"bytes"
	"encoding/binary"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mw "github.com/edlebm/edlebm/internal/matwrite"
)

// The tests write MAT-files with internal/matwrite, an encoder of the format
// that shares no code with this reader, and read files written by
// scipy.io.savemat (testdata/scipy_fixtures.py).

var le, be = mw.LittleEndian, mw.BigEndian

// Test images are 2×3 (rows ≠ columns, so a transposition would show), RGB,
// as SVHN stores them: X is [height width 3 N] uint8.
const testH, testW, testC = 2, 3, 3

// testPixel is the byte of pixel (n, h, w, c): distinct for every position
// of the first 4 images, 0 for the first and 255 for the last (the values
// testdata/scipy_fixtures.py writes).
func testPixel(n, h, w, c int) byte {
	k := ((n*testH+h)*testW+w)*testC + c
	return byte(k * 255 / (4*testH*testW*testC - 1))
}

// testValues returns the pixels of n test images in MATLAB's column-major
// order: the row index varies fastest, the image index slowest.
func testValues(n int) []float64 {
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
	return values
}

// testX returns the variable X of 4 test images stored as uint8.
func testX() mw.Variable {
	return mw.Variable{Name: "X", Class: mw.MxUINT8, Dims: []int32{testH, testW, testC, 4}, Type: mw.MiUINT8, Values: testValues(4)}
}

// testY returns the variable y of SVHN's labels, class double.
func testY(labels []float64, typ uint32) mw.Variable {
	return mw.Variable{Name: "y", Class: mw.MxDOUBLE, Dims: []int32{int32(len(labels)), 1}, Type: typ, Values: labels}
}

// TestReadMATTypes checks that every numeric storage type, in both byte
// orders, reads back the hand-encoded values with Uint8s and Float64s; that
// non-byte values are refused by Uint8s naming their index; and that UTF-8
// names and logical arrays are read.
func TestReadMATTypes(t *testing.T) {
	values := []float64{0, 1, 127, 3, 255, 42}
	for typ := range elementSizes {
		if typ == miINT8 {
			continue // cannot hold 255; tested for its negative values below
		}
		for _, m := range []mw.Writer{le, be} {
			v := mw.Variable{Name: "values", Class: mw.MxDOUBLE, Dims: []int32{2, 3}, Type: typ, Values: values}
			arrays, err := ReadMAT(bytes.NewReader(m.File([]mw.Variable{v})))
			if err != nil {
				t.Fatalf("type %d %v: %v", typ, m.Order, err)
			}
			a := arrays["values"]
			if a == nil || a.Class != "double" || !slices.Equal(a.Dims, []int{2, 3}) || a.Len() != 6 {
				t.Fatalf("type %d %v: got %+v, want a double [2 3] array named \"values\"", typ, m.Order, a)
			}
			got, err := a.Uint8s()
			if err != nil || !slices.Equal(got, []byte{0, 1, 127, 3, 255, 42}) {
				t.Errorf("type %d %v: Uint8s = %v, %v; want %v", typ, m.Order, got, err, values)
			}
			if got := a.Float64s(); !slices.Equal(got, values) {
				t.Errorf("type %d %v: Float64s = %v, want %v", typ, m.Order, got, values)
			}
		}
	}

	bad := []struct {
		typ   uint32
		value float64
	}{{miINT8, -1}, {miINT16, 256}, {miDOUBLE, 2.5}, {miSINGLE, float64(math.Inf(1))}, {miDOUBLE, math.NaN()}}
	for _, b := range bad {
		v := mw.Variable{Name: "v", Class: mw.MxDOUBLE, Dims: []int32{1, 2}, Type: b.typ, Values: []float64{7, b.value}}
		arrays, err := ReadMAT(bytes.NewReader(le.File([]mw.Variable{v})))
		if err != nil {
			t.Fatal(err)
		}
		_, err = arrays["v"].Uint8s()
		if err == nil || !strings.Contains(err.Error(), "at index 1 is not an integer in [0, 255]") {
			t.Errorf("type %d value %v: Uint8s error %v, want one naming index 1", b.typ, b.value, err)
		}
	}

	// MATLAB may store a name as UTF-8 (miUTF8) instead of miINT8.
	utf8Name := mw.Variable{Name: "größe", NameType: mw.MiUTF8, Class: mw.MxDOUBLE, Dims: []int32{1, 1}, Type: mw.MiUINT8, Values: []float64{3}}
	arrays, err := ReadMAT(bytes.NewReader(be.File([]mw.Variable{utf8Name})))
	if err != nil || arrays["größe"] == nil || arrays["größe"].Len() != 1 {
		t.Errorf("name stored as miUTF8: %v, %v; want one variable \"größe\"", arrays, err)
	}

	logical := mw.Variable{Name: "mask", Class: mw.MxUINT8, Flags: mw.FlagLogical, Dims: []int32{1, 3}, Type: mw.MiUINT8, Values: []float64{1, 0, 1}}
	arrays, err = ReadMAT(bytes.NewReader(le.File([]mw.Variable{logical}, 0)))
	if err != nil || arrays["mask"] == nil || arrays["mask"].Class != "logical" {
		t.Errorf("logical array: %v, %v; want class \"logical\"", arrays, err)
	}
}

// TestFloat64s checks Float64s on values no byte holds: signed integers at
// the ends of their types, fractions in single and double precision (single
// ones as float32 rounds them), ±Inf and NaN, in both byte orders and in
// column-major order.
func TestFloat64s(t *testing.T) {
	tests := []struct {
		typ    uint32
		values []float64
		want   []float64 // nil: values
	}{
		{miINT8, []float64{-128, 127, -1, 0}, nil},
		{miINT16, []float64{-32768, 32767, -300, 5}, nil},
		{miINT32, []float64{math.MinInt32, math.MaxInt32, -70000, 1}, nil},
		{miINT64, []float64{-1 << 53, 1 << 53, -2, 3}, nil},
		{miUINT32, []float64{math.MaxUint32, 0, 65536, 9}, nil},
		{miDOUBLE, []float64{0.25, 1.0 / 3, -0.5, 1e-300}, nil},
		{miSINGLE, []float64{0.25, 0.1, -0.5, 3e38}, []float64{0.25, float64(float32(0.1)), -0.5, float64(float32(3e38))}},
		{miDOUBLE, []float64{math.Inf(1), math.Inf(-1), math.NaN(), 0}, nil},
	}
	for _, tc := range tests {
		want := tc.want
		if want == nil {
			want = tc.values
		}
		for _, m := range []mw.Writer{le, be} {
			v := mw.Variable{Name: "v", Class: mw.MxDOUBLE, Dims: []int32{2, 2}, Type: tc.typ, Values: tc.values}
			arrays, err := ReadMAT(bytes.NewReader(m.File([]mw.Variable{v}, 0)))
			if err != nil {
				t.Fatalf("type %d %v: %v", tc.typ, m.Order, err)
			}
			got := arrays["v"].Float64s()
			if !slices.EqualFunc(got, want, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
				t.Errorf("type %d %v: Float64s = %v, want %v", tc.typ, m.Order, got, want)
			}
		}
	}
}

// TestReadMATScipyFiles reads files written by scipy.io.savemat, a MAT-file
// writer independent of this package and of internal/matwrite (see
// testdata/scipy_fixtures.py): SVHN's X and y beside a char array, a cell, a
// struct and a complex array, which are skipped.
func TestReadMATScipyFiles(t *testing.T) {
	for _, dir := range []string{"testdata/scipy-plain", "testdata/scipy-compressed"} {
		f, err := os.Open(filepath.Join(dir, "test_32x32.mat"))
		if err != nil {
			t.Fatal(err)
		}
		arrays, err := ReadMAT(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if names := slices.Sorted(maps.Keys(arrays)); !slices.Equal(names, []string{"X", "y"}) {
			t.Errorf("%s: variables %q, want [X y] (the others are not real numeric arrays)", dir, names)
		}
		x, y := arrays["X"], arrays["y"]
		if x == nil || y == nil {
			continue
		}
		if x.Class != "uint8" || !slices.Equal(x.Dims, []int{testH, testW, testC, 4}) {
			t.Errorf("%s: X is %s %v, want uint8 [%d %d %d 4]", dir, x.Class, x.Dims, testH, testW, testC)
		}
		if got := x.Float64s(); !slices.Equal(got, testValues(4)) {
			t.Errorf("%s: X = %v, want %v (column-major)", dir, got, testValues(4))
		}
		if got := y.Float64s(); y.Class != "double" || !slices.Equal(y.Dims, []int{4, 1}) || !slices.Equal(got, []float64{10, 1, 5, 9}) {
			t.Errorf("%s: y is %s %v = %v, want double [4 1] = [10 1 5 9]", dir, y.Class, y.Dims, got)
		}
	}
}

// TestReadMATErrors checks that each malformed file, written by hand
// following the MAT-file format, is refused with an error naming the
// problem (and, where it reports them, the offending sizes and offsets).
func TestReadMATErrors(t *testing.T) {
	x := testX()
	valid := le.File([]mw.Variable{x})
	withTag := func(b []byte, at int, typ uint32) []byte {
		b = slices.Clone(b)
		binary.LittleEndian.PutUint32(b[at:], typ)
		return b
	}
	// Offsets in valid: header 128, matrix tag 128, flags tag 136, dims tag 152.
	corruptZlib := le.Compressed(le.Matrix(x))
	corruptZlib[len(corruptZlib)-1] ^= 0xff // the Adler-32 checksum
	shortDims := x
	shortDims.Dims = []int32{int32(len(x.Values))}
	mismatch := x
	mismatch.Dims = []int32{testH, testW, testC, 5}
	huge := x
	huge.Dims = []int32{1 << 30, 1 << 30, 3}
	// count = 2³¹−1 bytes exactly: within the limit, so only the 1-byte real
	// part is wrong.
	atLimit := mw.Variable{Name: "X", Class: mw.MxUINT8, Dims: []int32{math.MaxInt32, 1}, Type: mw.MiUINT8, Raw: []byte{1}}
	doubles := mw.Double("d", []int32{2, 3}, []float64{1, 2, 3, 4, 5})
	byteName := x
	byteName.NameType = mw.MiUINT8
	negative := x
	negative.Dims = []int32{2, -3}
	utf16 := x
	utf16.Type, utf16.Raw = mw.MiUTF8+1, []byte("text")
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
		{"one dimension", le.File([]mw.Variable{shortDims}), "want miINT32 (5) and at least 2 dimensions"},
		{"negative dimension", le.File([]mw.Variable{negative}), "negative dimension -3"},
		{"huge dimensions", le.File([]mw.Variable{huge}), "dimensions [1073741824 1073741824] exceed the 2147483647-byte limit"},
		{"dimensions at the limit", le.File([]mw.Variable{atLimit}), "real part of 1 bytes, want 2147483647"},
		{"real part size mismatch", le.File([]mw.Variable{mismatch}), "real part of 72 bytes, want 90"},
		{"5 doubles for 2×3", le.File([]mw.Variable{doubles}), "real part of 40 bytes, want 48"},
		{"name stored as uint8", le.File([]mw.Variable{byteName}), "array name of data type 2"},
		// io.EOF at an element boundary inside a matrix still means truncation.
		{"cut after the matrix tag", valid[:136], "byte 128: truncated matrix: array flags: tag: unexpected EOF"},
		{"real part not numeric", le.File([]mw.Variable{utf16}), "real part of data type 17"},
		{"corrupt zlib header", append(le.Header(), le.Tag(miCOMPRESSED, 4, 1, 2, 3, 4)...), "zlib: invalid header"},
		{"corrupt zlib checksum", append(le.Header(), corruptZlib...), "zlib: invalid checksum"},
		{"truncated compressed", append(le.Header(), le.Compressed(le.Matrix(x))[:30]...), "compressed element: truncated matrix"},
		{"compressed non-matrix", append(le.Header(), le.Compressed(le.Element(miUINT8, []byte{1}))...), "holds data type 2"},
		{"duplicate name", le.File([]mw.Variable{x, x}), `a second variable named "X"`},
		{"class 0", le.File([]mw.Variable{{Name: "bad", Dims: []int32{1, 1}, Type: mw.MiUINT8, Values: []float64{1}}}), "unknown array class 0"},
	}
	for _, tc := range tests {
		arrays, err := ReadMAT(bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ReadMAT = %d arrays, error %v; want an error containing %q", tc.name, len(arrays), err, tc.want)
		}
	}
}

// TestTruncated checks every proper prefix of valid files: ReadMAT reads it
// without error exactly when the cut falls between top-level elements, and
// then returns the variables of the elements before the cut and no others.
// So no truncation yields a silently shorter variable; a loader notices a
// missing one by name.
func TestTruncated(t *testing.T) {
	vars := []mw.Variable{testX(), testY([]float64{10, 1, 5, 9}, miDOUBLE)}
	// y's matrix carries 3 bytes after its sub-elements (ReadMAT discards
	// them), so its size is not a multiple of 8 and the element ends in 5
	// bytes of padding, which a truncation may cut.
	yBody := slices.Clone(le.Matrix(vars[1])[8:])
	trailing := le.Element(miMATRIX, append(yBody, 1, 2, 3))
	for _, tc := range []struct {
		name     string
		w        mw.Writer
		elements [][]byte
	}{
		{"plain", le, le.Elements(vars)},
		{"compressed", le, le.Elements(vars, 0, 1)},
		{"big-endian mixed", be, be.Elements(vars, 1)},
		{"padded last element", le, [][]byte{le.Matrix(vars[0]), trailing}},
	} {
		file := tc.w.Header()
		ends := map[int]int{len(file): 0} // cut → variables complete before it
		for i, e := range tc.elements {
			file = append(file, e...)
			ends[len(file)] = i + 1
		}
		for cut := range len(file) + 1 {
			arrays, err := ReadMAT(bytes.NewReader(file[:cut]))
			n, atEnd := ends[cut]
			switch {
			case atEnd && err != nil:
				t.Errorf("%s cut to %d of %d bytes, after %d elements: %v", tc.name, cut, len(file), n, err)
			case atEnd && (len(arrays) != n || n > 0 && arrays[vars[n-1].Name] == nil):
				t.Errorf("%s cut to %d of %d bytes: variables %q, want the first %d of [X y]", tc.name, cut, len(file), slices.Sorted(maps.Keys(arrays)), n)
			case !atEnd && err == nil:
				t.Errorf("%s cut to %d of %d bytes, inside an element: no error (variables %q)", tc.name, cut, len(file), slices.Sorted(maps.Keys(arrays)))
			}
		}
	}
}

func FuzzReadMAT(f *testing.F) {
	vars := []mw.Variable{testX(), testY([]float64{10, 3, 1, 2}, miDOUBLE)}
	f.Add(le.File(vars))
	f.Add(le.File(vars, 0, 1))
	f.Add(be.File(vars, 0))
	f.Add(be.File([]mw.Variable{{Name: "values", Class: mw.MxDOUBLE, Dims: []int32{1, 2}, Type: mw.MiINT16, Values: []float64{-1, 300}}}))
	for _, dir := range []string{"testdata/scipy-plain", "testdata/scipy-compressed"} {
		b, err := os.ReadFile(filepath.Join(dir, "test_32x32.mat"))
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
			if v := a.Float64s(); len(v) != count {
				t.Fatalf("array %q: Float64s gave %d values, want %d", name, len(v), count)
			}
		}
	})
}
