package npy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shifted is arange(6).reshape(2, 3) − 2, the fixtures' values.
var shifted = []float64{-2, -1, 0, 1, 2, 3}

// TestDecodeNumPysFiles decodes arrays NumPy wrote
// (testdata/make_fixtures.py) in each dtype, byte order and element order.
func TestDecodeNumPysFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []float64
	}{
		{"rect-2x3-fortran-be.npy", []float64{0, 1, 2, 3, 4, 5}},
		{"ints-i2-be.npy", shifted},
		{"ints-u1.npy", []float64{0, 1, 2, 3, 4, 5}},
		{"ints-i8.npy", shifted},
		{"floats-f4.npy", shifted},
	} {
		raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		a, err := Decode(raw)
		if err != nil || !slices.Equal(a.Shape, []int{2, 3}) || !slices.Equal(a.Values, tc.want) {
			t.Errorf("%s: Decode = %+v, %v; want shape [2 3], values %v", tc.file, a, err, tc.want)
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "xy.npz"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := ArrayNames(data)
	if err != nil || !slices.Equal(names, []string{"x", "y"}) {
		t.Errorf("ArrayNames = %v, %v; want [x y]", names, err)
	}
	arrays, err := DecodeNPZ(data, "y", "x")
	if err != nil || !slices.Equal(arrays["x"].Values, shifted) || !slices.Equal(arrays["y"].Values, []float64{0, 1}) || !slices.Equal(arrays["y"].Shape, []int{2}) {
		t.Errorf("DecodeNPZ = %+v, %v", arrays, err)
	}
	if _, err := DecodeNPZ(data, "z"); err == nil || !strings.Contains(err.Error(), `no array "z"`) {
		t.Errorf("a missing array: %v", err)
	}
}

// TestEncodeReadByNumPy writes an archive and has NumPy (Debian's
// python3-numpy, which scripts/test.sh installs) read it back.
func TestEncodeReadByNumPy(t *testing.T) {
	data, err := EncodeNPZ([]string{"a", "b"}, map[string]Array{
		"a": {Shape: []int{2, 3}, Values: shifted}, "b": {Shape: []int{1}, Values: []float64{0.1}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ab.npz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "-c",
		"import numpy as np, sys; z = np.load(sys.argv[1]); print(z['a'].shape, z['a'].dtype, z['a'].tolist(), repr(z['b'][0]))", path).CombinedOutput()
	if want := "(2, 3) float64 [[-2.0, -1.0, 0.0], [1.0, 2.0, 3.0]] np.float64(0.1)\n"; err != nil || string(out) != want && string(out) != strings.Replace(want, "np.float64(0.1)", "0.1", 1) {
		t.Errorf("NumPy read %q (%v), want %q", out, err, want)
	}
	// And back: what Encode writes, Decode reads.
	a, err := Decode(Encode(Array{Shape: []int{3}, Values: []float64{1, 2, 3}}))
	if err != nil || !slices.Equal(a.Shape, []int{3}) || !slices.Equal(a.Values, []float64{1, 2, 3}) {
		t.Errorf("Decode(Encode) = %+v, %v", a, err)
	}
}

// withHeader is an .npy file with the given header and body.
func withHeader(header string, body []byte) []byte {
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	return append(append(out, header...), body...)
}

// TestDecodeErrors checks that damaged and hostile arrays are refused,
// saying what is wrong.
func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"pickled objects", withHeader("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", nil), `dtype "|O"`},
		{"complex numbers", withHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n", nil), `dtype "<c8"`},
		{"shape larger than the data", withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000,), }\n", make([]byte, 16)), "holds 8000000000 bytes"},
		{"overflowing shape", withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (2000000000, 2000000000), }\n", nil), "too many values"},
		{"not an array", []byte("hello, world"), "not an .npy array"},
		{"header past the end", []byte("\x93NUMPY\x01\x00\xff\xff{"), "runs past"},
		{"version 4", []byte("\x93NUMPY\x04\x00\x00\x00"), "format version 4.0"},
		{"no shape", withHeader("{'descr': '<f8', 'fortran_order': False}\n", nil), "want descr, fortran_order and shape"},
	} {
		if _, err := Decode(tc.raw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecode: any bytes give an array whose values fill its shape, or an
// error; never a panic or an allocation beyond the file's size.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"ints-i2-be.npy", "floats-f4.npy"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := Decode(raw)
		if err != nil {
			return
		}
		n := 1
		for _, d := range a.Shape {
			n *= d
		}
		if n != len(a.Values) || len(a.Values) > len(raw) {
			t.Errorf("shape %v with %d values from %d bytes", a.Shape, len(a.Values), len(raw))
		}
		if !bytes.HasPrefix(raw, []byte("\x93NUMPY")) {
			t.Errorf("decoded a file without the magic")
		}
	})
}
