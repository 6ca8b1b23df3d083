// Package svhn loads the cropped-digits version of the Street View House
// Numbers data set (SVHN, http://ufldl.stanford.edu/housenumbers/) from its
// MATLAB files train_32x32.mat, test_32x32.mat and extra_32x32.mat, read
// with datasets/matfile.
package svhn

import (
	"fmt"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/matfile"
)

// Files maps each split to its file name in the official distribution.
var Files = map[string]string{
	"train": "train_32x32.mat", // 73,257 images
	"test":  "test_32x32.mat",  // 26,032 images
	"extra": "extra_32x32.mat", // 531,131 easier images
}

// Load reads split "train", "test" or "extra" of SVHN from dir/<Files[split]>.
//
// The file holds X, uint8 [height, width, 3, N] (MATLAB stores it
// column-major; a single image may be stored as [height, width, 3]), and y,
// N labels from 1 to 10 stored as uint8 or double, where 10 stands for the
// digit 0. Load returns the images NHWC with pixels scaled to [-1, 1] as
// x/255·2 − 1 and labels 0–9 (10 becomes 0); the set is named "svhn/<split>".
// The extra split needs about 8 GB of memory.
func Load(dir, split string) (*datasets.Images, error) { return files.Load(dir, split) }

// files is SVHN's cropped digits, a file per split.
var files = matfile.ImageFiles{
	Set:    "svhn",
	Splits: []string{"train", "test", "extra"},
	File:   func(split string) string { return Files[split] },
	HowToGet: func(file, _ string) string {
		return fmt.Sprintf("download it from http://ufldl.stanford.edu/housenumbers/%s (package datasets/download fetches and verifies it)", file)
	},
	Build: func(arrays map[string]*matfile.Array, _ string) (*datasets.Images, error) { return fromArrays(arrays) },
}

// fromArrays builds the image set from the file's variables X and y.
func fromArrays(arrays map[string]*matfile.Array) (*datasets.Images, error) {
	xy, err := matfile.Variables(arrays, matfile.Wanted{Name: "X", Holds: "height×width×3×N bytes"}, matfile.Wanted{Name: "y", Holds: "N labels 1 to 10"})
	if err != nil {
		return nil, err
	}
	x, y := xy[0], xy[1]
	dims := x.Dims
	if len(dims) == 3 {
		dims = []int{dims[0], dims[1], dims[2], 1} // MATLAB drops trailing singleton dimensions
	}
	if len(dims) != 4 || dims[2] != 3 {
		return nil, fmt.Errorf("variable X has dimensions %v, want [height width 3 N]", x.Dims)
	}
	height, width, channels, n := dims[0], dims[1], dims[2], dims[3]
	pixels, err := x.Uint8s()
	if err != nil {
		return nil, err
	}
	labels, err := y.Uint8s()
	if err != nil {
		return nil, err
	}
	if len(labels) != n {
		return nil, fmt.Errorf("variable y has %d values (dimensions %v), want one per image of X, %d", len(labels), y.Dims, n)
	}

	im := &datasets.Images{
		N: n, Height: height, Width: width, Channels: channels,
		Pixels: make([]float32, len(pixels)),
		Labels: make([]int, n),
	}
	for i, l := range labels {
		if l < 1 || l > 10 {
			return nil, fmt.Errorf("variable y: label %d of image %d, want 1 to 10", l, i)
		}
		im.Labels[i] = int(l) % 10
	}
	var scaled [256]float32
	for v := range scaled {
		scaled[v] = float32(float64(v)/255*2 - 1)
	}
	// X(h, w, c, i) is at h + height·(w + width·(c + channels·i)) in MATLAB's
	// column-major order: walk it in that order and scatter into NHWC.
	src := 0
	for i := range n {
		for c := range channels {
			for w := range width {
				for h := range height {
					im.Pixels[((i*height+h)*width+w)*channels+c] = scaled[pixels[src]]
					src++
				}
			}
		}
	}
	return im, nil
}
