// Package omniglot loads the 28×28 Omniglot data set of Burda et al.'s
// importance-weighted autoencoders (github.com/yburda/iwae,
// datasets/OMNIGLOT/chardata.mat), the version that VampPrior (Tomczak &
// Welling 2018) and Grathwohl et al. 2021 ("Oops I took a gradient") train
// on, from its MATLAB file with datasets/matfile.
package omniglot

import (
	"fmt"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/matfile"
)

// File is the name of the MATLAB file Load reads.
const File = "chardata.mat"

// Side is the height and width of an image; a column of the file holds
// Side² = 784 values.
const Side = 28

// split names the variables of File that hold one split: its images, one
// per column, and the alphabet of each as a one-hot column.
type split struct{ data, target string }

var splits = map[string]split{
	"train": {"data", "target"},         // 24,345 images
	"test":  {"testdata", "testtarget"}, // 8,070 images
}

// Load reads split "train" (variable data, 24,345 images) or "test"
// (testdata, 8,070 images) of dir/chardata.mat.
//
// Each variable is a 784×N array of doubles in [0, 1], one image per column.
// The column is the image in MATLAB's column-major order: pixel (row r,
// column c) is value r + 28·c. This is the orientation of the published
// code, which Load reproduces rather than the naive row-major reading (a
// transposed image): VampPrior's utils/load_data.py (load_omniglot, and
// GWG_release's copy of it in vamp_utils.py, the loader of Grathwohl et al.
// 2021) takes omni_raw['data'].T, i.e. one row v per column, and applies
// reshape_data, v.reshape(28, 28) followed by a Fortran-order
// reshape((-1, 784), order='F'), which puts v[28·j + i] at flat index
// i + 28·j; the model then reads that row as a row-major 28×28 image, whose
// pixel (r, c) at flat index 28·r + c is therefore v[r + 28·c].
//
// Pixels are the file's grey values v scaled to [−1, 1] as 2v − 1, not
// binarized (VampPrior and GWG binarize each training batch afresh). The
// labels are the alphabet of each image, 0 to K−1, from the one-hot K×N
// variable target (testtarget for the test split), taken as the row of each
// column's largest value as the published code does (np.argmax(target,
// axis=0)); they are nil when the file has no such variable. The set is
// named "omniglot/<split>". VampPrior's validation set, the last 1,345 of the
// shuffled training images, is not a split of the file: take it with
// datasets.Images.Subset.
func Load(dir, splitName string) (*datasets.Images, error) { return files.Load(dir, splitName) }

// files is chardata.mat, both splits in one file.
var files = matfile.ImageFiles{
	Set:    "omniglot",
	Splits: []string{"train", "test"},
	File:   func(string) string { return File },
	HowToGet: func(file, dir string) string {
		return fmt.Sprintf("get %s, the 28×28 Omniglot of Burda et al., from https://github.com/yburda/iwae (datasets/OMNIGLOT/%s) and put it in %s", file, file, dir)
	},
	Build: func(arrays map[string]*matfile.Array, split string) (*datasets.Images, error) {
		return fromArrays(arrays, splits[split])
	},
}

// fromArrays builds the image set of split s from the file's variables.
func fromArrays(arrays map[string]*matfile.Array, s split) (*datasets.Images, error) {
	x, err := matfile.Variables(arrays, matfile.Wanted{Name: s.data, Holds: "784×N images in [0, 1]"})
	if err != nil {
		return nil, err
	}
	pixels, n, err := matfile.GreyImages(x[0], s.data, Side, false, false)
	if err != nil {
		return nil, err
	}
	im := &datasets.Images{N: n, Height: Side, Width: Side, Channels: 1, Pixels: pixels}

	t := arrays[s.target]
	if t == nil {
		return im, nil
	}
	if len(t.Dims) != 2 || t.Dims[0] < 1 || t.Dims[1] != n {
		return nil, fmt.Errorf("variable %q has dimensions %v, want [K %d]: a one-hot alphabet column per image of %q", s.target, t.Dims, n, s.data)
	}
	k, onehot := t.Dims[0], t.Float64s()
	im.Labels = make([]int, n)
	for i := range n {
		column := onehot[i*k : (i+1)*k]
		for a, v := range column {
			if v > column[im.Labels[i]] {
				im.Labels[i] = a
			}
		}
	}
	return im, nil
}
