package testutil

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/matfile"
)

// AssertScipyImageFixture loads each split of labels from the MAT-file
// file in dir (written by scipy.io.savemat) with load and checks its 28×28
// images against the file's variable expected_<split>, N×784, each row
// an image row-major as the published code reads it (values v in [0, 1],
// pixels 2v − 1), and its labels.
func AssertScipyImageFixture(t *testing.T, dir, file string, load func(dir, split string) (*datasets.Images, error), labels map[string][]int) {
	t.Helper()
	arrays, err := matfile.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	const side = 28
	for split, want := range labels {
		im, err := load(dir, split)
		if err != nil {
			t.Fatal(err)
		}
		expected := arrays["expected_"+split]
		if expected == nil || len(expected.Dims) != 2 || expected.Dims[0] != im.N || expected.Dims[1] != side*side {
			t.Fatalf("%s: expected_%s missing or not %d×784", split, split, im.N)
		}
		values := expected.Float64s()
		for i := range im.N {
			for p := range side * side {
				if got, want := im.Image(i)[p], float32(2*values[i+im.N*p]-1); got != want {
					t.Fatalf("%s image %d pixel (row %d, column %d) = %v, want %v as the published code reads it", split, i, p/side, p%side, got, want)
				}
			}
		}
		if !slices.Equal(im.Labels, want) {
			t.Errorf("%s labels %v, want %v", split, im.Labels, want)
		}
	}
}
