package download

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
)

// File is one official file of a data set.
type File struct {
	// Name is the file name the loaders expect in the data directory.
	Name string
	// URLs lists where to download it: the official location first, then
	// mirrors serving the same bytes.
	URLs []string
	// SHA256 is the file's digest in hexadecimal.
	SHA256 string
}

// Registry lists the official files of each data set, keyed by the name
// FetchDataset takes.
//
// The digests are those TensorFlow Datasets verifies on every download
// (its url_checksums files), each confirmed by several independent projects
// that publish the same value. The SHA-256 digest makes the plain-HTTP URLs
// safe to use. No digest here is guessed: fetch a file whose digest is not
// known for certain with Fetch and the TrustOnFirstUse option instead.
var Registry = map[string][]File{
	// Loaded by svhn.Load; the extra split (1.3 GB) is a separate set.
	"svhn": {
		{"train_32x32.mat", []string{"http://ufldl.stanford.edu/housenumbers/train_32x32.mat"},
			"435e94d69a87fde4fd4d7f3dd208dfc32cb6ae8af2240d066de1df7508d083b8"},
		{"test_32x32.mat", []string{"http://ufldl.stanford.edu/housenumbers/test_32x32.mat"},
			"cdce80dfb2a2c4c6160906d0bd7c68ec5a99d7ca4831afa54f09182025b6a75b"},
	},
	"svhn-extra": {
		{"extra_32x32.mat", []string{"http://ufldl.stanford.edu/housenumbers/extra_32x32.mat"},
			"a133a4beb38a00fcdda90c9489e0c04f900b660ce8a316a5e854838379a71eb3"},
	},
	// Loaded by cifar10.Load straight from the archive (170,052,171 bytes).
	"cifar10": {
		{"cifar-10-binary.tar.gz", []string{"https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"},
			"c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd"},
	},
	// Loaded by mnist.Load. Yann LeCun's site, the original home, often
	// refuses downloads; the mirrors serve identical files.
	"mnist": {
		mnistFile("train-images-idx3-ubyte.gz", "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
		mnistFile("train-labels-idx1-ubyte.gz", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
		mnistFile("t10k-images-idx3-ubyte.gz", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
		mnistFile("t10k-labels-idx1-ubyte.gz", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
	},
	// Loaded by mnist.Load. These are Zalando's files; Debian's
	// dataset-fashion-mnist package holds the same data recompressed, so
	// its files have other digests.
	"fashion-mnist": {
		fashionFile("train-images-idx3-ubyte.gz", "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84"),
		fashionFile("train-labels-idx1-ubyte.gz", "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845"),
		fashionFile("t10k-images-idx3-ubyte.gz", "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073"),
		fashionFile("t10k-labels-idx1-ubyte.gz", "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"),
	},
}

func mnistFile(name, sha256Hex string) File {
	return File{name, []string{
		"http://yann.lecun.com/exdb/mnist/" + name,
		"https://storage.googleapis.com/cvdf-datasets/mnist/" + name,
	}, sha256Hex}
}

func fashionFile(name, sha256Hex string) File {
	return File{name, []string{"http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/" + name}, sha256Hex}
}

// Fetch downloads f into dir/f.Name with the package-level Fetch, trying
// f.URLs in order until one gives the file with the right digest. The error
// reports every URL's failure.
func (f File) Fetch(ctx context.Context, dir string, opts ...Option) error {
	var errs []error
	for _, url := range f.URLs {
		err := Fetch(ctx, url, filepath.Join(dir, f.Name), f.SHA256, opts...)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// FetchDataset downloads every file of Registry[name] into dir, skipping
// those already there with the right digest. Point the set's loader at dir
// afterwards, e.g. svhn.Load(dir, "train") after FetchDataset(ctx, "svhn",
// dir).
func FetchDataset(ctx context.Context, name, dir string, opts ...Option) error {
	files, ok := Registry[name]
	if !ok {
		return fmt.Errorf("download: no data set %q in the registry, want one of %q", name, slices.Sorted(maps.Keys(Registry)))
	}
	for _, f := range files {
		if err := f.Fetch(ctx, dir, opts...); err != nil {
			return err
		}
	}
	return nil
}
