package caltech101

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mw "github.com/edlebm/edlebm/internal/matwrite"
	"github.com/edlebm/edlebm/internal/testutil"
)

// The tests write caltech101_silhouettes_28_split1.mat files with
// internal/matwrite, an encoder of the format independent of the reader
// (datasets/matfile), and read one written by scipy.io.savemat
// (testdata/scipy_fixture.py).

var le, be = mw.LittleEndian, mw.BigEndian

// shape is 1 inside silhouette n at pixel (row r, column c), upright (row 0
// at the top), else 0: a right triangle with its right angle at the bottom
// left, which a transposition or a flip moves, shifted right by n columns.
func shape(n, r, c int) float64 {
	if c-n >= 2 && r <= 25 && r-2 >= c-n {
		return 1
	}
	return 0
}

// grey is a non-binary test image in sixteenths (exact in float32), which
// Load must accept and invert like the 0s and 1s of the published file.
func grey(n, r, c int) float64 {
	return float64((n*7+r*3+c*5)%17) / 16
}

// file returns n test images as the file stores them: an n×784 array, one
// image per row, each row the image in MATLAB's column-major order
// (reshape(train_data(i, :), 28, 28) is the image), drawn black (0) on white
// (1). The array itself is column-major: the image index varies fastest.
func file(name string, n int, pixel func(n, r, c int) float64) mw.Variable {
	return mw.GreyImages(name, n, Side, true, func(i, r, c int) float64 { return 1 - pixel(i, r, c) })
}

// classes returns an N×1 labels variable of the class numbers.
func classes(name string, numbers ...float64) mw.Variable {
	return mw.Double(name, []int32{int32(len(numbers)), 1}, numbers)
}

func TestLoad(t *testing.T) {
	asBytes := file("test_data", 2, shape)
	asBytes.Type = mw.MiUINT8 // as MATLAB stores doubles that are all small integers
	byteLabels := classes("test_labels", 101, 1)
	byteLabels.Type = mw.MiUINT8
	names := mw.Variable{Name: "classnames", Class: mw.MxCHAR, Dims: []int32{1, 3}, Type: mw.MiUINT16, Values: []float64{'a', 'n', 't'}}
	all := []mw.Variable{
		file("train_data", 3, shape), classes("train_labels", 1, 101, 17),
		file("val_data", 2, grey), classes("val_labels", 50, 2),
		asBytes, byteLabels, names,
	}
	tests := []struct {
		name   string
		split  string
		file   []byte
		n      int
		pixel  func(n, r, c int) float64
		labels []int
	}{
		{"train, plain", "train", le.File(all), 3, shape, []int{0, 100, 16}},
		{"val, compressed, grey values", "val", le.File(all, 0, 1, 2, 3, 4, 5, 6), 2, grey, []int{49, 1}},
		{"test, big-endian, stored as bytes", "test", be.File(all, 4), 2, shape, []int{100, 0}},
		{"train alone, labels compressed", "train", be.File(all[:2], 1), 3, shape, []int{0, 100, 16}},
		{"one image", "test", le.File([]mw.Variable{classes("test_labels", 7), file("test_data", 1, grey)}), 1, grey, []int{6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			im, err := Load(testutil.WriteInTempDir(t, File, tc.file), tc.split)
			if err != nil {
				t.Fatal(err)
			}
			// The silhouette (1 before the file's inversion) is +1.
			testutil.AssertGreyImages(t, im, "caltech101/"+tc.split, tc.n, Side, tc.labels, func(n, r, c int) float32 {
				return float32(2*tc.pixel(n, r, c) - 1)
			})
		})
	}
}

// TestLoadScipyFixture loads a file written by scipy.io.savemat and checks
// each split against the images the published code (VampPrior's
// 1 − reshape_data(...), run by numpy in testdata/scipy_fixture.py) makes of
// the same file, stored in it as expected_<split>, N×784, each row a
// row-major image; and the labels against the file's class numbers.
func TestLoadScipyFixture(t *testing.T) {
	testutil.AssertScipyImageFixture(t, filepath.Join("testdata", "scipy"), File, Load, map[string][]int{"train": {0, 100, 16}, "val": {49, 1}, "test": {6}})
}

func TestLoadErrors(t *testing.T) {
	data, labels := file("train_data", 3, shape), classes("train_labels", 1, 2, 3)
	with := func(i int, v float64) mw.Variable {
		bad := file("train_data", 3, shape)
		bad.Values = slices.Clone(bad.Values)
		bad.Values[i] = v
		return bad
	}
	transposed := data
	transposed.Dims = []int32{784, 3}
	tests := []struct {
		name  string
		file  []byte // nil: no file
		split string
		want  []string
	}{
		{"missing file", nil, "train", []string{"caltech101: ", "caltech101_silhouettes_28_split1.mat does not exist", "https://people.cs.umass.edu/~marlin/data.shtml"}},
		{"unknown split", le.File([]mw.Variable{data, labels}), "valid", []string{`caltech101: split "valid", want "train", "val" or "test"`}},
		{"no images for the split", le.File([]mw.Variable{data, labels}), "test", []string{"split1.mat: ", `want numeric variables "test_data"`, `and "test_labels"`, `found ["train_data" "train_labels"]`}},
		{"no labels", le.File([]mw.Variable{data}), "train", []string{`"train_labels" (N labels 1 to 101); found ["train_data"]`}},
		{"transposed", le.File([]mw.Variable{transposed, labels}), "train", []string{`variable "train_data" has dimensions [784 3], want [N 784]`}},
		{"value 2", le.File([]mw.Variable{with(1+3*29, 2), labels}, 0), "train", []string{`variable "train_data": value 2 at train_data(2, 30), pixel (row 1, column 1) of image 1`, "want a value in [0, 1]"}},
		{"too few labels", le.File([]mw.Variable{data, classes("train_labels", 1, 2)}), "train", []string{`variable "train_labels" has 2 values (dimensions [2 1]), want one per image of "train_data", 3`}},
		{"label 0", le.File([]mw.Variable{data, classes("train_labels", 1, 0, 3)}), "train", []string{`variable "train_labels": label 0 of image 1, want a class number from 1 to 101`}},
		{"label 102", le.File([]mw.Variable{data, classes("train_labels", 1, 2, 102)}), "train", []string{"label 102 of image 2"}},
		{"fractional label", le.File([]mw.Variable{data, classes("train_labels", 1.5, 2, 3)}), "train", []string{"label 1.5 of image 0"}},
		{"truncated file", le.File([]mw.Variable{data, labels})[:3000], "train", []string{"caltech101: ", "split1.mat: data element at byte 128: truncated matrix"}},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		if tc.file != nil {
			dir = testutil.WriteInTempDir(t, File, tc.file)
		}
		_, err := Load(dir, tc.split)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Load error %v, want one containing %q", tc.name, err, want)
			}
		}
	}
}
