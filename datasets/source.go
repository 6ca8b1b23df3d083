package datasets

import (
	"cmp"
	"runtime"
	"sync"
	"sync/atomic"
)

// A Source is an image set read one image at a time from files: Stream
// serves it in mini-batches as they are decoded, LoadSource into memory.
type Source interface {
	// Name identifies the set in errors, e.g. "celeba64/train".
	Name() string
	// Len is the number of images.
	Len() int
	// Shape is the height, width and channels of every image.
	Shape() (height, width, channels int)
	// NewReader returns a function that decodes image i into dst
	// (height·width·channels values in [-1, 1], HWC), its error naming the
	// file. Each goroutine calls its own reader, which may keep scratch
	// buffers.
	NewReader() func(i int, dst []float32) error
}

// A LabelledSource is a Source whose images have classes.
type LabelledSource interface {
	Source
	// Labels holds the class of each image.
	Labels() []int
}

// LoadSource decodes every image of src into memory with workers
// goroutines (0: runtime.GOMAXPROCS(0)), with src's labels when it has
// them. On failure it returns the error of the lowest-numbered image that
// failed, never a partial set.
func LoadSource(src Source, workers int) (*Images, error) {
	h, w, c := src.Shape()
	im := &Images{Name: src.Name(), N: src.Len(), Height: h, Width: w, Channels: c}
	im.Pixels = make([]float32, im.N*im.ImageSize())
	if l, ok := src.(LabelledSource); ok {
		im.Labels = l.Labels()
	}
	var (
		next     atomic.Int64 // next image to decode
		failed   atomic.Bool
		mu       sync.Mutex
		firstBad = im.N
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(cmp.Or(workers, runtime.GOMAXPROCS(0)), im.N) {
		wg.Go(func() {
			read := src.NewReader()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= im.N {
					return
				}
				if err := read(i, im.Image(i)); err != nil {
					mu.Lock()
					if i < firstBad {
						firstBad, firstErr = i, err
					}
					mu.Unlock()
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return im, nil
}
