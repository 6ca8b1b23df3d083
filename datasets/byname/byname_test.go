package byname

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/caltech101"
	"github.com/edlebm/edlebm/datasets/celeba"
	"github.com/edlebm/edlebm/datasets/omniglot"
	mw "github.com/edlebm/edlebm/internal/matwrite"
	"github.com/edlebm/edlebm/internal/testutil"
)

// TestLoadDispatches checks that Load hands each name to its own loader with
// the split: on an empty folder each error names the file that loader reads
// for the split asked (so also the split reached it), and an unknown name is
// refused, naming it and the names Load knows.
func TestLoadDispatches(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, split string
		want        []string
	}{
		{"fashion-mnist", "train", []string{"mnist: ", "train-images-idx3-ubyte.gz"}},
		{"mnist", "test", []string{"mnist: ", "t10k-images-idx3-ubyte.gz"}},
		{"svhn", "test", []string{"svhn: ", "test_32x32.mat does not exist"}},
		{"cifar10", "test", []string{"cifar10: ", "test_batch.bin does not exist"}},
		{"celeba64", "train", []string{"celeba: ", "list_eval_partition.txt is missing"}},
		{"celeba128", "test", []string{"celeba: ", "list_eval_partition.txt is missing"}},
		{"omniglot", "test", []string{"omniglot: ", "chardata.mat does not exist"}},
		{"caltech101", "val", []string{"caltech101: ", "caltech101_silhouettes_28_split1.mat does not exist"}},
		{"celeba", "train", []string{`data set "celeba": no loader`, "[fashion-mnist mnist svhn cifar10 celeba64 celeba128 omniglot caltech101]"}},
		{"", "train", []string{`data set "": no loader`}},
	}
	for _, tc := range tests {
		im, err := Load(tc.name, dir, tc.split, 0)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Load(%q, empty folder, %q) = %v, error %v; want an error containing %q", tc.name, tc.split, im, err, want)
			}
		}
	}
}

// TestLoadReadsFixtures checks Load end to end on tiny data sets written in
// each loader's format: both MNIST names read the IDX files of the folder,
// the CelebA names read the folder at their own image size (64 or 128),
// the training split defaulting to the 40,000-image subset (too many for a
// 3-image folder) unless a positive limit is given, and omniglot and
// caltech101 read their MAT-files, the split reaching the loader.
func TestLoadReadsFixtures(t *testing.T) {
	mnistDir := filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(mnistDir, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.WriteBlankIDX(t, filepath.Join(mnistDir, "t10k-images-idx3-ubyte"), 5, 4, 3)
	testutil.WriteBlankIDX(t, filepath.Join(mnistDir, "t10k-labels-idx1-ubyte"), 5)
	celebaDir := t.TempDir()
	testutil.WriteCelebA(t, celebaDir, 3, 2, nil, nil) // 2 training images, 1 test image
	matDir := t.TempDir()
	omniglotFile := mw.LittleEndian.File([]mw.Variable{
		mw.Double("data", []int32{784, 2}, make([]float64, 2*784)),
		mw.Double("testdata", []int32{784, 3}, make([]float64, 3*784)),
	})
	caltechFile := mw.LittleEndian.File([]mw.Variable{
		mw.Double("val_data", []int32{4, 784}, make([]float64, 4*784)),
		mw.Double("val_labels", []int32{4, 1}, []float64{1, 2, 3, 4}),
	}, 0)
	for name, file := range map[string][]byte{omniglot.File: omniglotFile, caltech101.File: caltechFile} {
		if err := os.WriteFile(filepath.Join(matDir, name), file, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name, dir, split string
		limit            int
		wantName         string
		wantShape        []int
		wantErr          string // non-empty: the error Load must return
	}{
		{"fashion-mnist", mnistDir, "test", 0, "tiny/test", []int{5, 4, 3, 1}, ""},
		{"mnist", mnistDir, "test", 0, "tiny/test", []int{5, 4, 3, 1}, ""},
		{"celeba64", celebaDir, "train", 2, "celeba64/train", []int{2, 64, 64, 3}, ""},
		{"celeba128", celebaDir, "train", 1, "celeba128/train", []int{1, 128, 128, 3}, ""},
		{"celeba128", celebaDir, "test", 0, "celeba128/test", []int{1, 128, 128, 3}, ""},
		{"omniglot", matDir, "train", 0, "omniglot/train", []int{2, 28, 28, 1}, ""},
		{"omniglot", matDir, "test", 0, "omniglot/test", []int{3, 28, 28, 1}, ""},
		{"caltech101", matDir, "val", 0, "caltech101/val", []int{4, 28, 28, 1}, ""},
		{"caltech101", matDir, "train", 0, "", nil, `want numeric variables "train_data"`},
		{"celeba64", celebaDir, "train", 0, "", nil, "fewer than the 40000 requested"},
		{"celeba64", celebaDir, "train", -1, "", nil, "fewer than the 40000 requested"},
	}
	for _, tc := range tests {
		im, err := Load(tc.name, tc.dir, tc.split, tc.limit)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Load(%q, %q, limit %d): error %v, want one containing %q", tc.name, tc.split, tc.limit, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Load(%q, %q, limit %d): %v", tc.name, tc.split, tc.limit, err)
			continue
		}
		if im.Name != tc.wantName || !slices.Equal(im.Shape(), tc.wantShape) {
			t.Errorf("Load(%q, %q, limit %d): name %q shape %v, want %q %v", tc.name, tc.split, tc.limit, im.Name, im.Shape(), tc.wantName, tc.wantShape)
		}
	}
}

// TestIsCelebA checks IsCelebA against the two CelebA names of Names and a
// few near misses.
func TestIsCelebA(t *testing.T) {
	for name, want := range map[string]bool{
		"celeba64": true, "celeba128": true,
		"celeba": false, "CelebA64": false, "celeba32": false, "mnist": false, "cifar10": false, "": false,
	} {
		if got := IsCelebA(name); got != want {
			t.Errorf("IsCelebA(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestCelebAOptions checks the options against the documented rules: size
// from the name, the split passed through, and the limit kept when positive
// or for the test split, else left 0 so that "train" means its 40,000-image
// subset.
func TestCelebAOptions(t *testing.T) {
	tests := []struct {
		name, split string
		limit       int
		want        celeba.Options
	}{
		{"celeba64", "train", 0, celeba.Options{Size: 64, Split: "train"}},
		{"celeba64", "train", -1, celeba.Options{Size: 64, Split: "train"}},
		{"celeba128", "train", 500, celeba.Options{Size: 128, Split: "train", Limit: 500}},
		{"celeba64", "test", 0, celeba.Options{Size: 64, Split: "test"}},
		{"celeba128", "test", 7, celeba.Options{Size: 128, Split: "test", Limit: 7}},
		{"celeba64", "valid", 3, celeba.Options{Size: 64, Split: "valid", Limit: 3}},
	}
	for _, tc := range tests {
		if got := CelebAOptions(tc.name, tc.split, tc.limit); got != tc.want {
			t.Errorf("CelebAOptions(%q, %q, %d) = %+v, want %+v", tc.name, tc.split, tc.limit, got, tc.want)
		}
	}
}

// TestTrainImages checks TrainImages against the official training split
// sizes: 60,000 for both MNISTs, 73,257 for SVHN, 50,000 for CIFAR-10,
// CelebA's 40,000-image subset (celeba.DefaultTrainLimit), 24,345 for
// Omniglot (the training images of chardata.mat, Burda et al. 2016) and
// 4,100 for Caltech-101 Silhouettes (split1's train_data, Marlin et al.
// 2010); every name of Names has one.
func TestTrainImages(t *testing.T) {
	want := map[string]int{
		"fashion-mnist": 60000, "mnist": 60000, "svhn": 73257, "cifar10": 50000,
		"celeba64": 40000, "celeba128": 40000, "omniglot": 24345, "caltech101": 4100,
	}
	if celeba.DefaultTrainLimit != 40000 {
		t.Errorf("celeba.DefaultTrainLimit = %d, want the papers' 40000", celeba.DefaultTrainLimit)
	}
	for _, name := range Names {
		if got, ok := TrainImages[name]; !ok || got != want[name] {
			t.Errorf("TrainImages[%q] = %d (present: %v), want %d", name, got, ok, want[name])
		}
	}
	if len(TrainImages) != len(Names) || len(Names) != len(want) {
		t.Errorf("TrainImages has %d names and Names %d, want the %d data sets %v", len(TrainImages), len(Names), len(want), Names)
	}
}
