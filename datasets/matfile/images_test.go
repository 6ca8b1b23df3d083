package matfile

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets"
	mw "github.com/edlebm/edlebm/internal/matwrite"
)

// readVariable encodes v with internal/matwrite (independent of this
// reader) and reads it back.
func readVariable(t *testing.T, v mw.Variable) *Array {
	t.Helper()
	arrays, err := ReadMAT(bytes.NewReader(mw.LittleEndian.File([]mw.Variable{v})))
	if err != nil {
		t.Fatal(err)
	}
	return arrays[v.Name]
}

// TestGreyImagesOrientation marks single entries of the MATLAB array by
// hand and checks where they land, for both layouts: x(k, i) of a
// 784×N array (an image per column, Omniglot's) and x(i, k) of an N×784
// one (an image per row, Caltech-101's), 1-based as MATLAB indexes, are
// pixel (row (k−1) mod 28, column ⌊(k−1)/28⌋) of image i−1 — the
// column-major reading of VampPrior's reshape_data. Inverted, the marked
// 0 on a field of 1s comes out +1 and the rest −1.
func TestGreyImagesOrientation(t *testing.T) {
	const side, n = 28, 3
	for _, tc := range []struct {
		i, k     int // 1-based: the image and the value's place in it
		row, col int
	}{
		{1, 1, 0, 0}, {1, 2, 1, 0}, {1, 28, 27, 0}, {1, 29, 0, 1}, {3, 757, 0, 27}, {3, 784, 27, 27}, {2, 30, 1, 1},
	} {
		for _, layout := range []struct {
			perRow, invert bool
		}{{false, false}, {true, true}, {true, false}} {
			field, mark := 0.0, 1.0
			if layout.invert {
				field, mark = 1, 0
			}
			values := slices.Repeat([]float64{field}, n*side*side)
			dims := []int32{side * side, n}
			at := (tc.k - 1) + side*side*(tc.i-1) // x(k, i), column-major
			if layout.perRow {
				dims, at = []int32{n, side * side}, (tc.i-1)+n*(tc.k-1) // x(i, k)
			}
			values[at] = mark
			pixels, got, err := GreyImages(readVariable(t, mw.Double("x", dims, values)), "x", side, layout.perRow, layout.invert)
			if err != nil || got != n {
				t.Fatalf("%+v: %d images, %v", layout, got, err)
			}
			for p, v := range pixels {
				i, r, c := p/(side*side), p%(side*side)/side, p%side
				want := float32(-1)
				if i == tc.i-1 && r == tc.row && c == tc.col {
					want = 1
				}
				if v != want {
					t.Errorf("%+v, value %d of image %d marked: image %d pixel (row %d, column %d) = %v, want %v", layout, tc.k, tc.i, i, r, c, v, want)
				}
			}
		}
	}
}

// TestGreyImagesErrors: dimensions that do not hold images of the side, and
// values outside [0, 1], named by MATLAB's index and the pixel.
func TestGreyImagesErrors(t *testing.T) {
	with := func(dims []int32, at int, v float64) mw.Variable {
		values := make([]float64, int(dims[0])*int(dims[1]))
		values[at] = v
		return mw.Double("x", dims, values)
	}
	for _, tc := range []struct {
		name   string
		v      mw.Variable
		perRow bool
		want   string
	}{
		{"an image per row, given per column", mw.Double("x", []int32{3, 784}, make([]float64, 3*784)), false, `variable "x" has dimensions [3 784], want [784 N]: one 28×28 image per column`},
		{"an image per column, given per row", mw.Double("x", []int32{784, 3}, make([]float64, 3*784)), true, `dimensions [784 3], want [N 784]: one 28×28 image per row`},
		{"783 values", mw.Double("x", []int32{783, 1}, make([]float64, 783)), false, "dimensions [783 1], want [784 N]"},
		{"three dimensions", mw.Double("x", []int32{28, 28, 1}, make([]float64, 784)), false, "dimensions [28 28 1], want [784 N]"},
		{"no images", mw.Double("x", []int32{0, 784}, nil), true, "dimensions [0 784], want [N 784]"},
		{"1.5 per column", with([]int32{784, 2}, 784+29, 1.5), false, `variable "x": value 1.5 at x(30, 2), pixel (row 1, column 1) of image 1 counting from 0, want a value in [0, 1]`},
		{"2 per row", with([]int32{3, 784}, 1+3*29, 2), true, "value 2 at x(2, 30), pixel (row 1, column 1) of image 1"},
		{"−1 at the last", with([]int32{3, 784}, 3*784-1, -1), true, "value -1 at x(3, 784), pixel (row 27, column 27) of image 2"},
		{"NaN", with([]int32{784, 1}, 0, math.NaN()), false, "value NaN at x(1, 1)"},
	} {
		if _, _, err := GreyImages(readVariable(t, tc.v), "x", 28, tc.perRow, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestImageFilesLoad: a split not of the set, a missing file with the way
// to get it, the build's error with the file's path, the set's name on
// every error and on the images.
func TestImageFilesLoad(t *testing.T) {
	dir := t.TempDir()
	good := mw.LittleEndian.File([]mw.Variable{mw.Double("x", []int32{4, 1}, []float64{0, 0.5, 1, 0.25})})
	if err := os.WriteFile(filepath.Join(dir, "a.mat"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	files := ImageFiles{
		Set: "toys", Splits: []string{"a", "b", "c"},
		File:     func(split string) string { return split + ".mat" },
		HowToGet: func(file, dir string) string { return "put " + file + " in " + dir },
		Build: func(arrays map[string]*Array, split string) (*datasets.Images, error) {
			x, err := Variables(arrays, Wanted{"x", "4×N images"})
			if err != nil {
				return nil, err
			}
			pixels, n, err := GreyImages(x[0], "x", 2, false, false)
			return &datasets.Images{N: n, Height: 2, Width: 2, Channels: 1, Pixels: pixels}, err
		},
	}
	im, err := files.Load(dir, "a")
	if err != nil || im.Name != "toys/a" || !slices.Equal(im.Pixels, []float32{-1, 1, 0, -0.5}) {
		t.Errorf("Load: %+v, %v; want toys/a, pixels [-1 1 0 -0.5] (row-major of the column-major 2×2)", im, err)
	}
	for _, tc := range []struct{ split, want string }{
		{"d", `toys: split "d", want "a", "b" or "c"`},
		{"b", "toys: " + filepath.Join(dir, "b.mat") + " does not exist: put b.mat in " + dir},
	} {
		if _, err := files.Load(dir, tc.split); err == nil || err.Error() != tc.want {
			t.Errorf("split %s: error %v, want %q", tc.split, err, tc.want)
		}
	}
	files.Build = func(arrays map[string]*Array, _ string) (*datasets.Images, error) {
		_, err := Variables(arrays, Wanted{"x", "images"}, Wanted{"y", "labels"})
		return nil, err
	}
	want := "toys: " + filepath.Join(dir, "a.mat") + `: want numeric variables "x" (images) and "y" (labels); found ["x"]`
	if _, err := files.Load(dir, "a"); err == nil || err.Error() != want {
		t.Errorf("a missing variable: error %v, want %q", err, want)
	}
}
