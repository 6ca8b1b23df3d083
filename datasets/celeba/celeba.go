// Package celeba reads the aligned CelebA face images (Liu et al. 2015) from
// a root folder laid out as the data set is distributed:
//
//	<root>/img_align_celeba/000001.jpg …  or  <root>/img_align_celeba.zip
//	<root>/list_eval_partition.txt          ("000001.jpg 0" lines: 0 train, 1 valid, 2 test)
//	<root>/list_attr_celeba.txt             (40 binary attributes per image, ±1)
//
// The images are read straight from the zip when the folder is absent, and
// the folder is used when both exist.
//
// Every image is preprocessed as in Pang et al.'s latent-space EBM code,
// torchvision's Resize(S) then CenterCrop(S) on the PIL image: the 178×218
// image is resized with antialiased bilinear interpolation so that its
// shorter side (the width) is S — to 64×78 for S = 64 and 128×156 for
// S = 128 — and the centred S×S square is kept (rows 7…70 and 14…141). The
// resize reproduces Pillow's BILINEAR arithmetic exactly (tent filter of
// radius max(1, scale), two 8-bit passes), so results differ from the Python
// pipeline only where Go's JPEG decoder differs from libjpeg's (chroma
// upsampling, at most a few levels on sharp colour edges). Pixels are
// float32 NHWC scaled to [-1, 1] as v/255·2 − 1.
//
// Load decodes a split into memory: S·S·3 float32 values per image, so the
// default 40,000 training images take 1.97 GB at S = 64 and 7.9 GB at
// S = 128; no full-size image is kept. NewStream instead decodes shuffled
// mini-batches on the fly (datasets.Stream), holding only a few batches at
// a time. The decoding is package imagefile's.
package celeba

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/imagefile"
)

// Names of the files and folders of a CelebA root folder.
const (
	ImageDir      = "img_align_celeba"
	ImageZip      = "img_align_celeba.zip"
	PartitionFile = "list_eval_partition.txt"
	AttributeFile = "list_attr_celeba.txt"
)

// AlignedWidth and AlignedHeight are the size of every aligned CelebA image;
// an image of another size is reported as an error.
const (
	AlignedWidth  = 178
	AlignedHeight = 218
)

// DefaultTrainLimit is the number of training images Load and NewStream
// read by default: the first 40,000 of the training split (000001.jpg to
// 040000.jpg), the subset the latent-space EBM papers train on. (Pang et
// al.'s 128×128 script uses the first 30,000; set Limit to match it.)
const DefaultTrainLimit = 40000

// splitCodes maps the split names of Options to their codes in
// PartitionFile.
var splitCodes = map[string]string{"train": "0", "valid": "1", "test": "2"}

// Options selects and shapes the images Load and NewStream read.
type Options struct {
	// Size is the side S of the square output images: 64 or 128.
	Size int
	// Split is "train", "valid" or "test", as list_eval_partition.txt
	// assigns the images.
	Split string
	// Limit keeps the first Limit images of the split, in file order. Zero
	// means DefaultTrainLimit for "train" and the whole split otherwise; a
	// negative value means the whole split. A limit larger than the split is
	// an error.
	Limit int
	// Workers is the number of images decoded in parallel; zero means
	// runtime.GOMAXPROCS(0).
	Workers int
}

// check validates the options and returns them with defaults filled in,
// except Limit, which needs the split's size.
func (o Options) check() (Options, error) {
	if o.Size != 64 && o.Size != 128 {
		return o, fmt.Errorf("celeba: image size %d, want 64 or 128", o.Size)
	}
	if _, ok := splitCodes[o.Split]; !ok {
		return o, fmt.Errorf("celeba: split %q, want \"train\", \"valid\" or \"test\"", o.Split)
	}
	if o.Workers < 0 {
		return o, fmt.Errorf("celeba: %d workers, want a positive number or 0 for one per CPU", o.Workers)
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o, nil
}

// name returns the name of the image set the options select, e.g.
// "celeba64/train".
func (o Options) name() string { return fmt.Sprintf("celeba%d/%s", o.Size, o.Split) }

// SplitFiles returns the file names of the images the options select, in
// the order Load stores them (the order of list_eval_partition.txt), e.g.
// to pair Load's images with attributes. It reads only the partition file.
func SplitFiles(root string, opts Options) ([]string, error) {
	o, err := opts.check()
	if err != nil {
		return nil, err
	}
	names, err := readPartition(filepath.Join(root, PartitionFile), o.Split)
	if err != nil {
		return nil, err
	}
	limit := o.Limit
	switch {
	case limit == 0 && o.Split == "train":
		limit = DefaultTrainLimit
	case limit <= 0:
		limit = len(names)
	}
	if limit > len(names) {
		return nil, fmt.Errorf("celeba: %s lists %d %s images, fewer than the %d requested",
			filepath.Join(root, PartitionFile), len(names), o.Split, limit)
	}
	return names[:limit], nil
}

// readPartition parses the partition file at path and returns the names of
// the images of split, in file order. Every line must hold an image name
// and a split code 0, 1 or 2, each name at most once.
func readPartition(path, split string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("celeba: partition file %s is missing: it comes with CelebA "+
			"(Eval/list_eval_partition.txt) and must sit beside %s", path, ImageDir)
	}
	if err != nil {
		return nil, fmt.Errorf("celeba: %w", err)
	}
	defer f.Close()

	want := splitCodes[split]
	var names []string
	seen := make(map[string]int) // line of each name
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("celeba: %s line %d: %d fields, want 2 (image name, split 0/1/2)",
				path, line, len(fields))
		}
		name, code := fields[0], fields[1]
		if err := checkImageName(name); err != nil {
			return nil, fmt.Errorf("celeba: %s line %d: %w", path, line, err)
		}
		if code != "0" && code != "1" && code != "2" {
			return nil, fmt.Errorf("celeba: %s line %d: split %q, want 0 (train), 1 (valid) or 2 (test)",
				path, line, code)
		}
		if prev, ok := seen[name]; ok {
			return nil, fmt.Errorf("celeba: %s line %d: image %s already listed on line %d", path, line, name, prev)
		}
		seen[name] = line
		if code == want {
			names = append(names, name)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("celeba: reading %s: %w", path, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("celeba: %s lists no %s images", path, split)
	}
	return names, nil
}

// checkImageName accepts the base name of a .jpg file.
func checkImageName(name string) error {
	if !strings.HasSuffix(strings.ToLower(name), ".jpg") || strings.ContainsAny(name, `/\`) || name == ".jpg" {
		return fmt.Errorf("image name %q, want a file name such as 000001.jpg", name)
	}
	return nil
}

// openSplit opens the images of root and returns the names the options
// select, after checking that the source holds all of them.
func openSplit(root string, o Options) (*source, []string, error) {
	names, err := SplitFiles(root, o)
	if err != nil {
		return nil, nil, err
	}
	src, err := openSource(root)
	if err != nil {
		return nil, nil, err
	}
	if err := src.check(names); err != nil {
		src.Close()
		return nil, nil, err
	}
	return src, names, nil
}

// Load reads the images the options select from root, decoding them in
// parallel straight into the returned set: N×S×S×3 float32 values in
// [-1, 1], unlabelled, named "celeba<S>/<split>", in the order SplitFiles
// returns. It errors, naming the file, if the partition file is missing or
// malformed, lists an image the folder or zip lacks, or an image fails to
// decode or is not 178×218; it never returns a partial set.
func Load(root string, opts Options) (*datasets.Images, error) {
	set, err := open(root, opts)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	return datasets.LoadSource(set, set.opts.Workers)
}

// NewStream opens the images the options select from root and returns a
// datasets.Stream of them positioned at the start of epoch 0, already
// decoding its first batches (sopts.Workers defaults to opts.Workers). It
// checks the partition file and that every image exists; an image that
// fails to decode is reported by the Yield that needs it. Closing the
// stream releases the files.
func NewStream(root string, opts Options, sopts datasets.StreamOptions) (*datasets.Stream, error) {
	set, err := open(root, opts)
	if err != nil {
		return nil, err
	}
	sopts.Workers = cmp.Or(sopts.Workers, set.opts.Workers)
	stream, err := datasets.NewStream(set, sopts)
	if err != nil {
		set.Close()
		return nil, fmt.Errorf("celeba: %w", err)
	}
	return stream, nil
}

// imageSet is the images the options select, as a datasets.Source.
type imageSet struct {
	*source
	names []string
	opts  Options
}

// open checks the options and opens the images they select.
func open(root string, opts Options) (*imageSet, error) {
	o, err := opts.check()
	if err != nil {
		return nil, err
	}
	src, names, err := openSplit(root, o)
	if err != nil {
		return nil, err
	}
	return &imageSet{source: src, names: names, opts: o}, nil
}

func (s *imageSet) Name() string                  { return s.opts.name() }
func (s *imageSet) Len() int                      { return len(s.names) }
func (s *imageSet) Shape() (height, width, c int) { return s.opts.Size, s.opts.Size, 3 }

// NewReader decodes image i with a decoder of its own.
func (s *imageSet) NewReader() func(i int, dst []float32) error {
	d := newDecoder(s.opts.Size)
	return func(i int, dst []float32) error { return s.decode(d, s.names[i], dst) }
}

// maxJPEGBytes bounds the size of one image file: aligned CelebA JPEGs are
// 5–30 KB; a larger file is refused before it is read whole.
const maxJPEGBytes = 4 << 20

// newDecoder returns a decoder of aligned CelebA JPEGs into size×size RGB
// images, refusing any image of another size.
func newDecoder(size int) *imagefile.Decoder {
	d := imagefile.NewDecoder(size, 3)
	d.MaxBytes = maxJPEGBytes
	d.Accept = func(w, h int) error {
		if w != AlignedWidth || h != AlignedHeight {
			return fmt.Errorf("image is %d×%d pixels, want %d×%d (aligned CelebA)", w, h, AlignedWidth, AlignedHeight)
		}
		return nil
	}
	return d
}
