package omniglot

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mw "github.com/edlebm/edlebm/internal/matwrite"
	"github.com/edlebm/edlebm/internal/testutil"
)

// The tests write chardata.mat files with internal/matwrite, an encoder of
// the format independent of the reader (datasets/matfile), and read one
// written by scipy.io.savemat (testdata/scipy_fixture.py).

var le, be = mw.LittleEndian, mw.BigEndian

// grey is the value of pixel (row r, column c) of test image n, upright (row
// 0 at the top): a ramp that a transposition or a flip changes (3r + 5c is
// not symmetric), in sixteenths so that 2v − 1 is exact in float32.
func grey(n, r, c int) float64 {
	return float64((n*7+r*3+c*5)%17) / 16
}

// binary is a 0/1 test image: 1 where grey is at least ½.
func binary(n, r, c int) float64 {
	if grey(n, r, c) >= 0.5 {
		return 1
	}
	return 0
}

// images returns n test images as chardata.mat stores them: a 784×n array,
// one image per column, each column the image in MATLAB's column-major order
// (reshape(data(:, i), 28, 28) is the image), so within a column the row
// index varies fastest.
func images(name string, n int, pixel func(n, r, c int) float64) mw.Variable {
	return mw.GreyImages(name, n, Side, false, pixel)
}

// onehot returns the K×N one-hot alphabet variable of the labels.
func onehot(name string, k int, labels []int) mw.Variable {
	values := make([]float64, k*len(labels))
	for i, a := range labels {
		values[i*k+a] = 1 // column i, row a
	}
	return mw.Double(name, []int32{int32(k), int32(len(labels))}, values)
}

func TestLoad(t *testing.T) {
	asBytes := images("data", 3, binary)
	asBytes.Type = mw.MiUINT8 // as MATLAB stores doubles that are all small integers
	asSingles := images("testdata", 2, grey)
	asSingles.Type = mw.MiSINGLE
	char := mw.Variable{Name: "note", Class: mw.MxCHAR, Dims: []int32{1, 2}, Type: mw.MiUINT16, Values: []float64{'h', 'i'}}
	tests := []struct {
		name   string
		split  string
		file   []byte
		n      int
		pixel  func(n, r, c int) float64
		labels []int // nil: no labels
	}{
		{"train, plain", "train", le.File([]mw.Variable{images("data", 3, grey), onehot("target", 5, []int{3, 0, 4})}),
			3, grey, []int{3, 0, 4}},
		{"test, compressed", "test", le.File([]mw.Variable{images("data", 1, binary), images("testdata", 2, grey), onehot("testtarget", 50, []int{49, 0})}, 0, 1, 2),
			2, grey, []int{49, 0}},
		{"train, big-endian, images compressed", "train", be.File([]mw.Variable{onehot("target", 2, []int{1, 1, 0}), images("data", 3, grey)}, 1),
			3, grey, []int{1, 1, 0}},
		{"train, 0/1 stored as bytes, no target", "train", le.File([]mw.Variable{char, asBytes}, 1),
			3, binary, nil},
		{"test, stored as singles, other variables skipped", "test", be.File([]mw.Variable{asSingles, char, onehot("target", 3, []int{0})}, 0),
			2, grey, nil},
		// Columns [0 1 1], [0 0 0] and [0.2 0.5 0.1]: the first largest, as np.argmax.
		{"target not one-hot", "train", le.File([]mw.Variable{images("data", 3, grey), mw.Double("target", []int32{3, 3}, []float64{0, 1, 1, 0, 0, 0, 0.2, 0.5, 0.1})}),
			3, grey, []int{1, 0, 1}},
		{"one image", "train", le.File([]mw.Variable{images("data", 1, grey), onehot("target", 1, []int{0})}),
			1, grey, []int{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			im, err := Load(testutil.WriteInTempDir(t, File, tc.file), tc.split)
			if err != nil {
				t.Fatal(err)
			}
			testutil.AssertGreyImages(t, im, "omniglot/"+tc.split, tc.n, Side, tc.labels, func(n, r, c int) float32 {
				return float32(2*tc.pixel(n, r, c) - 1)
			})
		})
	}
}

// TestLoadScipyFixture loads a file written by scipy.io.savemat and checks
// each split against the images the published code (VampPrior's
// reshape_data, run by numpy in testdata/scipy_fixture.py) makes of the
// same file, stored in it as expected_<split>, N×784, each row a row-major
// image; and the alphabets against the one-hot targets.
func TestLoadScipyFixture(t *testing.T) {
	testutil.AssertScipyImageFixture(t, filepath.Join("testdata", "scipy"), File, Load, map[string][]int{"train": {3, 0, 4}, "test": {1, 2}})
}

func TestLoadErrors(t *testing.T) {
	data := images("data", 3, grey)
	target := onehot("target", 5, []int{3, 0, 4})
	with := func(i int, v float64) mw.Variable {
		bad := images("data", 3, grey)
		bad.Values = slices.Clone(bad.Values)
		bad.Values[i] = v
		return bad
	}
	transposed := data
	transposed.Dims = []int32{3, 784}
	hdf5 := le.Header()
	hdf5[124], hdf5[125] = 0x00, 0x02 // version 0x0200, little-endian
	tests := []struct {
		name  string
		file  []byte // nil: no file
		split string
		want  []string
	}{
		{"missing file", nil, "train", []string{"omniglot: ", "chardata.mat does not exist", "https://github.com/yburda/iwae", "datasets/OMNIGLOT/chardata.mat"}},
		{"unknown split", le.File([]mw.Variable{data}), "val", []string{`omniglot: split "val", want "train" or "test"`}},
		{"no images for the split", le.File([]mw.Variable{data, target}), "test", []string{"chardata.mat: ", `want numeric variables "testdata" (784×N images in [0, 1])`, `found ["data" "target"]`}},
		{"transposed", le.File([]mw.Variable{transposed}), "train", []string{`variable "data" has dimensions [3 784], want [784 N]`}},
		{"negative value", le.File([]mw.Variable{with(0, -0.25)}, 0), "train", []string{"value -0.25 at data(1, 1), pixel (row 0, column 0) of image 0"}},
		{"target for other images", le.File([]mw.Variable{data, onehot("target", 5, []int{1, 2})}), "train", []string{`variable "target" has dimensions [5 2], want [K 3]`}},
		{"target a row", le.File([]mw.Variable{data, mw.Double("target", []int32{1, 1, 3}, []float64{0, 1, 2})}), "train", []string{`variable "target" has dimensions [1 1 3]`}},
		{"truncated file", le.File([]mw.Variable{data, target})[:5000], "train", []string{"omniglot: ", "chardata.mat: data element at byte 128: truncated matrix"}},
		{"MATLAB 7.3 (HDF5) file", hdf5, "train", []string{"chardata.mat: ", "MATLAB 7.3 (HDF5) file"}},
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
