package celeba

import (
	"bytes"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The CelebA files a user points -data-dir at, fuzzed: any bytes give a
// result or an error naming the file, never a panic or an allocation of
// what a header merely declares.

func FuzzReadPartition(f *testing.F) {
	f.Add([]byte("000001.jpg 0\n000002.jpg 1\n000003.jpg 2\n"))
	f.Add([]byte("000001.jpg 3\n"))
	f.Add([]byte("000001.jpg 0\n000001.jpg 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), PartitionFile)
		os.WriteFile(path, data, 0o644)
		names, err := readPartition(path, "train")
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
		for _, n := range names {
			if strings.ContainsAny(n, " \n") || n == "" {
				t.Errorf("image name %q", n)
			}
		}
	})
}

func FuzzAttributes(f *testing.F) {
	f.Add([]byte("2\nSmiling Male\n000001.jpg 1 -1\n000002.jpg -1 1\n"))
	f.Add([]byte("3\nSmiling\n000001.jpg 1\n"))
	f.Add([]byte("1\n\n000001.jpg\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, AttributeFile), data, 0o644)
		if _, err := Attributes(root); err != nil && !strings.Contains(err.Error(), root) {
			t.Errorf("error %q does not name the file", err)
		}
	})
}

func FuzzDecodeImage(f *testing.F) {
	var good bytes.Buffer
	jpeg.Encode(&good, image.NewRGBA(image.Rect(0, 0, AlignedWidth, AlignedHeight)), nil)
	f.Add(good.Bytes())
	var small bytes.Buffer
	jpeg.Encode(&small, image.NewRGBA(image.Rect(0, 0, 8, 8)), nil)
	f.Add(small.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newDecoder(8)
		dst := make([]float32, 8*8*3)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := d.Decode(bytes.NewReader(data), dst)
		runtime.ReadMemStats(&after)
		// An aligned image decodes to 178×218×4 bytes and its resized copies.
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 4<<20+4*uint64(len(data)) {
			t.Errorf("allocated %d bytes for a %d-byte file (error %v)", allocated, len(data), err)
		}
		if err == nil {
			for _, v := range dst {
				if !(v >= -1 && v <= 1) {
					t.Fatalf("pixel %g outside [-1, 1]", v)
				}
			}
		}
	})
}
