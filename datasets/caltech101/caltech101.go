// Package caltech101 loads Caltech-101 Silhouettes at 28×28 (Marlin et al.
// 2010; https://people.cs.umass.edu/~marlin/data.shtml), the binary image
// set that VampPrior (Tomczak & Welling 2018) and Grathwohl et al. 2021
// ("Oops I took a gradient") train on, from Benjamin Marlin's MATLAB file
// caltech101_silhouettes_28_split1.mat with datasets/matfile.
package caltech101

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/matfile"
)

// File is the name of the MATLAB file Load reads.
const File = "caltech101_silhouettes_28_split1.mat"

// Side is the height and width of an image; a row of the file holds
// Side² = 784 values.
const Side = 28

// Classes is the number of object classes; the file numbers them 1 to 101.
const Classes = 101

// split names the variables of File that hold one split.
type split struct{ data, labels string }

var splits = map[string]split{
	"train": {"train_data", "train_labels"}, // 4,100 images
	"val":   {"val_data", "val_labels"},     // 2,264 images
	"test":  {"test_data", "test_labels"},   // 2,307 images
}

// Load reads split "train" (4,100 images), "val" (2,264) or "test" (2,307)
// of dir/caltech101_silhouettes_28_split1.mat: the images from the variable
// <split>_data, an N×784 array of values in [0, 1] (0 and 1 in the published
// file), one image per row, and the labels from <split>_labels, N class
// numbers from 1 to 101.
//
// Orientation and inversion follow the published code that the paper's
// experiments descend from, VampPrior's utils/load_data.py
// (load_caltech101silhouettes) and GWG_release's copy of it in
// vamp_utils.py: x = 1 − reshape_data(train_data), where reshape_data is
// v.reshape(28, 28) followed by reshape((-1, 784), order='F') and the model
// reads the result as row-major 28×28 images. So a row v of the file is the
// image in MATLAB's column-major order, pixel (row r, column c) being value
// r + 28·c, and each value is inverted as there, which makes the silhouette
// 1 and the background 0 (the file stores black silhouettes on white).
// (Some other loaders, e.g. tensorpack's and DeepMind's dm_nevis, reshape
// the row without the transposition and do not invert; Load does not follow
// them.)
//
// Pixels are 1 − v scaled to [−1, 1], i.e. 2(1 − v) − 1 = 1 − 2v: the
// silhouette is +1, the background −1. Labels are the class numbers minus
// one, 0 to 100. The images keep the file's order (VampPrior shuffles the
// training and validation images, and so loses their labels' order). The
// set is named "caltech101/<split>".
func Load(dir, splitName string) (*datasets.Images, error) {
	s, ok := splits[splitName]
	if !ok {
		return nil, fmt.Errorf("caltech101: split %q, want \"train\", \"val\" or \"test\"", splitName)
	}
	path := filepath.Join(dir, File)
	arrays, err := matfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("caltech101: %s does not exist: get %s, Caltech-101 Silhouettes 28×28, from Benjamin Marlin's "+
			"page https://people.cs.umass.edu/~marlin/data.shtml and put it in %s", path, File, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("caltech101: %w", err)
	}
	im, err := fromArrays(arrays, s)
	if err != nil {
		return nil, fmt.Errorf("caltech101: %s: %w", path, err)
	}
	im.Name = "caltech101/" + splitName
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("caltech101: %s: %w", path, err)
	}
	return im, nil
}

// fromArrays builds the image set of split s from the file's variables.
func fromArrays(arrays map[string]*matfile.Array, s split) (*datasets.Images, error) {
	x, y := arrays[s.data], arrays[s.labels]
	if x == nil || y == nil {
		return nil, fmt.Errorf("want numeric variables %q (N×784 images in [0, 1]) and %q (N labels 1 to %d); found %q",
			s.data, s.labels, Classes, slices.Sorted(maps.Keys(arrays)))
	}
	if len(x.Dims) != 2 || x.Dims[1] != Side*Side || x.Dims[0] < 1 {
		return nil, fmt.Errorf("variable %q has dimensions %v, want [N 784]: one 28×28 image per row", s.data, x.Dims)
	}
	n := x.Dims[0]
	values := x.Float64s()
	im := &datasets.Images{N: n, Height: Side, Width: Side, Channels: 1, Pixels: make([]float32, len(values))}
	for i := range n {
		image := im.Pixels[i*Side*Side : (i+1)*Side*Side]
		for r := range Side {
			for c := range Side {
				// x(i, k) with k = r + 28·c is at i + n·k in column-major order.
				v := values[i+n*(r+Side*c)]
				if !(v >= 0 && v <= 1) { // the negated test also catches NaN
					return nil, fmt.Errorf("variable %q: value %v at %s(%d, %d), pixel (row %d, column %d) of image %d counting from 0, want a value in [0, 1]",
						s.data, v, s.data, i+1, r+Side*c+1, r, c, i)
				}
				image[r*Side+c] = float32(1 - 2*v)
			}
		}
	}

	labels := y.Float64s()
	if len(labels) != n {
		return nil, fmt.Errorf("variable %q has %d values (dimensions %v), want one per image of %q, %d", s.labels, len(labels), y.Dims, s.data, n)
	}
	im.Labels = make([]int, n)
	for i, l := range labels {
		if !(l >= 1 && l <= Classes && l == math.Trunc(l)) {
			return nil, fmt.Errorf("variable %q: label %v of image %d, want a class number from 1 to %d", s.labels, l, i, Classes)
		}
		im.Labels[i] = int(l) - 1
	}
	return im, nil
}
