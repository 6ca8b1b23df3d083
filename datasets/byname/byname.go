// Package byname loads the project's image data sets by the names the
// commands take as -data, so every command reads them the same way.
package byname

import (
	"fmt"
	"slices"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/caltech101"
	"github.com/edlebm/edlebm/datasets/celeba"
	"github.com/edlebm/edlebm/datasets/cifar10"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/datasets/omniglot"
	"github.com/edlebm/edlebm/datasets/svhn"
)

// Names are the data sets Load reads.
var Names = []string{"fashion-mnist", "mnist", "svhn", "cifar10", "celeba64", "celeba128", "omniglot", "caltech101"}

// Load reads split ("train" or "test"; "val" too for caltech101, the
// Caltech-101 Silhouettes) of data set name from dir, in the layout its
// loader documents. A limit > 0 bounds how many images a loader
// that can stop early (CelebA, MNIST and Fashion-MNIST: their first limit
// images) decodes; callers still take a subset of the others. CelebA's "train" split defaults to its 40,000-image subset.
func Load(name, dir, split string, limit int) (*datasets.Images, error) {
	switch name {
	case "fashion-mnist", "mnist":
		return mnist.LoadHead(dir, split, limit)
	case "svhn":
		return svhn.Load(dir, split)
	case "cifar10":
		return cifar10.Load(dir, split)
	case "celeba64", "celeba128":
		return celeba.Load(dir, CelebAOptions(name, split, limit))
	case "omniglot":
		return omniglot.Load(dir, split)
	case "caltech101":
		return caltech101.Load(dir, split)
	}
	return nil, fmt.Errorf("data set %q: no loader; want one of %v", name, Names)
}

// FolderContents says what the folder given to Load must hold for data
// set name, for a user who has not given one: "" for an unknown name.
func FolderContents(name string) string {
	switch name {
	case "fashion-mnist", "mnist":
		return "the four IDX files train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (or the same names ending .gz)"
	case "svhn":
		return fmt.Sprintf("%s and %s", svhn.Files["train"], svhn.Files["test"])
	case "cifar10":
		return fmt.Sprintf("%s, or its unpacked %s/", cifar10.ArchiveName, cifar10.BatchesDir)
	case "celeba64", "celeba128":
		return "img_align_celeba/ (or img_align_celeba.zip), list_eval_partition.txt and list_attr_celeba.txt, as CelebA is distributed"
	case "omniglot":
		return omniglot.File
	case "caltech101":
		return caltech101.File
	}
	return ""
}

// TrainImages is the number of images in each data set's official
// training split as Load reads it (CelebA: its 40,000-image subset), for
// checking a batch size before loading: a folder may hold fewer.
var TrainImages = map[string]int{
	"fashion-mnist": 60_000, "mnist": 60_000, "svhn": 73_257, "cifar10": 50_000,
	"celeba64": 40_000, "celeba128": 40_000, "omniglot": 24_345, "caltech101": 4_100,
}

// IsCelebA reports whether name is one of the CelebA sizes.
func IsCelebA(name string) bool { return slices.Contains([]string{"celeba64", "celeba128"}, name) }

// CelebAOptions are the celeba.Options Load uses for a CelebA name, e.g. to
// list the same files with celeba.SplitFiles.
func CelebAOptions(name, split string, limit int) celeba.Options {
	opts := celeba.Options{Size: 64, Split: split}
	if name == "celeba128" {
		opts.Size = 128
	}
	if split == "test" || limit > 0 {
		opts.Limit = limit
	}
	return opts
}
