package matfile

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/edlebm/edlebm/datasets"
)

// ImageFiles is a data set of images kept in MAT-files, a file (or a set
// of variables) per split, as SVHN, Omniglot 28×28 and Caltech-101
// Silhouettes are published: what Load needs to find a split and build
// its images.
type ImageFiles struct {
	// Set names the data set: Load's errors begin "Set: ", and a split's
	// images are named "Set/split".
	Set string
	// Splits are the split names, in the order an error lists them.
	Splits []string
	// File is the name of the file holding a split, in the data folder.
	File func(split string) string
	// HowToGet finishes the sentence "PATH does not exist: " for a
	// missing file: where to get it and where to put it.
	HowToGet func(file, dir string) string
	// Build makes a split's images from its file's numeric variables.
	Build func(arrays map[string]*Array, split string) (*datasets.Images, error)
}

// Load reads split of the data set from its file in dir, builds its
// images, names them and validates them. Every error begins with the set's
// name, and names the file where it has one.
func (f ImageFiles) Load(dir, split string) (*datasets.Images, error) {
	if !slices.Contains(f.Splits, split) {
		return nil, fmt.Errorf("%s: split %q, want %s", f.Set, split, quotedChoice(f.Splits))
	}
	name := f.File(split)
	path := filepath.Join(dir, name)
	arrays, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %s does not exist: %s", f.Set, path, f.HowToGet(name, dir))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Set, err)
	}
	im, err := f.Build(arrays, split)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", f.Set, path, err)
	}
	im.Name = f.Set + "/" + split
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", f.Set, path, err)
	}
	return im, nil
}

// quotedChoice is `"a", "b" or "c"`.
func quotedChoice(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	if len(quoted) == 1 {
		return quoted[0]
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// Wanted is a numeric variable a file must hold, and what it holds, for
// the error when it is missing ("784×N images in [0, 1]").
type Wanted struct{ Name, Holds string }

// Variables returns the arrays named by want, in order, or an error
// listing what was wanted and what the file holds.
func Variables(arrays map[string]*Array, want ...Wanted) ([]*Array, error) {
	out := make([]*Array, len(want))
	missing := false
	described := make([]string, len(want))
	for i, w := range want {
		out[i] = arrays[w.Name]
		missing = missing || out[i] == nil
		described[i] = fmt.Sprintf("%q (%s)", w.Name, w.Holds)
	}
	if missing {
		return nil, fmt.Errorf("want numeric variables %s; found %q", strings.Join(described, " and "), slices.Sorted(maps.Keys(arrays)))
	}
	return out, nil
}

// GreyImages reads square side×side grey images from the 2-D array x
// (variable name), one image per column (side²×N; perRow false) or per
// row (N×side²), each image's side² values in MATLAB's column-major order
// (reshape(v, side, side) is the image: pixel (row r, column c) is value
// r + side·c), values in [0, 1] mapped to [−1, 1] by 2v − 1, or by 1 − 2v
// when invert. It returns the images row-major, image by image. An error
// names the variable, the dimensions it wants, or a value outside [0, 1]
// (NaN included) by MATLAB's 1-based index and its image's pixel.
func GreyImages(x *Array, name string, side int, perRow, invert bool) (pixels []float32, n int, err error) {
	size := side * side
	imageAxis, want, per := 1, fmt.Sprintf("[%d N]", size), "column"
	if perRow {
		imageAxis, want, per = 0, fmt.Sprintf("[N %d]", size), "row"
	}
	if len(x.Dims) != 2 || x.Dims[1-imageAxis] != size || x.Dims[imageAxis] < 1 {
		return nil, 0, fmt.Errorf("variable %q has dimensions %v, want %s: one %d×%d image per %s", name, x.Dims, want, side, side, per)
	}
	n = x.Dims[imageAxis]
	values := x.Float64s()
	pixels = make([]float32, n*size)
	for i := range n {
		image := pixels[i*size : (i+1)*size]
		for r := range side {
			for c := range side {
				k := r + side*c // the value's place in the image's column-major order
				at, index := i*size+k, [2]int{k + 1, i + 1}
				if perRow {
					at, index = i+n*k, [2]int{i + 1, k + 1} // x(i, k) in the array's column-major order
				}
				v := values[at]
				if !(v >= 0 && v <= 1) { // the negated test also catches NaN
					return nil, 0, fmt.Errorf("variable %q: value %v at %s(%d, %d), pixel (row %d, column %d) of image %d counting from 0, want a value in [0, 1]",
						name, v, name, index[0], index[1], r, c, i)
				}
				if invert {
					image[r*side+c] = float32(1 - 2*v)
				} else {
					image[r*side+c] = float32(2*v - 1)
				}
			}
		}
	}
	return pixels, n, nil
}
