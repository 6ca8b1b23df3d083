package matwrite

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"io"
	"strings"
	"testing"
)

// unhex decodes hex digits, ignoring spaces and newlines.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMatrixBytes checks the encoding of small variables against bytes
// written out by hand from the "MAT-File Format" document: the miMATRIX tag,
// the array flags (class in the low byte, flags in the next), the int32
// dimensions, the name and the real part, small elements packed into their
// tags and full ones padded to 8 bytes, in both byte orders.
func TestMatrixBytes(t *testing.T) {
	tests := []struct {
		name string
		w    Writer
		v    Variable
		want string
	}{
		{"1×1 double a, little-endian", LittleEndian, Double("a", []int32{1, 1}, []float64{1}), `
			0e000000 38000000
			06000000 08000000  06000000 00000000
			05000000 08000000  01000000 01000000
			01000100 61000000
			09000000 08000000  00000000 0000f03f`},
		{"1×1 double a, big-endian", BigEndian, Double("a", []int32{1, 1}, []float64{1}), `
			0000000e 00000038
			00000006 00000008  00000006 00000000
			00000005 00000008  00000001 00000001
			00010001 61000000
			00000009 00000008  3ff00000 00000000`},
		{"1×3 logical mask stored as uint8, padded name and data", LittleEndian,
			Variable{Name: "masks", Class: MxUINT8, Flags: FlagLogical, Dims: []int32{1, 3}, Type: MiUINT8, Values: []float64{1, 0, 1}}, `
			0e000000 38000000
			06000000 08000000  09020000 00000000
			05000000 08000000  01000000 03000000
			01000000 05000000  6d61736b 73000000
			02000300 01000100`},
	}
	for _, tc := range tests {
		if got, want := tc.w.Matrix(tc.v), unhex(t, tc.want); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %x\nwant %x", tc.name, got, want)
		}
	}
}

// TestFileLayout checks the header (text, version 0x0100 and the endian
// indicator "IM" little-endian, "MI" big-endian at bytes 124–127) and that a
// compressed element is an unpadded miCOMPRESSED tag whose zlib stream holds
// exactly the plain element.
func TestFileLayout(t *testing.T) {
	v := Double("x", []int32{1, 2}, []float64{0.5, 2})
	for _, tc := range []struct {
		w    Writer
		tail string
	}{{LittleEndian, "0001494d"}, {BigEndian, "01004d49"}} {
		f := tc.w.File([]Variable{v, v}, 1)
		if !strings.HasPrefix(string(f), "MATLAB 5.0 MAT-file") || hex.EncodeToString(f[124:128]) != tc.tail {
			t.Errorf("%v header: %q … %x, want the MATLAB text … %s", tc.w.Order, f[:19], f[124:128], tc.tail)
		}
		plain := tc.w.Matrix(v)
		if !bytes.Equal(f[128:128+len(plain)], plain) {
			t.Errorf("%v: first element is not the plain matrix", tc.w.Order)
		}
		rest := f[128+len(plain):]
		if typ := tc.w.Tag(MiCOMPRESSED, uint32(len(rest)-8)); !bytes.Equal(rest[:8], typ) {
			t.Errorf("%v: compressed tag %x, want %x (type 15, the stream's length)", tc.w.Order, rest[:8], typ)
		}
		zr, err := zlib.NewReader(bytes.NewReader(rest[8:]))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%v: compressed element inflates to %x, %v; want the plain matrix %x", tc.w.Order, got, err, plain)
		}
	}
}
