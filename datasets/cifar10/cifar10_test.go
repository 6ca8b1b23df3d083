package cifar10

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets"
)

// testPixel is the byte of pixel (h, w) of channel c of image n of a test
// batch: asymmetric in h and w and different per channel, so that a
// transposition or a channel mix-up shows.
func testPixel(n, h, w, c int) byte { return byte(3*n + 5*h + 11*w + 101*c) }

// testLabel is the label of image n.
func testLabel(n int) byte { return byte(n*7) % 10 }

// batch encodes images first … first+count−1 in the official layout: per
// record a label byte, then the red, green and blue planes, row by row.
func batch(first, count int) []byte {
	var out []byte
	for n := first; n < first+count; n++ {
		out = append(out, testLabel(n))
		for c := range Channels {
			for h := range Height {
				for w := range Width {
					out = append(out, testPixel(n, h, w, c))
				}
			}
		}
	}
	return out
}

// Record counts of the five training batches and the test batch.
var trainCounts = []int{1, 2, 1, 1, 3}

const testCount = 2

// testBatches returns the batch files of the test data set by name.
func testBatches() map[string][]byte {
	files := map[string][]byte{"test_batch.bin": batch(0, testCount)}
	first := 0
	for i, count := range trainCounts {
		files[splitFiles["train"][i]] = batch(first, count)
		first += count
	}
	return files
}

func writeDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tarball encodes files as a tar archive laid out like the official one,
// gzipped if zip, with a directory entry and the other files of the
// distribution.
func tarball(t *testing.T, files map[string][]byte, zip bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var zw *gzip.Writer
	tw := tar.NewWriter(&buf)
	if zip {
		zw = gzip.NewWriter(&buf)
		tw = tar.NewWriter(zw)
	}
	add := func(hdr *tar.Header, data []byte) {
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	add(&tar.Header{Name: BatchesDir + "/", Typeflag: tar.TypeDir, Mode: 0o755}, nil)
	extra := map[string][]byte{"batches.meta.txt": []byte(strings.Join(ClassNames[:], "\n")), "readme.html": []byte("<html>")}
	for _, set := range []map[string][]byte{extra, files} {
		for _, name := range slices.Sorted(maps.Keys(set)) {
			add(&tar.Header{Name: BatchesDir + "/" + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(set[name]))}, set[name])
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zip {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// checkImages compares every pixel and label of im with images first … of
// the test data set.
func checkImages(t *testing.T, im *datasets.Images, first, count int) {
	t.Helper()
	if !slices.Equal(im.Shape(), []int{count, Height, Width, Channels}) {
		t.Fatalf("shape %v, want [%d 32 32 3]", im.Shape(), count)
	}
	for n := range count {
		if want := int(testLabel(first + n)); im.Labels[n] != want {
			t.Errorf("label %d = %d, want %d", n, im.Labels[n], want)
		}
		for h := range Height {
			for w := range Width {
				for c := range Channels {
					want := float64(testPixel(first+n, h, w, c))/127.5 - 1
					if got := im.Pixels[((n*Height+h)*Width+w)*Channels+c]; math.Abs(float64(got)-want) > 1e-6 {
						t.Fatalf("pixel (n=%d, h=%d, w=%d, c=%d) = %v, want %v", n, h, w, c, got, want)
					}
				}
			}
		}
	}
	if im.Pixels[0] != -1 {
		t.Errorf("pixel of byte 0 = %v, want exactly -1", im.Pixels[0])
	}
}

func TestLoad(t *testing.T) {
	nTrain := 0
	for _, c := range trainCounts {
		nTrain += c
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) string // writes the data, returns the path to load
	}{
		{"batches directory", func(t *testing.T, root string) string {
			writeDir(t, filepath.Join(root, BatchesDir), testBatches())
			return filepath.Join(root, BatchesDir)
		}},
		{"directory holding the batches directory", func(t *testing.T, root string) string {
			writeDir(t, filepath.Join(root, BatchesDir), testBatches())
			return root
		}},
		{"tar.gz archive", func(t *testing.T, root string) string {
			writeDir(t, root, map[string][]byte{"c10.tgz": tarball(t, testBatches(), true)})
			return filepath.Join(root, "c10.tgz")
		}},
		{"directory holding the archive", func(t *testing.T, root string) string {
			writeDir(t, root, map[string][]byte{ArchiveName: tarball(t, testBatches(), true)})
			return root
		}},
		{"plain tar archive", func(t *testing.T, root string) string {
			writeDir(t, root, map[string][]byte{"c10.tar": tarball(t, testBatches(), false)})
			return filepath.Join(root, "c10.tar")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.setup(t, t.TempDir())
			train, err := Load(p, "train")
			if err != nil {
				t.Fatal(err)
			}
			if train.Name != "cifar10/train" {
				t.Errorf("name %q, want cifar10/train", train.Name)
			}
			// The five batches in order hold images 0 … nTrain−1.
			checkImages(t, train, 0, nTrain)
			test, err := Load(p, "test")
			if err != nil {
				t.Fatal(err)
			}
			if test.Name != "cifar10/test" {
				t.Errorf("name %q, want cifar10/test", test.Name)
			}
			checkImages(t, test, 0, testCount)
		})
	}
}

// cutTar returns a plain tar archive holding one regular entry name that
// declares size bytes but holds only data (len(data) < size), the archive
// ending there: what a truncated download of a large entry looks like.
func cutTar(t *testing.T, name string, size int64, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: BatchesDir + "/" + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes() // not closed: the entry stays short
}

// TestLoadArchiveSkipsEntries checks that readArchive reads only regular
// entries with a batch's name, each once: a symbolic link or a directory
// named like a batch, or a second copy of a batch, must not stand in for or
// displace the real files; the images are checked against batch().
func TestLoadArchiveSkipsEntries(t *testing.T) {
	files := testBatches()
	reg := func(name string) *tar.Header {
		return &tar.Header{Name: BatchesDir + "/" + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[name]))}
	}
	tests := []struct {
		name    string
		split   string
		entries []*tar.Header // regular entries get files[base name] as contents
		want    int           // number of images, from image 0
	}{
		{"link named like the batch", "test", []*tar.Header{
			{Name: BatchesDir + "/test_batch.bin", Typeflag: tar.TypeSymlink, Linkname: "elsewhere.bin", Mode: 0o777},
			reg("test_batch.bin"),
		}, testCount},
		{"directory named like the batch", "test", []*tar.Header{
			{Name: "old/test_batch.bin/", Typeflag: tar.TypeDir, Mode: 0o755},
			reg("test_batch.bin"),
		}, testCount},
		{"batch stored twice", "train", []*tar.Header{
			reg("data_batch_1.bin"), reg("data_batch_1.bin"), reg("data_batch_2.bin"),
			reg("data_batch_3.bin"), reg("data_batch_4.bin"), reg("data_batch_5.bin"),
		}, 8}, // 8 = the sum of trainCounts
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, hdr := range tc.entries {
				if err := tw.WriteHeader(hdr); err != nil {
					t.Fatal(err)
				}
				if hdr.Typeflag == tar.TypeReg {
					if _, err := tw.Write(files[filepath.Base(hdr.Name)]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := tw.Close(); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(t.TempDir(), "c10.tar")
			writeDir(t, filepath.Dir(p), map[string][]byte{"c10.tar": buf.Bytes()})
			im, err := Load(p, tc.split)
			if err != nil {
				t.Fatal(err)
			}
			checkImages(t, im, 0, tc.want)
		})
	}
}

// TestLoadErrors checks that each broken directory or archive is refused
// with an error naming the file and the problem.
func TestLoadErrors(t *testing.T) {
	without := func(name string) map[string][]byte {
		files := testBatches()
		delete(files, name)
		return files
	}
	with := func(name string, data []byte) map[string][]byte {
		files := testBatches()
		files[name] = data
		return files
	}
	badLabel := batch(0, 2)
	badLabel[RecordSize] = 10
	good := tarball(t, testBatches(), true)
	tests := []struct {
		name  string
		files map[string][]byte // written into the directory loaded
		split string
		want  []string
	}{
		{"missing batch", without("data_batch_5.bin"), "train",
			[]string{"data_batch_5.bin does not exist", "data_batch_1.bin, data_batch_2.bin"}},
		{"truncated record", with("data_batch_2.bin", batch(0, 2)[:2*RecordSize-1]), "train",
			[]string{"data_batch_2.bin: 6145 bytes, want a positive multiple of the 3073-byte record"}},
		{"extra byte", with("test_batch.bin", append(batch(0, 1), 0)), "test",
			[]string{"test_batch.bin: 3074 bytes"}},
		{"empty batch", with("test_batch.bin", nil), "test", []string{"test_batch.bin: 0 bytes"}},
		{"label 10", with("data_batch_3.bin", badLabel), "train",
			[]string{"data_batch_3.bin: record 1: label 10, want 0 to 9"}},
		{"archive without test batch", map[string][]byte{ArchiveName: tarball(t, without("test_batch.bin"), true)}, "test",
			[]string{ArchiveName, "has no test_batch.bin"}},
		{"archive with truncated batch", map[string][]byte{ArchiveName: tarball(t, with("data_batch_4.bin", batch(0, 1)[:100]), true)}, "train",
			[]string{"data_batch_4.bin in archive", ArchiveName, "100 bytes, want a positive multiple"}},
		{"truncated archive", map[string][]byte{ArchiveName: good[:len(good)/2]}, "train",
			[]string{"archive", ArchiveName, "unexpected EOF"}},
		{"corrupt gzip", map[string][]byte{ArchiveName: {0x1f, 0x8b, 0, 0}}, "test",
			[]string{ArchiveName, "gzip"}},
		{"not a tar", map[string][]byte{ArchiveName: bytes.Repeat([]byte("x"), 1024)}, "test",
			[]string{"archive", ArchiveName, "tar"}},
		// Gzip is told by both magic bytes 1f 8b; one alone leaves a (bad) tar.
		{"1f without 8b", map[string][]byte{ArchiveName: append([]byte{0x1f}, bytes.Repeat([]byte("x"), 1023)...)}, "test",
			[]string{ArchiveName, "archive/tar: invalid tar header"}},
		{"8b without 1f", map[string][]byte{ArchiveName: append([]byte{'x', 0x8b}, bytes.Repeat([]byte("x"), 1022)...)}, "test",
			[]string{ArchiveName, "archive/tar: invalid tar header"}},
		// An entry declaring exactly MaxBatchBytes passes the size check, so
		// its missing data is the error; one byte more is refused unread.
		{"entry of MaxBatchBytes cut short", map[string][]byte{ArchiveName: cutTar(t, "test_batch.bin", MaxBatchBytes, batch(0, 1))}, "test",
			[]string{"test_batch.bin in archive", "unexpected EOF"}},
		{"entry over MaxBatchBytes", map[string][]byte{ArchiveName: cutTar(t, "test_batch.bin", MaxBatchBytes+1, batch(0, 1))}, "test",
			[]string{"test_batch.bin in archive", "268435457 bytes, more than the 268435456-byte limit"}},
		{"bad split", testBatches(), "validation", []string{`split "validation"`}},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		writeDir(t, dir, tc.files)
		_, err := Load(dir, tc.split)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Load error %v, want one containing %q", tc.name, err, want)
			}
		}
	}
	_, err := Load(filepath.Join(t.TempDir(), "nowhere"), "train")
	if err == nil || !strings.Contains(err.Error(), "nowhere") || !strings.Contains(err.Error(), "https://www.cs.toronto.edu/~kriz/"+ArchiveName) {
		t.Errorf("Load(missing path) error %v, want one naming the path and the download URL", err)
	}
}

func FuzzAppendRecords(f *testing.F) {
	f.Add(batch(0, 1))
	f.Add(batch(3, 2))
	f.Add([]byte{})
	f.Add(batch(0, 1)[:RecordSize-1])
	f.Fuzz(func(t *testing.T, data []byte) {
		im := &datasets.Images{Height: Height, Width: Width, Channels: Channels}
		err := appendRecords(im, data)
		if err != nil {
			if im.N != 0 || len(im.Pixels) != 0 || len(im.Labels) != 0 {
				t.Fatalf("error %v left %d images, %d pixels, %d labels", err, im.N, len(im.Pixels), len(im.Labels))
			}
			return
		}
		if len(data) == 0 || len(data) != im.N*RecordSize {
			t.Fatalf("%d bytes decoded into %d images", len(data), im.N)
		}
		if err := im.Validate(); err != nil {
			t.Fatal(err)
		}
		// Check every value against the official layout, read record by record.
		for n := range im.N {
			rec := data[n*RecordSize:]
			if im.Labels[n] != int(rec[0]) {
				t.Fatalf("label %d = %d, want %d", n, im.Labels[n], rec[0])
			}
			for c := range Channels {
				for h := range Height {
					for w := range Width {
						want := float32(float64(rec[1+c*1024+h*32+w])/127.5 - 1)
						if got := im.Pixels[((n*Height+h)*Width+w)*Channels+c]; math.Abs(float64(got-want)) > 1e-6 {
							t.Fatalf("pixel (n=%d, h=%d, w=%d, c=%d) = %v, want %v", n, h, w, c, got, want)
						}
					}
				}
			}
		}
	})
}
