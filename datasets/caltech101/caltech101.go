// Package caltech101 loads Caltech-101 Silhouettes at 28×28 (Marlin et al.
// 2010; https://people.cs.umass.edu/~marlin/data.shtml), the binary image
// set that VampPrior (Tomczak & Welling 2018) and Grathwohl et al. 2021
// ("Oops I took a gradient") train on, from Benjamin Marlin's MATLAB file
// caltech101_silhouettes_28_split1.mat with datasets/matfile.
package caltech101

import (
	"fmt"
	"math"

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
func Load(dir, splitName string) (*datasets.Images, error) { return files.Load(dir, splitName) }

// files is caltech101_silhouettes_28_split1.mat, the three splits in one file.
var files = matfile.ImageFiles{
	Set:    "caltech101",
	Splits: []string{"train", "val", "test"},
	File:   func(string) string { return File },
	HowToGet: func(file, dir string) string {
		return fmt.Sprintf("get %s, Caltech-101 Silhouettes 28×28, from Benjamin Marlin's page https://people.cs.umass.edu/~marlin/data.shtml and put it in %s", file, dir)
	},
	Build: func(arrays map[string]*matfile.Array, split string) (*datasets.Images, error) {
		return fromArrays(arrays, splits[split])
	},
}

// fromArrays builds the image set of split s from the file's variables.
func fromArrays(arrays map[string]*matfile.Array, s split) (*datasets.Images, error) {
	xy, err := matfile.Variables(arrays, matfile.Wanted{Name: s.data, Holds: "N×784 images in [0, 1]"},
		matfile.Wanted{Name: s.labels, Holds: fmt.Sprintf("N labels 1 to %d", Classes)})
	if err != nil {
		return nil, err
	}
	x, y := xy[0], xy[1]
	pixels, n, err := matfile.GreyImages(x, s.data, Side, true, true) // the file's black silhouettes on white, inverted
	if err != nil {
		return nil, err
	}
	im := &datasets.Images{N: n, Height: Side, Width: Side, Channels: 1, Pixels: pixels}

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
