package celeba

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets"
)

// benchImages is the number of images of the benchmark folder.
const benchImages = 200

// benchFolder writes benchImages full-size 178×218 JPEGs, all in the
// training split, at quality 90 (CelebA's files average about 11 kB; these
// come out at a similar size): smooth colour fields with a little noise, so
// that decoding does the work a photograph asks.
func benchFolder(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	var partition strings.Builder
	for n := range benchImages {
		img := image.NewRGBA(image.Rect(0, 0, AlignedWidth, AlignedHeight))
		phase := rng.Float64() * 2 * math.Pi
		for y := range AlignedHeight {
			for x := range AlignedWidth {
				wave := func(fx, fy, shift float64) uint8 {
					v := 128 + 90*math.Sin(fx*float64(x)+fy*float64(y)+phase+shift) + rng.NormFloat64()*6
					return uint8(min(max(v, 0), 255))
				}
				img.SetRGBA(x, y, color.RGBA{wave(0.03, 0.02, 0), wave(0.02, 0.05, 1), wave(0.04, 0.01, 2), 255})
			}
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("%06d.jpg", n+1)
		writeFile(b, filepath.Join(root, ImageDir, name), buf.Bytes())
		fmt.Fprintf(&partition, "%s 0\n", name)
	}
	writeFile(b, filepath.Join(root, PartitionFile), []byte(partition.String()))
	return root
}

// BenchmarkDecode measures the images per second Load and a Stream decode
// from a folder of full-size JPEGs, with one worker per CPU.
func BenchmarkDecode(b *testing.B) {
	root := benchFolder(b)
	for _, size := range []int{64, 128} {
		opts := Options{Size: size, Split: "train", Limit: -1}
		b.Run(fmt.Sprintf("Load/%d", size), func(b *testing.B) {
			for b.Loop() {
				if _, err := Load(root, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(benchImages*b.N)/b.Elapsed().Seconds(), "images/s")
		})
		b.Run(fmt.Sprintf("Stream/%d", size), func(b *testing.B) {
			s, err := NewStream(root, opts, datasets.StreamOptions{BatchSize: 50})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() { // one epoch
				for {
					_, inputs, _, err := s.Yield()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					inputs[0].FinalizeAll()
				}
				s.Reset()
			}
			b.ReportMetric(float64(benchImages*b.N)/b.Elapsed().Seconds(), "images/s")
		})
	}
}
