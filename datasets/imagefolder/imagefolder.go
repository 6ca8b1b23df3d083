// Package imagefolder reads a user's folder of PNG and JPEG images as a
// training and a held-out image set, for models that train on images.
//
// The folder is laid out in one of two ways:
//
//	root/a.png, root/b.jpg, …              unlabelled images
//	root/cat/a.png, root/dog/b.jpg, …      images in class folders
//
// which New splits into a training and a test set at random (a fraction
// of the images, fixed by a seed), or
//
//	root/train/…, root/test/…              the split made by the user
//
// each of train/ and test/ laid out as above. A class is the first folder
// below root (or below train/ and test/), whatever lies deeper; classes
// are numbered in the order of their names. Hidden files and folders (names
// starting with ".") are skipped, and so are files whose names do not end
// in .png, .jpg or .jpeg (Split.Skipped lists them).
//
// Every image is decoded by package imagefile: converted to RGB or grey,
// resized so that its shorter side is the chosen size and centre-cropped.
// New reads every file's header, so that a file that is not an image, or
// is smaller than the size asked for, is reported before anything is
// decoded; a file truncated after its header is reported when it is
// decoded. The Split is recorded in a run's folder (Write, Read), so that
// a resumed run and its evaluation see the same images.
package imagefolder

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets/imagefile"
)

// Names of the subfolders that hold a split made by the user.
const (
	TrainDir = "train"
	TestDir  = "test"
)

// DefaultTestFraction is the fraction of the images New holds out when
// Options.TestFraction is zero.
const DefaultTestFraction = 0.1

// Sizes are the image sizes the project's generators make.
var Sizes = []int{28, 32, 64, 128}

// Options say how New reads and splits a folder.
type Options struct {
	// Size is the side of the square images (one of Sizes); Channels is 3
	// (RGB) or 1 (grey).
	Size, Channels int
	// TestFraction is the fraction of the images held out when the folder
	// has no train/ and test/ subfolders (0: DefaultTestFraction); Seed
	// chooses them.
	TestFraction float64
	Seed         uint64
	// Enlarge accepts images smaller than Size, enlarging them (bilinear,
	// as Pillow); without it such an image is an error.
	Enlarge bool
}

// Split is which images of a folder a run trains on and which it holds
// out, with the shape they are decoded to.
type Split struct {
	// Root is the folder; the paths of Train and Test are relative to it,
	// with forward slashes.
	Root           string `json:"root"`
	Size, Channels int    `json:"-"`
	// Enlarge is Options.Enlarge.
	Enlarge bool `json:"enlarge,omitempty"`
	// Classes are the class names, numbered by their index; nil when the
	// images are unlabelled.
	Classes []string `json:"classes,omitempty"`
	// TestFraction and Seed made the split; zero when the folder's train/
	// and test/ did.
	TestFraction float64 `json:"test_fraction,omitempty"`
	Seed         uint64  `json:"seed,omitempty"`
	// Train and Test are the two sets, in path order.
	Train, Test Files `json:"-"`
	// Skipped are the files New passed over, not being PNG or JPEG by
	// their names (not recorded).
	Skipped []string `json:"-"`
}

// Files are image files with their classes.
type Files struct {
	// Paths are relative to the split's root, with forward slashes.
	Paths []string `json:"paths"`
	// Labels holds the class of each path, or is nil when unlabelled.
	Labels []int `json:"labels,omitempty"`
}

// record is a Split as Write stores it.
type record struct {
	Version int `json:"version"`
	Split
	Size     int   `json:"size"`
	Channels int   `json:"channels"`
	Train    Files `json:"train"`
	Test     Files `json:"test"`
}

// check validates the options, filling in the default test fraction.
func (o Options) check() (Options, error) {
	if !slices.Contains(Sizes, o.Size) {
		return o, fmt.Errorf("image size %d, want one of %v", o.Size, Sizes)
	}
	if o.Channels != 1 && o.Channels != 3 {
		return o, fmt.Errorf("%d channels, want 1 (grey) or 3 (RGB)", o.Channels)
	}
	o.TestFraction = cmp.Or(o.TestFraction, DefaultTestFraction)
	if !(o.TestFraction > 0 && o.TestFraction < 1) {
		return o, fmt.Errorf("test fraction %v, want a value in (0, 1)", o.TestFraction)
	}
	return o, nil
}

// New lists the images of root, checks every file's header, and splits
// them as the package documentation says.
func New(root string, opts Options) (*Split, error) {
	o, err := opts.check()
	if err != nil {
		return nil, fmt.Errorf("imagefolder %s: %w", root, err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("imagefolder: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("imagefolder: %s is a file, want a folder of images", root)
	}
	s := &Split{Root: root, Size: o.Size, Channels: o.Channels, Enlarge: o.Enlarge}
	if isDir(filepath.Join(root, TrainDir)) && isDir(filepath.Join(root, TestDir)) {
		err = s.scanGivenSplit()
	} else {
		err = s.scanAndSplit(o.TestFraction, o.Seed)
	}
	if err != nil {
		return nil, err
	}
	if err := s.checkHeaders(slices.Concat(s.Train.Paths, s.Test.Paths)); err != nil {
		return nil, err
	}
	return s, nil
}

// List returns every image below root as one set named "all", in path
// order, labelled by class folder when the images are in class folders,
// as New reads a folder without splitting it (o's TestFraction and Seed
// unused): for scoring new images with a trained model. Like New, it
// checks every file's header.
func List(root string, o Options) (*Set, error) {
	if _, err := o.check(); err != nil {
		return nil, fmt.Errorf("imagefolder %s: %w", root, err)
	}
	s := &Split{Root: root, Size: o.Size, Channels: o.Channels, Enlarge: o.Enlarge}
	l, err := s.list(".")
	if err != nil {
		return nil, err
	}
	s.Classes = l.classes
	files := l.files(s.Classes)
	if err := s.checkHeaders(files.Paths); err != nil {
		return nil, err
	}
	return &Set{split: s, name: "all", files: files}, nil
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// scanGivenSplit lists root/train and root/test, numbering the classes of
// both together.
func (s *Split) scanGivenSplit() error {
	train, err := s.list(TrainDir)
	if err != nil {
		return err
	}
	test, err := s.list(TestDir)
	if err != nil {
		return err
	}
	if (train.classes == nil) != (test.classes == nil) {
		return fmt.Errorf("imagefolder %s: %s/ and %s/ must both hold class folders or both hold images directly", s.Root, TrainDir, TestDir)
	}
	if train.classes != nil {
		s.Classes = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(train.classes), test.classes...))))
	}
	s.Train, s.Test = train.files(s.Classes), test.files(s.Classes)
	return nil
}

// scanAndSplit lists root and holds out round(fraction·N) images (at least
// one, and one fewer than all) chosen by a PCG generator seeded with seed.
func (s *Split) scanAndSplit(fraction float64, seed uint64) error {
	all, err := s.list(".")
	if err != nil {
		return err
	}
	n := len(all.paths)
	if n < 2 {
		return fmt.Errorf("imagefolder %s: %d image, want at least 2 to hold one out", s.Root, n)
	}
	nTest := min(max(int(math.Round(fraction*float64(n))), 1), n-1)
	held := make([]bool, n)
	for _, i := range rand.New(rand.NewPCG(seed, 0)).Perm(n)[:nTest] {
		held[i] = true
	}
	s.Classes, s.TestFraction, s.Seed = all.classes, fraction, seed
	var train, test listing
	for i, p := range all.paths {
		into := &train
		if held[i] {
			into = &test
		}
		into.paths, into.classOf = append(into.paths, p), append(into.classOf, all.classOf[i])
	}
	s.Train, s.Test = train.files(s.Classes), test.files(s.Classes)
	return nil
}

// listing is the images below one folder, in path order.
type listing struct {
	paths   []string // relative to the split's root, slash-separated
	classOf []string // class folder of each path ("" when unlabelled)
	classes []string // the class folders, sorted; nil when unlabelled
}

// files numbers the listing's classes within classes.
func (l listing) files(classes []string) Files {
	f := Files{Paths: l.paths}
	if classes != nil {
		f.Labels = make([]int, len(l.paths))
		for i, c := range l.classOf {
			f.Labels[i], _ = slices.BinarySearch(classes, c)
		}
	}
	return f
}

// list walks dir (relative to the root) and returns its images, refusing a
// folder that holds images both directly and in class folders, or none.
func (s *Split) list(dir string) (listing, error) {
	var l listing
	var direct, nested string // an example of each, for the error
	top := filepath.Join(s.Root, dir)
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != top && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(s.Root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !imagefile.IsImageName(d.Name()) {
			s.Skipped = append(s.Skipped, rel)
			return nil
		}
		inDir, err := filepath.Rel(top, p)
		if err != nil {
			return err
		}
		class, _, isNested := strings.Cut(filepath.ToSlash(inDir), "/")
		if !isNested {
			class, direct = "", rel
		} else {
			nested = rel
		}
		l.paths, l.classOf = append(l.paths, rel), append(l.classOf, class)
		return nil
	})
	if err != nil {
		return l, fmt.Errorf("imagefolder: listing %s: %w", top, err)
	}
	if len(l.paths) == 0 {
		return l, fmt.Errorf("imagefolder: no PNG or JPEG images in %s (%d other files)", top, len(s.Skipped))
	}
	if direct != "" && nested != "" {
		return l, fmt.Errorf("imagefolder: %s holds images both directly (%s) and in class folders (%s): put every image in a class folder, or none", top, direct, nested)
	}
	if nested != "" {
		l.classes = slices.Compact(slices.Sorted(slices.Values(slices.Clone(l.classOf))))
	}
	return l, nil
}

// checkHeaders reads the header of every image at paths, on as many
// goroutines as there are CPUs (a large folder on a disk is mostly
// waiting), refusing a file that is not a PNG or JPEG, or is too large or
// too small for the decoder: the error of the first such file in path
// order.
func (s *Split) checkHeaders(paths []string) error {
	errs := make([]error, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Go(func() {
			d := s.newDecoder()
			for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
				errs[i] = s.checkHeader(d, paths[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// newDecoder returns a decoder of the split's images, accepting images
// smaller than Size when Enlarge says so.
func (s *Split) newDecoder() *imagefile.Decoder {
	d := imagefile.NewDecoder(s.Size, s.Channels)
	if s.Enlarge {
		d.Accept = func(w, h int) error { return nil }
	}
	return d
}

func (s *Split) checkHeader(d *imagefile.Decoder, rel string) error {
	name := filepath.Join(s.Root, filepath.FromSlash(rel))
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("imagefolder: %w", err)
	}
	defer f.Close()
	_, w, h, err := imagefile.Header(f)
	if err == nil {
		err = d.Check(w, h)
	}
	if err != nil {
		return fmt.Errorf("imagefolder: %s: %w", name, err)
	}
	return nil
}

// Write records the split in the file at p, atomically.
func (s *Split) Write(p string) error {
	root, err := filepath.Abs(s.Root)
	if err != nil {
		return err
	}
	r := record{Version: 1, Split: *s, Size: s.Size, Channels: s.Channels, Train: s.Train, Test: s.Test}
	r.Root = root
	return atomicfile.Write(p, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(r)
	})
}

// Read returns the split recorded in the file at p; a root other than ""
// replaces the recorded folder (the images moved). It checks the record
// but not the images, which are read when decoded.
func Read(p, root string) (*Split, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("imagefolder: reading the split: %w", err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("imagefolder: split file %s: %w", p, err)
	}
	if r.Version != 1 {
		return nil, fmt.Errorf("imagefolder: split file %s: version %d, want 1", p, r.Version)
	}
	s := r.Split
	s.Size, s.Channels, s.Train, s.Test = r.Size, r.Channels, r.Train, r.Test
	if root != "" {
		s.Root = root
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("imagefolder: split file %s: %w", p, err)
	}
	return &s, nil
}

// validate checks a recorded split for what decoding it needs.
func (s *Split) validate() error {
	if _, err := (Options{Size: s.Size, Channels: s.Channels}).check(); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		files Files
	}{{"train", s.Train}, {"test", s.Test}} {
		if len(f.files.Paths) == 0 {
			return fmt.Errorf("no %s images", f.name)
		}
		if (f.files.Labels == nil) != (s.Classes == nil) || f.files.Labels != nil && len(f.files.Labels) != len(f.files.Paths) {
			return fmt.Errorf("%s: %d paths, %d labels and %d classes do not agree", f.name, len(f.files.Paths), len(f.files.Labels), len(s.Classes))
		}
		for i, p := range f.files.Paths {
			if p == "" || path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
				return fmt.Errorf("%s path %q, want a path inside the folder", f.name, p)
			}
			if f.files.Labels != nil && (f.files.Labels[i] < 0 || f.files.Labels[i] >= len(s.Classes)) {
				return fmt.Errorf("%s label %d of %s, want a class in [0, %d)", f.name, f.files.Labels[i], p, len(s.Classes))
			}
		}
	}
	return nil
}

// ErrNoSuchSet marks a set name other than "train" and "test".
var ErrNoSuchSet = errors.New(`want "train" or "test"`)

// Set returns the named set ("train" or "test") as a datasets.Source
// (labelled when the split has classes) that decodes its images from the
// folder.
func (s *Split) Set(name string) (*Set, error) {
	switch name {
	case "train":
		return &Set{split: s, name: name, files: s.Train}, nil
	case "test":
		return &Set{split: s, name: name, files: s.Test}, nil
	}
	return nil, fmt.Errorf("imagefolder: set %q: %w", name, ErrNoSuchSet)
}

// Set is one set of a Split, a datasets.Source.
type Set struct {
	split *Split
	name  string
	files Files
}

// Name is "folder:" + the folder's base name + "/" + the set, e.g.
// "folder:photos/train".
func (t *Set) Name() string { return "folder:" + filepath.Base(t.split.Root) + "/" + t.name }

// Len is the number of images.
func (t *Set) Len() int { return len(t.files.Paths) }

// Shape is Size×Size×Channels.
func (t *Set) Shape() (height, width, channels int) {
	return t.split.Size, t.split.Size, t.split.Channels
}

// Labels are the classes of the images, or nil.
func (t *Set) Labels() []int { return t.files.Labels }

// Classes are the names of the classes Labels number, or nil.
func (t *Set) Classes() []string { return t.split.Classes }

// Skipped are the files passed over when the folder was listed, not being
// PNG or JPEG by their names.
func (t *Set) Skipped() []string { return t.split.Skipped }

// RelPath returns the file of image i relative to the folder, with forward
// slashes.
func (t *Set) RelPath(i int) string { return t.files.Paths[i] }

// Path returns the file of image i.
func (t *Set) Path(i int) string {
	return filepath.Join(t.split.Root, filepath.FromSlash(t.files.Paths[i]))
}

// NewReader decodes image i with a decoder of its own, naming the file in
// its errors.
func (t *Set) NewReader() func(i int, dst []float32) error {
	d := t.split.newDecoder()
	return func(i int, dst []float32) error {
		name := t.Path(i)
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("imagefolder: %w", err)
		}
		defer f.Close()
		if err := d.Decode(f, dst); err != nil {
			return fmt.Errorf("imagefolder: %s: %w", name, err)
		}
		return nil
	}
}

// Head returns the first n images of the set (all of them when n ≤ 0 or
// n ≥ Len).
func (t *Set) Head(n int) *Set {
	if n <= 0 || n >= t.Len() {
		return t
	}
	head := *t
	head.files.Paths = t.files.Paths[:n:n]
	if t.files.Labels != nil {
		head.files.Labels = t.files.Labels[:n:n]
	}
	return &head
}
