package datasets

import (
	"io"
	"testing"
)

// BenchmarkBatchesYield measures images per second that in-memory batching
// delivers (shuffled copy into a fresh tensor) at the paper's shapes, batch
// 128 — the rate to compare with what a training step consumes.
func BenchmarkBatchesYield(b *testing.B) {
	shapes := []struct {
		name    string
		h, w, c int
	}{{"mnist", 28, 28, 1}, {"svhn-cifar10", 32, 32, 3}, {"celeba64", 64, 64, 3}}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			const n, batch = 2048, 128
			im := &Images{Name: s.name, N: n, Height: s.h, Width: s.w, Channels: s.c, Pixels: make([]float32, n*s.h*s.w*s.c)}
			batches, err := NewBatches(im, batch, WithSeed(1))
			if err != nil {
				b.Fatal(err)
			}
			images := 0
			for b.Loop() {
				_, inputs, _, err := batches.Yield()
				if err == io.EOF {
					batches.Reset()
					continue
				}
				if err != nil {
					b.Fatal(err)
				}
				images += batch
				inputs[0].FinalizeAll()
			}
			b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "images/s")
		})
	}
}
