package mnist

import (
	"bytes"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// idx encodes an unsigned-byte IDX file by hand: 0, 0, type 0x08, rank, then
// big-endian uint32 dimensions and the data.
func idx(dims []int, data []byte) []byte {
	out := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		out = append(out, byte(d>>24), byte(d>>16), byte(d>>8), byte(d))
	}
	return append(out, data...)
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Three 2×4 images: rows ≠ columns, so a transposition would show.
const testN, testH, testW = 3, 2, 4

// testPixelValues holds the images' bytes in IDX (row-major) order: distinct,
// including the extremes 0 and 255.
var testPixelValues = []byte{
	0, 255, 1, 254, 17, 34, 51, 68,
	85, 102, 119, 136, 153, 170, 187, 204,
	221, 238, 2, 3, 5, 8, 13, 128,
}

func testPixel(n, h, w int) byte { return testPixelValues[(n*testH+h)*testW+w] }

var testLabels = []byte{7, 0, 9}

func TestLoad(t *testing.T) {
	tests := []struct {
		name       string
		split      string
		gzipImages bool
		gzipLabels bool
		imagesFile string
		labelsFile string
		wantName   string
	}{
		{"plain train", "train", false, false, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "train"},
		{"gzipped test", "test", true, true, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", "test"},
		// Compression is told by the magic bytes, not by the name.
		{"gzip without .gz", "test", true, false, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", "test"},
		{"plain with .gz", "train", false, true, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte", "train"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tiny")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			images := idx([]int{testN, testH, testW}, testPixelValues)
			labels := idx([]int{testN}, testLabels)
			if tc.gzipImages {
				images = gzipped(t, images)
			}
			if tc.gzipLabels {
				labels = gzipped(t, labels)
			}
			writeFile(t, dir, tc.imagesFile, images)
			writeFile(t, dir, tc.labelsFile, labels)

			im, err := Load(dir, tc.split)
			if err != nil {
				t.Fatal(err)
			}
			if im.Name != "tiny/"+tc.wantName || !slices.Equal(im.Shape(), []int{testN, testH, testW, 1}) {
				t.Fatalf("Load: name %q shape %v, want %q [%d %d %d 1]", im.Name, im.Shape(), "tiny/"+tc.wantName, testN, testH, testW)
			}
			for n := range testN {
				if im.Labels[n] != int(testLabels[n]) {
					t.Errorf("label %d = %d, want %d", n, im.Labels[n], testLabels[n])
				}
				for h := range testH {
					for w := range testW {
						want := float64(testPixel(n, h, w))/127.5 - 1
						if got := im.Pixels[(n*testH+h)*testW+w]; abs(float64(got)-want) > 1e-6 {
							t.Errorf("pixel (%d,%d,%d) = %v, want %v", n, h, w, got, want)
						}
					}
				}
			}
		})
	}
}

func abs(x float64) float64 { return max(x, -x) }

// TestLoadHead checks that LoadHead returns the first n images and labels
// of the files, by the pixel formula, and the whole set for n ≤ 0 or n past
// the end; and that it reads no further than it needs: files cut short
// after their first item (gzipped or not) load with n = 1 but not whole.
func TestLoadHead(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "train-images-idx3-ubyte.gz", gzipped(t, idx([]int{testN, testH, testW}, testPixelValues)))
	writeFile(t, dir, "train-labels-idx1-ubyte", idx([]int{testN}, testLabels))
	for _, tc := range []struct{ n, want int }{{1, 1}, {2, 2}, {testN, testN}, {testN + 5, testN}, {0, testN}, {-1, testN}} {
		im, err := LoadHead(dir, "train", tc.n)
		if err != nil {
			t.Fatalf("LoadHead(%d): %v", tc.n, err)
		}
		if im.N != tc.want || len(im.Pixels) != tc.want*testH*testW || len(im.Labels) != tc.want {
			t.Fatalf("LoadHead(%d): %d images, %d pixels, %d labels; want %d images", tc.n, im.N, len(im.Pixels), len(im.Labels), tc.want)
		}
		for n := range tc.want {
			if im.Labels[n] != int(testLabels[n]) {
				t.Errorf("LoadHead(%d): label %d = %d, want %d", tc.n, n, im.Labels[n], testLabels[n])
			}
			for i := range testH * testW {
				want := float64(testPixel(n, i/testW, i%testW))/127.5 - 1
				if got := im.Pixels[n*testH*testW+i]; abs(float64(got)-want) > 1e-6 {
					t.Fatalf("LoadHead(%d): image %d pixel %d = %v, want %v", tc.n, n, i, got, want)
				}
			}
		}
	}

	cut := t.TempDir()
	images := idx([]int{testN, testH, testW}, testPixelValues)
	labels := idx([]int{testN}, testLabels)
	writeFile(t, cut, "t10k-images-idx3-ubyte", images[:len(images)-(testN-1)*testH*testW])
	writeFile(t, cut, "t10k-labels-idx1-ubyte.gz", gzipped(t, labels[:len(labels)-(testN-1)]))
	if _, err := Load(cut, "test"); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("Load of files holding one of %d items: error %v, want one saying truncated", testN, err)
	}
	if im, err := LoadHead(cut, "test", 1); err != nil || im.N != 1 {
		t.Errorf("LoadHead(1) of files holding their first item: %v", err)
	}
}

// TestReadIDXErrors checks that each malformed stream, built by hand with
// idx, is refused with an error naming what is wrong, and that a valid one
// reads back its dimensions and bytes.
func TestReadIDXErrors(t *testing.T) {
	valid := idx([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6})
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "truncated IDX header"},
		{"bad magic", append([]byte{0x12, 0x34}, valid[2:]...), "not an IDX file"},
		// Either of the two leading zero bytes alone being wrong is enough.
		{"magic 01 00", append([]byte{0x01, 0x00}, valid[2:]...), "magic number 01 00 08 02"},
		{"magic 00 01", append([]byte{0x00, 0x01}, valid[2:]...), "magic number 00 01 08 02"},
		{"rank zero", []byte{0, 0, 8, 0}, "not an IDX file"},
		{"float type", append([]byte{0, 0, 0x0d}, valid[3:]...), "data type 0x0d"},
		{"short dimensions", valid[:9], "truncated IDX header"},
		{"short data", valid[:len(valid)-1], "5 bytes, want 6"},
		{"gzipped short data", gzipped(t, valid[:len(valid)-2]), "4 bytes, want 6"},
		{"trailing data", append(slices.Clone(valid), 9), "longer than the 6 bytes"},
		{"huge dimensions", idx([]int{0xffffffff, 0xffffffff, 0xffffffff}, nil), "byte limit"},
		{"one byte over the limit", idx([]int{MaxIDXBytes + 1}, nil), "[1073741825], more than the 1073741824-byte limit"},
		// A header declaring exactly MaxIDXBytes is within the limit: the
		// short data, not the size, is the error.
		{"exactly the limit", idx([]int{1 << 15, 1 << 15}, []byte{1, 2}), "2 bytes, want 1073741824"},
		{"corrupt gzip", []byte{0x1f, 0x8b, 1, 2, 3}, "gzip"},
	}
	for _, tc := range tests {
		dims, data, err := ReadIDX(bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ReadIDX = %v, %d bytes, error %v; want an error containing %q", tc.name, dims, len(data), err, tc.want)
		}
	}
	dims, data, err := ReadIDX(bytes.NewReader(valid))
	if err != nil || !slices.Equal(dims, []int{2, 3}) || !slices.Equal(data, []byte{1, 2, 3, 4, 5, 6}) {
		t.Errorf("ReadIDX(valid) = %v, %v, %v; want [2 3], [1 2 3 4 5 6], nil", dims, data, err)
	}
}

func TestLoadErrors(t *testing.T) {
	images := idx([]int{testN, testH, testW}, testPixelValues)
	tests := []struct {
		name  string
		split string
		files map[string][]byte
		want  []string
	}{
		{"missing images", "train", nil,
			[]string{"train-images-idx3-ubyte.gz", "dataset-fashion-mnist"}},
		{"missing labels", "test", map[string][]byte{"t10k-images-idx3-ubyte": images},
			[]string{"t10k-labels-idx1-ubyte.gz", "apt-get install"}},
		{"count mismatch", "train", map[string][]byte{
			"train-images-idx3-ubyte": images,
			"train-labels-idx1-ubyte": idx([]int{testN + 1}, make([]byte, testN+1)),
		}, []string{"train-labels-idx1-ubyte", "want [3]", "train-images-idx3-ubyte"}},
		{"images not rank 3", "train", map[string][]byte{
			"train-images-idx3-ubyte.gz": gzipped(t, idx([]int{4, 6}, make([]byte, 24))),
		}, []string{"train-images-idx3-ubyte.gz has dimensions [4 6]"}},
		{"corrupt file names itself", "test", map[string][]byte{
			"t10k-images-idx3-ubyte": images[:len(images)-3],
		}, []string{"t10k-images-idx3-ubyte: truncated IDX data"}},
		{"no images", "test", map[string][]byte{
			"t10k-images-idx3-ubyte": idx([]int{0, testH, testW}, nil),
			"t10k-labels-idx1-ubyte": idx([]int{0}, nil),
		}, []string{"t10k-images-idx3-ubyte", "want all positive"}},
		{"bad split", "validation", nil, []string{`"validation"`, `"train" or "test"`}},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		for name, b := range tc.files {
			writeFile(t, dir, name, b)
		}
		_, err := Load(dir, tc.split)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Load error %v, want one containing %q", tc.name, err, want)
			}
		}
	}
}

// TestLoadDebianFashionMNIST needs Debian's dataset-fashion-mnist package,
// which scripts/test.sh installs; without it the test is skipped, saying
// what to install.
func TestLoadDebianFashionMNIST(t *testing.T) {
	if err := CheckFashionInstalled(); err != nil {
		t.Skipf("%v: apt-get install dataset-fashion-mnist (./scripts/test.sh installs it)", err)
	}
	im, err := Load(DefaultFashionDir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(im.Shape(), []int{10000, 28, 28, 1}) || im.Name != "fashion-mnist/test" {
		t.Fatalf("shape %v name %q, want [10000 28 28 1] \"fashion-mnist/test\"", im.Shape(), im.Name)
	}
	var perClass [10]int
	for i, l := range im.Labels {
		if l < 0 || l > 9 {
			t.Fatalf("label %d of image %d, want 0..9", l, i)
		}
		perClass[l]++
	}
	// The Fashion-MNIST test split is balanced: 1,000 images per class.
	for c, n := range perClass {
		if n != 1000 {
			t.Errorf("class %d has %d test images, want 1000", c, n)
		}
	}
	lo, hi := im.Pixels[0], im.Pixels[0]
	for _, v := range im.Pixels {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo != -1 || hi != 1 {
		t.Errorf("pixel range [%v, %v], want [-1, 1] (byte values 0 and 255 both occur)", lo, hi)
	}
}

// FuzzReadIDX feeds arbitrary bytes to the IDX parser: it must return an
// error or dimensions whose product is the data length, never panic.
func FuzzReadIDX(f *testing.F) {
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3})
	f.Add([]byte{0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 9, 8, 7, 6})
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		dims, values, err := ReadIDX(bytes.NewReader(data))
		if err != nil {
			return
		}
		n := 1
		for _, d := range dims {
			n *= d
		}
		if n != len(values) {
			t.Fatalf("dims %v (product %d) but %d values", dims, n, len(values))
		}
		// The first item alone is the start of the whole.
		if len(dims) == 0 || dims[0] == 0 {
			return
		}
		headDims, head, err := ReadIDXHead(bytes.NewReader(data), 1)
		if err != nil || headDims[0] != 1 || !slices.Equal(headDims[1:], dims[1:]) || !bytes.Equal(head, values[:n/dims[0]]) {
			t.Fatalf("ReadIDXHead(1) = %v, %d bytes, %v; want the first of the %v items", headDims, len(head), err, dims)
		}
	})
}

// TestWriteIDXEdges checks WriteIDX at the ends of the format's ranges
// against headers encoded by hand: a zero dimension, the largest dimension
// 2³²−1 and 255 dimensions are written; a negative dimension, no dimension
// and 256 dimensions are refused, naming the bad value.
func TestWriteIDXEdges(t *testing.T) {
	ones := func(n int) []int {
		d := make([]int, n)
		for i := range d {
			d[i] = 1
		}
		return d
	}
	tests := []struct {
		name    string
		dims    []int
		data    []byte
		wantErr string // empty: the file must equal idx(dims, data)
	}{
		{"zero dimension", []int{0, 5}, nil, ""},
		{"largest dimension", []int{0, math.MaxUint32}, nil, ""},
		{"255 dimensions", ones(255), []byte{42}, ""},
		{"negative dimension", []int{-1}, nil, "dimension -1 out of range"},
		{"negative dimensions filling the data", []int{-2, -3}, make([]byte, 6), "dimension -2 out of range"},
		{"dimension beyond uint32", []int{math.MaxUint32 + 1, 0}, nil, "dimension 4294967296 out of range"},
		{"no dimensions", nil, []byte{7}, "do not fill dimensions []"},
		{"256 dimensions", ones(256), []byte{42}, "1 values do not fill"},
	}
	for _, tc := range tests {
		path := filepath.Join(t.TempDir(), "x-idx-ubyte")
		err := WriteIDX(path, tc.dims, tc.data)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: WriteIDX error %v, want one containing %q", tc.name, err, tc.wantErr)
			}
			if _, statErr := os.Stat(path); statErr == nil {
				t.Errorf("%s: WriteIDX failed but wrote %s", tc.name, path)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: WriteIDX: %v", tc.name, err)
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := idx(tc.dims, tc.data); !bytes.Equal(raw, want) {
			t.Errorf("%s: file bytes % x, want % x", tc.name, raw, want)
		}
	}
}

func TestWriteIDXReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x-idx3-ubyte")
	data := []byte{1, 2, 3, 4, 5, 6}
	if err := WriteIDX(path, []int{1, 2, 3}, data); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := idx([]int{1, 2, 3}, data); !bytes.Equal(raw, want) {
		t.Errorf("file bytes %v, want %v", raw, want)
	}
	if err := WriteIDX(path, []int{4}, data); err == nil {
		t.Error("6 values for dimension 4: no error")
	}
}
