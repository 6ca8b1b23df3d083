package datasets

import (
	"math"
	"strings"
	"testing"
)

// labelledImages makes n 1×1 images whose pixel encodes the index, so each
// image can be traced through a split.
func labelledImages(n, classes int) *Images {
	im := &Images{Name: "pool", N: n, Height: 1, Width: 1, Channels: 1, Pixels: make([]float32, n), Labels: make([]int, n)}
	for i := range n {
		im.Pixels[i] = float32(i) / float32(n)
		im.Labels[i] = i % classes
	}
	return im
}

func TestAnomalySplit(t *testing.T) {
	pool := labelledImages(1000, 10)
	for _, heldOut := range []int{1, 4, 9} {
		s, err := NewAnomalySplit(pool, heldOut, 42, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		if s.Train.N != 720 || s.Test.N != 280 || len(s.Anomalous) != 280 {
			t.Fatalf("held out %d: train %d, test %d (%d flags); want 720, 180+100", heldOut, s.Train.N, s.Test.N, len(s.Anomalous))
		}
		seen := map[float32]bool{}
		for i, l := range s.Train.Labels {
			if l == heldOut {
				t.Fatalf("held out %d: training image %d has the held-out class", heldOut, i)
			}
			seen[s.Train.Pixels[i]] = true
		}
		anomalies := 0
		for i, l := range s.Test.Labels {
			if s.Anomalous[i] != (l == heldOut) {
				t.Fatalf("held out %d: test image %d has class %d but anomalous=%v", heldOut, i, l, s.Anomalous[i])
			}
			if s.Anomalous[i] {
				anomalies++
			}
			if seen[s.Test.Pixels[i]] {
				t.Fatalf("held out %d: image %v is in both train and test", heldOut, s.Test.Pixels[i])
			}
			seen[s.Test.Pixels[i]] = true
		}
		if anomalies != 100 || len(seen) != 1000 {
			t.Errorf("held out %d: %d anomalies and %d distinct images; want 100 and all 1000", heldOut, anomalies, len(seen))
		}
		again, _ := NewAnomalySplit(pool, heldOut, 42, 0.8)
		for i := range s.Train.Pixels {
			if again.Train.Pixels[i] != s.Train.Pixels[i] {
				t.Fatalf("held out %d: the same seed gave a different split", heldOut)
			}
		}
	}
}

// TestAnomalySplitErrors checks that each invalid input is refused with an
// error naming the bad value: unlabelled images, an absent class, fractions
// outside (0, 1) and a fraction that leaves no normal image for training.
func TestAnomalySplitErrors(t *testing.T) {
	unlabelled := labelledImages(10, 2)
	unlabelled.Labels = nil
	cases := []struct {
		name    string
		pool    *Images
		heldOut int
		frac    float64
		mention string
	}{
		{"no labels", unlabelled, 1, 0.8, "no labels"},
		{"absent class", labelledImages(10, 2), 7, 0.8, "held-out class 7"},
		{"bad fraction", labelledImages(10, 2), 1, 1.5, "1.5"},
		// The open interval's ends are refused as fractions, not as empty sides.
		{"fraction 0", labelledImages(10, 2), 1, 0, "training fraction 0: want a number in (0, 1)"},
		{"fraction 1", labelledImages(10, 2), 1, 1, "training fraction 1: want a number in (0, 1)"},
		{"NaN fraction", labelledImages(10, 2), 1, math.NaN(), "training fraction NaN"},
		// 5 normal images at 0.1: ⌊0.5⌋ = 0 training images.
		{"empty training side", labelledImages(10, 2), 1, 0.1, "5 normal images leave an empty side at fraction 0.1"},
	}
	for _, c := range cases {
		if _, err := NewAnomalySplit(c.pool, c.heldOut, 42, c.frac); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.mention)
		}
	}
}
