package fid

import (
	"testing"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/internal/testutil"
)

// BenchmarkFeatures compares the two ways of computing convolutions and
// pools on the test backend (SimpleGo unless $EDLEBM_TEST_BACKEND names
// another): XLA's native ops and gathered windows. Width-16 network,
// batches of 8 28×28 grayscale images.
//
//	go test -run XXX -bench Features ./fid
func BenchmarkFeatures(b *testing.B) {
	sd, err := ReadStateDict(zipWeights)
	if err != nil {
		b.Fatal(err)
	}
	set := &datasets.Images{Name: "zeros", N: 8, Height: 28, Width: 28, Channels: 1, Pixels: make([]float32, 8*28*28)}
	for _, bc := range []struct {
		name   string
		native bool
	}{{"native", true}, {"gather", false}} {
		b.Run(bc.name, func(b *testing.B) {
			net, err := fromStateDict(testutil.Backend(), sd, &ops{native: bc.native})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := net.Features(set, 8); err != nil { // compiles
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := net.Features(set, 8); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*set.N), "ms/image")
		})
	}
}
