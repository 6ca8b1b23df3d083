package imagefolder

import (
	"bytes"
	"cmp"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/internal/testutil"
)

// writeFile writes data to root/rel, making its folders.
func writeFile(t testing.TB, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pngOf encodes img as a PNG.
func pngOf(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// flat is a w×h RGB image of one grey level.
func flat(t testing.TB, w, h int, level uint8) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = level
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	return pngOf(t, img)
}

// classFolders moves each image dir/NNNNN.png written by
// testutil.WriteImagesAsPNG into dir/classL/, L its label.
func classFolders(t testing.TB, dir string, im *datasets.Images) {
	for i, l := range im.Labels {
		name := fmt.Sprintf("%05d.png", i)
		class := filepath.Join(dir, fmt.Sprintf("class%d", l))
		if err := os.MkdirAll(class, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(class, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFashionMNISTFolderEqualsIDX writes the first Fashion-MNIST images
// (Debian's dataset-fashion-mnist) out as a folder of PNGs, as a user
// would, and checks that the folder's training images equal the IDX
// files' pixel for pixel and label for label, and that a Stream over the
// folder yields the batches the IDX images give, batch for batch: training
// from the folder is training from the IDX files.
func TestFashionMNISTFolderEqualsIDX(t *testing.T) {
	const nTrain, nTest = 200, 30
	train, err := mnist.LoadHead(mnist.DefaultFashionDir, "train", nTrain)
	if err != nil {
		t.Fatal(err)
	}
	test, err := mnist.LoadHead(mnist.DefaultFashionDir, "test", nTest)
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []string{"flat", "classes"} {
		t.Run(layout, func(t *testing.T) {
			root := t.TempDir()
			for _, set := range []struct {
				dir string
				im  *datasets.Images
			}{{TrainDir, train}, {TestDir, test}} {
				testutil.WriteImagesAsPNG(t, filepath.Join(root, set.dir), set.im)
				if layout == "classes" {
					classFolders(t, filepath.Join(root, set.dir), set.im)
				}
			}
			split, err := New(root, Options{Size: 28, Channels: 1})
			if err != nil {
				t.Fatal(err)
			}
			trainSet, _ := split.Set("train")
			got, err := datasets.LoadSource(trainSet, 0)
			if err != nil {
				t.Fatal(err)
			}
			if layout == "flat" {
				if got.Labels != nil || !slices.Equal(got.Pixels, train.Pixels) {
					t.Fatalf("the folder's training images differ from the IDX file's (labels %v)", got.Labels != nil)
				}
				checkStreamEqualsBatches(t, trainSet, train)
				return
			}
			// In class folders the images are in class order: match them by
			// their file names.
			for i, p := range split.Train.Paths {
				var idx int
				fmt.Sscanf(filepath.Base(p), "%05d.png", &idx)
				if !slices.Equal(got.Image(i), train.Image(idx)) || split.Classes[got.Labels[i]] != fmt.Sprintf("class%d", train.Labels[idx]) {
					t.Fatalf("%s: pixels or class %q differ from IDX image %d (label %d)", p, split.Classes[got.Labels[i]], idx, train.Labels[idx])
				}
			}
		})
	}
}

// checkStreamEqualsBatches compares an epoch and a half of a Stream over
// the folder with Batches over the IDX images, same seed.
func checkStreamEqualsBatches(t *testing.T, set *Set, idx *datasets.Images) {
	t.Helper()
	stream, err := datasets.NewStream(set, datasets.StreamOptions{BatchSize: 32, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	batches, err := datasets.NewBatches(idx, 32, datasets.WithSeed(5))
	if err != nil {
		t.Fatal(err)
	}
	for b := range batches.BatchesPerEpoch() * 3 / 2 {
		if b == batches.BatchesPerEpoch() {
			stream.Yield() // io.EOF ends the epoch
			batches.Yield()
			stream.Reset()
			batches.Reset()
		}
		_, x, _, err := stream.Yield()
		if err != nil {
			t.Fatal(err)
		}
		_, y, _, _ := batches.Yield()
		if !slices.Equal(tensors.MustCopyFlatData[float32](x[0]), tensors.MustCopyFlatData[float32](y[0])) {
			t.Fatalf("batch %d of the folder's stream differs from the IDX batch", b)
		}
	}
}

// TestRandomSplit checks the split New makes of a folder without train/
// and test/: the fraction asked for, disjoint, covering every image, the
// same for the same seed, and recorded and read back unchanged.
func TestRandomSplit(t *testing.T) {
	root := t.TempDir()
	for i := range 30 {
		writeFile(t, root, fmt.Sprintf("img%02d.png", i), flat(t, 40, 36, uint8(i)))
	}
	writeFile(t, root, "README.txt", []byte("my photos"))
	writeFile(t, root, ".DS_Store", []byte{0})
	split := func(seed uint64, fraction float64) *Split {
		s, err := New(root, Options{Size: 32, Channels: 3, Seed: seed, TestFraction: fraction})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := split(1, 0)
	if len(a.Test.Paths) != 3 || len(a.Train.Paths) != 27 || a.Classes != nil || a.Train.Labels != nil {
		t.Fatalf("split of 30 unlabelled images: %d train, %d test, classes %v; want 27, 3, none", len(a.Train.Paths), len(a.Test.Paths), a.Classes)
	}
	if all := slices.Sorted(slices.Values(slices.Concat(a.Train.Paths, a.Test.Paths))); len(slices.Compact(all)) != 30 {
		t.Errorf("train and test overlap or miss images: %v", all)
	}
	if !slices.IsSorted(a.Train.Paths) || !slices.IsSorted(a.Test.Paths) {
		t.Errorf("sets not in path order")
	}
	if !slices.Equal(a.Skipped, []string{"README.txt"}) {
		t.Errorf("skipped %v, want [README.txt] (hidden files are not listed)", a.Skipped)
	}
	if b := split(1, 0); !slices.Equal(a.Test.Paths, b.Test.Paths) {
		t.Errorf("seed 1 held out %v, then %v", a.Test.Paths, b.Test.Paths)
	}
	if c := split(2, 0); slices.Equal(a.Test.Paths, c.Test.Paths) {
		t.Errorf("seeds 1 and 2 held out the same images %v", a.Test.Paths)
	}
	if d := split(1, 0.5); len(d.Test.Paths) != 15 {
		t.Errorf("fraction 0.5 held out %d of 30", len(d.Test.Paths))
	}

	record := filepath.Join(t.TempDir(), "split.json")
	if err := a.Write(record); err != nil {
		t.Fatal(err)
	}
	moved := t.TempDir()
	for _, root := range []string{"", moved} {
		back, err := Read(record, root)
		if err != nil {
			t.Fatal(err)
		}
		want := *a
		want.Root, want.Skipped = cmp.Or(root, mustAbs(t, a.Root)), nil
		if fmt.Sprint(*back) != fmt.Sprint(want) {
			t.Errorf("Read(%q) = %+v, want %+v", root, *back, want)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestClasses checks class folders: numbered by name, any depth below the
// class folder, and a class seen only in test/ (a held-out class) numbered
// with the others.
func TestClasses(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"train/cat/a.png", "train/dog/b.png", "train/dog/puppies/c.jpg", "test/cat/d.png", "test/zebra/e.png"} {
		writeFile(t, root, rel, flat(t, 30, 30, 9))
	}
	s, err := New(root, Options{Size: 28, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Classes, []string{"cat", "dog", "zebra"}) || !slices.Equal(s.Train.Labels, []int{0, 1, 1}) ||
		!slices.Equal(s.Test.Labels, []int{0, 2}) || s.TestFraction != 0 {
		t.Errorf("classes %v, train labels %v, test labels %v, fraction %v", s.Classes, s.Train.Labels, s.Test.Labels, s.TestFraction)
	}
	test, _ := s.Set("test")
	im, err := datasets.LoadSource(test, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := float32(9.0/255*2 - 1)
	if im.Name != "folder:"+filepath.Base(root)+"/test" || !slices.Equal(im.Labels, []int{0, 2}) || im.Pixels[0] != want || im.Channels != 1 {
		t.Errorf("test set %q labels %v, first pixel %v (want %v), %d channels", im.Name, im.Labels, im.Pixels[0], want, im.Channels)
	}
}

// TestErrors checks that bad folders and files are refused before any
// image is decoded, naming the file, and that a file truncated after its
// header is refused when decoded, naming it.
func TestErrors(t *testing.T) {
	good := flat(t, 40, 40, 1)
	tests := []struct {
		name  string
		files map[string][]byte
		opts  Options
		want  []string
	}{
		{"empty folder", map[string][]byte{"notes.txt": nil}, Options{}, []string{"no PNG or JPEG images in", "1 other files"}},
		{"one image", map[string][]byte{"a.png": good}, Options{}, []string{"1 image, want at least 2"}},
		{"images beside class folders", map[string][]byte{"a.png": good, "cats/b.png": good}, Options{}, []string{"both directly (a.png) and in class folders (cats/b.png)"}},
		{"text named .png", map[string][]byte{"a.png": good, "b.png": []byte("hello")}, Options{}, []string{"b.png", "not a PNG or JPEG file"}},
		{"image too small", map[string][]byte{"a.png": good, "b.png": flat(t, 20, 50, 1)}, Options{}, []string{"b.png", "image is 20×50 pixels, smaller than the 32×32"}},
		{"train/ with classes, test/ without", map[string][]byte{"train/x/a.png": good, "test/b.png": good}, Options{}, []string{"must both hold class folders"}},
		{"empty test/", map[string][]byte{"train/a.png": good, "test/x.txt": nil}, Options{}, []string{"no PNG or JPEG images in", "test"}},
		{"size", map[string][]byte{"a.png": good}, Options{Size: 48}, []string{"image size 48, want one of [28 32 64 128]"}},
		{"channels", map[string][]byte{"a.png": good}, Options{Channels: 4}, []string{"4 channels, want 1 (grey) or 3 (RGB)"}},
		{"fraction", map[string][]byte{"a.png": good}, Options{TestFraction: 1}, []string{"test fraction 1, want a value in (0, 1)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, data := range tc.files {
				writeFile(t, root, rel, data)
			}
			o := tc.opts
			o.Size, o.Channels = cmp.Or(o.Size, 32), cmp.Or(o.Channels, 3)
			_, err := New(root, o)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("New: error %v, want one saying %q", err, w)
				}
			}
		})
	}
	if _, err := New(filepath.Join(t.TempDir(), "missing"), Options{Size: 32, Channels: 3}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing folder: error %v", err)
	}

	root := t.TempDir()
	writeFile(t, root, "a.png", good)
	writeFile(t, root, "b.png", good[:len(good)-20]) // the header is whole, the pixels are not
	s, err := New(root, Options{Size: 32, Channels: 3, TestFraction: 0.5})
	if err != nil {
		t.Fatalf("New with a file truncated after its header: %v", err)
	}
	for _, name := range []string{"train", "test"} {
		set, _ := s.Set(name)
		_, err := datasets.LoadSource(set, 1)
		if bad := slices.Contains(set.files.Paths, "b.png"); bad != (err != nil) || bad && !strings.Contains(err.Error(), filepath.Join(root, "b.png")+": decoding PNG") {
			t.Errorf("%s set (holding b.png: %v): error %v", name, bad, err)
		}
	}
	if _, err := s.Set("valid"); err == nil {
		t.Error(`Set("valid") succeeded`)
	}
}

// TestReadErrors checks that a damaged split record is refused, naming
// the file and what is wrong.
func TestReadErrors(t *testing.T) {
	valid := `{"version": 1, "root": "/x", "size": 32, "channels": 3, "train": {"paths": ["a.png"]}, "test": {"paths": ["b.png"]}}`
	tests := []struct{ name, text, want string }{
		{"not JSON", "{", "unexpected end of JSON input"},
		{"version", strings.Replace(valid, `"version": 1`, `"version": 2`, 1), "version 2, want 1"},
		{"size", strings.Replace(valid, `"size": 32`, `"size": 33`, 1), "image size 33"},
		{"no test images", strings.Replace(valid, `["b.png"]`, `[]`, 1), "no test images"},
		{"path outside", strings.Replace(valid, `"a.png"`, `"../a.png"`, 1), `train path "../a.png", want a path inside the folder`},
		{"labels without classes", strings.Replace(valid, `["a.png"]}`, `["a.png"], "labels": [0]}`, 1), "do not agree"},
		{"label out of range", strings.Replace(strings.Replace(valid, `"root"`, `"classes": ["c"], "root"`, 1), `["a.png"]}, "test": {"paths": ["b.png"]}`, `["a.png"], "labels": [1]}, "test": {"paths": ["b.png"], "labels": [0]}`, 1), "train label 1 of a.png, want a class in [0, 1)"},
	}
	if _, err := Read(writeRecord(t, valid), ""); err != nil {
		t.Fatalf("the valid record: %v", err)
	}
	for _, tc := range tests {
		p := writeRecord(t, tc.text)
		if _, err := Read(p, ""); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", tc.name, err, p, tc.want)
		}
	}
}

func writeRecord(t testing.TB, text string) string {
	p := filepath.Join(t.TempDir(), "split.json")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzRead feeds Read any bytes: a split or an error naming the file,
// never a panic, and a split that passes Read has paths inside its folder.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"version": 1, "root": "/x", "size": 32, "channels": 3, "train": {"paths": ["a.png"]}, "test": {"paths": ["b.png"]}}`))
	f.Add([]byte(`{"version": 1, "classes": ["a", "b"], "size": 28, "channels": 1, "train": {"paths": ["a/x.png"], "labels": [0]}, "test": {"paths": ["b/y.png"], "labels": [1]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := writeRecord(t, string(data))
		s, err := Read(p, "")
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name %s", err, p)
			}
			return
		}
		for _, name := range []string{"train", "test"} {
			set, _ := s.Set(name)
			for i := range set.Len() {
				if rel, err := filepath.Rel(s.Root, set.Path(i)); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("path %q leaves the folder %q", set.Path(i), s.Root)
				}
			}
		}
	})
}

// TestList checks that List reads a whole folder as one set, with classes
// from its class folders, and refuses what New refuses.
func TestList(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"normal/a.png", "normal/b.png", "odd/c.png", "notes.txt"} {
		writeFile(t, root, rel, flat(t, 33, 40, 200))
	}
	set, err := List(root, Options{Size: 32, Channels: 3})
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 3 || !slices.Equal(set.Classes(), []string{"normal", "odd"}) || !slices.Equal(set.Labels(), []int{0, 0, 1}) ||
		set.RelPath(2) != "odd/c.png" || !slices.Equal(set.Skipped(), []string{"notes.txt"}) {
		t.Errorf("List: %d images, classes %v, labels %v, third %q, skipped %v", set.Len(), set.Classes(), set.Labels(), set.RelPath(2), set.Skipped())
	}
	writeFile(t, root, "odd/d.png", []byte("text"))
	if _, err := List(root, Options{Size: 32, Channels: 3}); err == nil || !strings.Contains(err.Error(), filepath.Join(root, "odd", "d.png")) {
		t.Errorf("a text file named .png: error %v", err)
	}
	if _, err := List(root, Options{Size: 30, Channels: 3}); err == nil || !strings.Contains(err.Error(), "image size 30") {
		t.Errorf("size 30: error %v", err)
	}
}

// TestEnlarge: with Enlarge, images smaller than the size are accepted and
// enlarged (a flat image stays flat), and the split records it; without,
// they are refused.
func TestEnlarge(t *testing.T) {
	root := t.TempDir()
	for i := range 4 {
		writeFile(t, root, fmt.Sprintf("d%d/%d.png", i%2, i), flat(t, 8, 8, uint8(40*i)))
	}
	if _, err := New(root, Options{Size: 28, Channels: 1, Seed: 1, TestFraction: 0.5}); err == nil || !strings.Contains(err.Error(), "smaller than the 28×28") {
		t.Fatalf("8×8 images for 28×28 without Enlarge: error %v", err)
	}
	s, err := New(root, Options{Size: 28, Channels: 1, Seed: 1, TestFraction: 0.5, Enlarge: true})
	if err != nil {
		t.Fatal(err)
	}
	train, _ := s.Set("train")
	im, err := datasets.LoadSource(train, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range im.N {
		p := train.RelPath(i)
		var level int
		fmt.Sscanf(filepath.Base(p), "%d.png", &level)
		want := float32(float64(40*level)/255*2 - 1)
		for _, v := range im.Image(i) {
			if v != want {
				t.Fatalf("%s enlarged: pixel %v, want %v everywhere", p, v, want)
			}
		}
	}
	record := filepath.Join(t.TempDir(), "split.json")
	if err := s.Write(record); err != nil {
		t.Fatal(err)
	}
	if back, err := Read(record, ""); err != nil || !back.Enlarge {
		t.Errorf("the record read back: Enlarge %v, %v", back != nil && back.Enlarge, err)
	}
}
