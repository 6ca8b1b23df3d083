package svhn

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/matfile"
	mw "github.com/edlebm/edlebm/internal/matwrite"
	"github.com/edlebm/edlebm/internal/testutil"
)

// The tests write MAT-files with internal/matwrite, an encoder of the
// format independent of the reader (datasets/matfile).

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
func testX(n int, class byte, typ uint32) mw.Variable {
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
	return mw.Variable{Name: "X", Class: class, Dims: dims, Type: typ, Values: values}
}

// testY returns the y variable of n labels, class double as in SVHN.
func testY(labels []float64, typ uint32) mw.Variable {
	return mw.Variable{Name: "y", Class: mw.MxDOUBLE, Dims: []int32{int32(len(labels)), 1}, Type: typ, Values: labels}
}

var le, be = mw.LittleEndian, mw.BigEndian

func TestLoad(t *testing.T) {
	labels := []float64{10, 1, 5, 9}
	wantLabels := []int{0, 1, 5, 9}
	char := mw.Variable{Name: "note", Class: mw.MxCHAR, Dims: []int32{1, 2}, Type: mw.MiUINT16, Values: []float64{'h', 'i'}}
	complexY := mw.Variable{Name: "z", Class: mw.MxDOUBLE, Flags: mw.FlagComplex, Dims: []int32{1, 1}, Type: mw.MiDOUBLE, Values: []float64{1}, Imaginary: true}
	tests := []struct {
		name  string
		split string
		n     int
		file  []byte
	}{
		{"plain, y stored as uint8", "train", 4,
			le.File([]mw.Variable{testX(4, mw.MxUINT8, mw.MiUINT8), testY(labels, mw.MiUINT8)})},
		{"compressed, y stored as double", "test", 4,
			le.File([]mw.Variable{testX(4, mw.MxUINT8, mw.MiUINT8), testY(labels, mw.MiDOUBLE)}, 0, 1)},
		{"big-endian, y compressed", "extra", 4,
			be.File([]mw.Variable{testX(4, mw.MxUINT8, mw.MiUINT8), testY(labels, mw.MiDOUBLE)}, 1)},
		{"y first, X as double", "train", 4,
			le.File([]mw.Variable{testY(labels, mw.MiDOUBLE), testX(4, mw.MxDOUBLE, mw.MiDOUBLE)}, 1)},
		{"other variables skipped", "test", 4,
			le.File([]mw.Variable{char, testX(4, mw.MxUINT8, mw.MiUINT8), complexY, testY(labels, mw.MiUINT8)}, 0, 2)},
		{"one image, y stored in the tag", "train", 1,
			be.File([]mw.Variable{testX(1, mw.MxUINT8, mw.MiUINT8), testY(labels[:1], mw.MiUINT8)}, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			im, err := Load(testutil.WriteInTempDir(t, Files[tc.split], tc.file), tc.split)
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

// TestLoadScipyFiles loads files written by scipy.io.savemat, a MAT-file
// writer independent of the reader and of internal/matwrite: the test data
// set plus a char array, a cell, a struct and a complex array, which Load
// must ignore. The files are the reader's fixtures, kept beside it
// (../matfile/testdata/scipy_fixtures.py writes them).
func TestLoadScipyFiles(t *testing.T) {
	for _, dir := range []string{"../matfile/testdata/scipy-plain", "../matfile/testdata/scipy-compressed"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
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

func TestLoadErrors(t *testing.T) {
	labels := []float64{10, 1, 5, 9}
	x, y := testX(4, mw.MxUINT8, mw.MiUINT8), testY(labels, mw.MiUINT8)
	xRGBA := x
	xRGBA.Dims = []int32{testH, testW, 4, 3}
	tests := []struct {
		name string
		file []byte // nil: no file
		want []string
	}{
		{"missing file", nil, []string{"train_32x32.mat does not exist", "http://ufldl.stanford.edu/housenumbers/train_32x32.mat"}},
		{"no y", le.File([]mw.Variable{x}), []string{"train_32x32.mat", `want numeric variables "X" (height×width×3×N bytes) and "y" (N labels 1 to 10); found ["X"]`}},
		{"too few labels", le.File([]mw.Variable{x, testY(labels[:3], mw.MiUINT8)}), []string{"variable y has 3 values", "want one per image of X, 4"}},
		{"label 0", le.File([]mw.Variable{x, testY([]float64{10, 0, 1, 2}, mw.MiUINT8)}), []string{"label 0 of image 1, want 1 to 10"}},
		{"label 11", le.File([]mw.Variable{x, testY([]float64{1, 2, 11, 2}, mw.MiDOUBLE)}), []string{"label 11 of image 2"}},
		{"fractional label", le.File([]mw.Variable{x, testY([]float64{1, 2.5, 3, 4}, mw.MiDOUBLE)}), []string{`variable "y": value 2.5 at index 1`}},
		{"four channels", le.File([]mw.Variable{xRGBA, y}), []string{"variable X has dimensions [2 3 4 3], want [height width 3 N]"}},
		{"no images", le.File([]mw.Variable{testY(nil, mw.MiUINT8), {Name: "X", Class: mw.MxUINT8, Dims: []int32{testH, testW, testC, 0}, Type: mw.MiUINT8}}),
			[]string{"train_32x32.mat", "want all positive"}},
		{"corrupt file", le.File([]mw.Variable{x, y})[:300], []string{"svhn: ", "train_32x32.mat: data element at byte"}},
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

// TestLoadTruncated checks that no proper prefix of a valid file loads: a
// cut inside an element is a decoding error, and one between elements
// leaves X or y missing.
func TestLoadTruncated(t *testing.T) {
	vars := []mw.Variable{testX(4, mw.MxUINT8, mw.MiUINT8), testY([]float64{10, 1, 5, 9}, mw.MiDOUBLE)}
	for _, file := range [][]byte{le.File(vars), be.File(vars, 0, 1)} {
		if _, err := readFile(file); err != nil {
			t.Fatal(err)
		}
		for cut := range len(file) {
			if _, err := readFile(file[:cut]); err == nil {
				t.Errorf("file cut to %d of %d bytes: no error", cut, len(file))
			}
		}
	}
}

// readFile decodes an SVHN file held in memory.
func readFile(file []byte) (any, error) {
	arrays, err := matfile.ReadMAT(bytes.NewReader(file))
	if err != nil {
		return nil, err
	}
	return fromArrays(arrays)
}
