package imagefile

import (
	"bytes"
	"image"
	"runtime"
	"testing"
)

// FuzzDecode feeds Decode any bytes, as grey and as RGB: pixels in
// [-1, 1] or an error, never a panic, and never more memory than the file
// and a bounded image (MaxPixels is lowered to 4096 here) need.
func FuzzDecode(f *testing.F) {
	// Small seeds: the fuzzer minimises what it finds, which takes long
	// on kilobyte files.
	f.Add(encode(f, image.NewRGBA(image.Rect(0, 0, 10, 9)), "png"))
	f.Add(encode(f, image.NewRGBA(image.Rect(0, 0, 8, 8)), "jpeg"))
	f.Add(encode(f, image.NewGray(image.Rect(0, 0, 9, 12)), "png"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, channels := range []int{1, 3} {
			d := NewDecoder(8, channels)
			d.MaxPixels = 4096
			dst := make([]float32, 8*8*channels)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := d.Decode(bytes.NewReader(data), dst)
			runtime.ReadMemStats(&after)
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 1<<20+4*uint64(len(data)) {
				t.Errorf("allocated %d bytes for a %d-byte file (error %v)", allocated, len(data), err)
			}
			if err == nil {
				for _, v := range dst {
					if !(v >= -1 && v <= 1) {
						t.Fatalf("pixel %g outside [-1, 1]", v)
					}
				}
			}
		}
	})
}
