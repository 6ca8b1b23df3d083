package datasets

import (
	"math"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// constantImages is n 2×3 images whose pixels all have the value v.
func constantImages(n int, v float32) *Images {
	pixels := make([]float32, n*6)
	for i := range pixels {
		pixels[i] = v
	}
	return &Images{Name: "constant", N: n, Height: 2, Width: 3, Channels: 1, Pixels: pixels}
}

// onesFraction is the fraction of values equal to one.
func onesFraction(values []float32, one float32) float64 {
	n := 0
	for _, v := range values {
		if v == one {
			n++
		}
	}
	return float64(n) / float64(len(values))
}

// Each pixel of value v is 1 with probability (v+1)/2: the fraction of
// ones over 6000 pixels within 4σ of it, none for v = −1, all for v = 1;
// the same seed draws the same set, another seed another, and the input
// is left alone.
func TestStaticBinarization(t *testing.T) {
	for _, v := range []float32{-1, -0.4, 0.5, 1} {
		im := constantImages(1000, v)
		bin := StaticBinarization(im, 3)
		p := (float64(v) + 1) / 2
		got := onesFraction(bin.Pixels, 1)
		if sigma := math.Sqrt(p * (1 - p) / 6000); !(math.Abs(got-p) <= 4*sigma) {
			t.Errorf("v = %g: fraction of ones %.4f, want %.4f ± %.4f", v, got, p, 4*sigma)
		}
		if f := onesFraction(bin.Pixels, -1); got+f != 1 {
			t.Errorf("v = %g: pixels other than −1 and 1", v)
		}
		if im.Pixels[0] != v {
			t.Errorf("v = %g: the input changed", v)
		}
		if err := bin.Validate(); err != nil {
			t.Error(err)
		}
		again, other := StaticBinarization(im, 3), StaticBinarization(im, 4)
		if !slices.Equal(again.Pixels, bin.Pixels) {
			t.Errorf("v = %g: seed 3 drew two different sets", v)
		}
		if 0 < p && p < 1 && slices.Equal(other.Pixels, bin.Pixels) {
			t.Errorf("v = %g: seeds 3 and 4 drew the same set", v)
		}
	}
}

// yieldBits reads one batch of b as a flat slice and its shape.
func yieldBits(t *testing.T, b *BinaryBatches) ([]float32, []int) {
	t.Helper()
	_, inputs, _, err := b.Yield()
	if err != nil {
		t.Fatal(err)
	}
	return tensors.MustCopyFlatData[float32](inputs[0]), inputs[0].Shape().Dimensions
}

// Dynamic binarisation draws ones at the pixels' probability in vectors of
// H·W·C values 0 and 1; a batch sought again is drawn again identically,
// and a second epoch's draws differ. Without it, pixels are thresholded.
func TestBinaryBatches(t *testing.T) {
	im := constantImages(400, -0.4) // probability 0.3
	batches, err := NewBatches(im, 100)
	if err != nil {
		t.Fatal(err)
	}
	dynamic := NewBinaryBatches(batches, true, 9)
	var epoch0 [][]float32
	for range 4 {
		bits, dims := yieldBits(t, dynamic)
		if !slices.Equal(dims, []int{100, 6}) {
			t.Fatalf("batch of shape %v, want [100 6]", dims)
		}
		if f := onesFraction(bits, 1) + onesFraction(bits, 0); f != 1 {
			t.Fatalf("values other than 0 and 1 (%.3f are)", f)
		}
		epoch0 = append(epoch0, bits)
	}
	all := slices.Concat(epoch0...)
	if got, sigma := onesFraction(all, 1), math.Sqrt(0.3*0.7/float64(len(all))); !(math.Abs(got-0.3) <= 4*sigma) {
		t.Errorf("fraction of ones %.4f, want 0.3 ± %.4f", got, 4*sigma)
	}
	resumed, err := NewBatches(im, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := resumed.Seek(0, 2); err != nil {
		t.Fatal(err)
	}
	if bits, _ := yieldBits(t, NewBinaryBatches(resumed, true, 9)); !slices.Equal(bits, epoch0[2]) {
		t.Error("batch 2 of epoch 0 drawn again after Seek differs")
	}
	dynamic.Reset()
	if bits, _ := yieldBits(t, dynamic); slices.Equal(bits, epoch0[0]) {
		t.Error("epoch 1 drew the same bits as epoch 0")
	}

	mixed := &Images{Name: "mixed", N: 1, Height: 1, Width: 4, Channels: 1, Pixels: []float32{-1, -0.2, 0.3, 1}}
	one, err := NewBatches(mixed, 1)
	if err != nil {
		t.Fatal(err)
	}
	if bits, _ := yieldBits(t, NewBinaryBatches(one, false, 0)); !slices.Equal(bits, []float32{0, 0, 1, 1}) {
		t.Errorf("thresholded %v, want [0 0 1 1]", bits)
	}
	if got := Bits(mixed); !slices.Equal(got, []float32{0, 0, 1, 1}) {
		t.Errorf("Bits %v, want [0 0 1 1]", got)
	}
}

// Endless goes on into the next epoch, as Reset would: 3 batches of 2 per
// epoch of 7 images, then the next epoch's order.
func TestEndless(t *testing.T) {
	im := constantImages(7, 0)
	for i := range im.Pixels {
		im.Pixels[i] = float32(i/6) / 7 // each image its own value
	}
	reference, err := NewBatches(im, 2, WithSeed(4))
	if err != nil {
		t.Fatal(err)
	}
	served, err := NewBatches(im, 2, WithSeed(4))
	if err != nil {
		t.Fatal(err)
	}
	endless := Endless(served)
	for epoch := range 3 {
		for batch := range 3 {
			_, want, _, err := reference.Yield()
			if err != nil {
				t.Fatal(err)
			}
			_, got, _, err := endless.Yield()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tensors.MustCopyFlatData[float32](got[0]), tensors.MustCopyFlatData[float32](want[0])) {
				t.Errorf("epoch %d batch %d differs from the batches reset by hand", epoch, batch)
			}
		}
		if _, _, _, err := reference.Yield(); err == nil {
			t.Fatal("the reference epoch did not end after 3 batches")
		}
		reference.Reset()
	}
}
