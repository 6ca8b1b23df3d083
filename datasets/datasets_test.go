package datasets

import (
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// pixel is the value the test sets store at (n, h, w, c): distinct for every
// position and inside [-1, 1], so a yielded value identifies its source.
func pixel(n, h, w, c, H, W, C, N int) float32 {
	flat := ((n*H+h)*W+w)*C + c
	return float32(flat)/float32(N*H*W*C)*2 - 1
}

// testImages builds an N×H×W×C set filled with pixel(), labelled with each
// image's own index so that labels identify examples.
func testImages(N, H, W, C int, labelled bool) *Images {
	im := &Images{Name: "test", N: N, Height: H, Width: W, Channels: C}
	for n := range N {
		for h := range H {
			for w := range W {
				for c := range C {
					im.Pixels = append(im.Pixels, pixel(n, h, w, c, H, W, C, N))
				}
			}
		}
		if labelled {
			im.Labels = append(im.Labels, n)
		}
	}
	return im
}

// readEpoch yields batches until io.EOF and returns the labels in order and
// the number of batches.
func readEpoch(t *testing.T, b *Batches) (labels []int, batches int) {
	t.Helper()
	for {
		_, _, ys, err := b.Yield()
		if errors.Is(err, io.EOF) {
			return labels, batches
		}
		if err != nil {
			t.Fatalf("Yield: %v", err)
		}
		batches++
		tensors.MustConstFlatData(ys[0], func(flat []int32) {
			for _, v := range flat {
				labels = append(labels, int(v))
			}
		})
	}
}

// TestImagesValidate checks Validate against hand-made sets of 4 2×2×1
// images: each bad dimension, length, pixel and label is reported (naming the
// set and the bad value), and the extremes of the documented ranges — pixels
// ±1 and label MaxInt32 — are accepted. Empty dimensions come with
// consistently empty slices, so only the positivity check can catch them.
func TestImagesValidate(t *testing.T) {
	tests := []struct {
		name    string
		modify  func(im *Images)
		wantErr string // empty: valid
	}{
		{"valid", func(*Images) {}, ""},
		{"unlabelled", func(im *Images) { im.Labels = nil }, ""},
		{"pixels at both ends of [-1, 1]", func(im *Images) { im.Pixels[0], im.Pixels[15] = -1, 1 }, ""},
		{"largest label", func(im *Images) { im.Labels[2] = math.MaxInt32 }, ""},
		{"no images", func(im *Images) { im.N, im.Pixels, im.Labels = 0, nil, nil }, "N=0 H=2 W=2 C=1, want all positive"},
		{"negative count", func(im *Images) { im.N = -4 }, "N=-4"},
		{"zero height", func(im *Images) { im.Height = 0 }, "want all positive"},
		{"zero width", func(im *Images) { im.Width, im.Pixels = 0, nil }, "W=0 C=1, want all positive"},
		{"zero channels", func(im *Images) { im.Channels, im.Pixels = 0, nil }, "C=0, want all positive"},
		{"short pixels", func(im *Images) { im.Pixels = im.Pixels[:5] }, "5 pixel values"},
		{"label count", func(im *Images) { im.Labels = im.Labels[:2] }, "2 labels for 4 images"},
		// Flat index 7 of 2×2×1 images is the last pixel of image 1.
		{"pixel above 1", func(im *Images) { im.Pixels[7] = 1.5 }, "flat index 7 (image 1)"},
		{"NaN pixel", func(im *Images) { im.Pixels[0] = float32(math.NaN()) }, "NaN"},
		{"negative label", func(im *Images) { im.Labels[3] = -1 }, "label -1 of image 3"},
		{"label beyond int32", func(im *Images) { im.Labels[1] = math.MaxInt32 + 1 }, "label 2147483648 of image 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			im := testImages(4, 2, 2, 1, true)
			tc.modify(im)
			err := im.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `"test"`) {
				t.Fatalf("Validate error = %v, want one naming the set and containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestHead(t *testing.T) {
	const N, H, W, C = 5, 2, 3, 2
	for _, c := range []struct{ n, want int }{{0, N}, {-1, N}, {1, 1}, {3, 3}, {N, N}, {N + 4, N}} {
		for _, labelled := range []bool{true, false} {
			head := testImages(N, H, W, C, labelled).Head(c.n)
			if head.N != c.want || len(head.Pixels) != c.want*H*W*C || (labelled && len(head.Labels) != c.want) {
				t.Fatalf("Head(%d): N=%d, %d pixels, %d labels; want %d images", c.n, head.N, len(head.Pixels), len(head.Labels), c.want)
			}
			if err := head.Validate(); err != nil {
				t.Errorf("Head(%d): %v", c.n, err)
			}
			for n := range c.want {
				for h := range H {
					for w := range W {
						for ch := range C {
							if v, e := head.Image(n)[(h*W+w)*C+ch], pixel(n, h, w, ch, H, W, C, N); v != e {
								t.Fatalf("Head(%d) image %d pixel (%d,%d,%d) = %v, want %v", c.n, n, h, w, ch, v, e)
							}
						}
					}
				}
				if labelled && head.Labels[n] != n {
					t.Errorf("Head(%d) label %d = %d, want %d", c.n, n, head.Labels[n], n)
				}
			}
		}
	}
}

func TestSubsetAndConcat(t *testing.T) {
	const N, H, W, C = 5, 2, 3, 2
	im := testImages(N, H, W, C, true)
	indices := []int{4, 0, 4, 2}
	sub, err := im.Subset(indices)
	if err != nil {
		t.Fatal(err)
	}
	both, err := Concat("pooled", im, sub)
	if err != nil {
		t.Fatal(err)
	}
	if both.N != N+len(indices) || both.Name != "pooled" {
		t.Fatalf("Concat: N=%d name %q, want %d and \"pooled\"", both.N, both.Name, N+len(indices))
	}
	// Image k of both must be source image want[k], pixel for pixel.
	want := append([]int{0, 1, 2, 3, 4}, indices...)
	for k, src := range want {
		if both.Labels[k] != src {
			t.Errorf("image %d: label %d, want %d", k, both.Labels[k], src)
		}
		got := both.Image(k)
		for h := range H {
			for w := range W {
				for c := range C {
					if v, e := got[(h*W+w)*C+c], pixel(src, h, w, c, H, W, C, N); v != e {
						t.Fatalf("image %d pixel (%d,%d,%d) = %v, want %v", k, h, w, c, v, e)
					}
				}
			}
		}
	}
	if err := both.Validate(); err != nil {
		t.Errorf("Validate(Concat): %v", err)
	}

	if _, err := im.Subset([]int{1, N}); err == nil || !strings.Contains(err.Error(), "index 5") {
		t.Errorf("Subset out of range: error %v, want one naming index 5", err)
	}
	if _, err := Concat("x", im, testImages(2, H, W+1, C, true)); err == nil {
		t.Error("Concat of different shapes: no error")
	}
	if _, err := Concat("x", im, testImages(2, H, W, C, false)); err == nil {
		t.Error("Concat of labelled and unlabelled: no error")
	}
}

// TestSubsetAndConcatUnlabelled checks that Subset and Concat of unlabelled
// sets stay unlabelled (nil Labels, not an empty slice that Validate would
// count as 0 labels for N images) and copy the right images, pixel for pixel
// against pixel().
func TestSubsetAndConcatUnlabelled(t *testing.T) {
	const N, H, W, C = 3, 1, 2, 2
	im := testImages(N, H, W, C, false)
	sub, err := im.Subset([]int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	both, err := Concat("pooled", im, sub)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		set  *Images
		want []int // source image of each image
	}{
		{"Subset", sub, []int{2, 0}},
		{"Concat", both, []int{0, 1, 2, 2, 0}},
	} {
		if c.set.Labels != nil {
			t.Errorf("%s of unlabelled images: labels %v, want nil", c.name, c.set.Labels)
		}
		if err := c.set.Validate(); err != nil {
			t.Errorf("%s of unlabelled images: %v", c.name, err)
		}
		if c.set.N != len(c.want) {
			t.Fatalf("%s: N=%d, want %d", c.name, c.set.N, len(c.want))
		}
		for k, src := range c.want {
			for h := range H {
				for w := range W {
					for ch := range C {
						if v, e := c.set.Image(k)[(h*W+w)*C+ch], pixel(src, h, w, ch, H, W, C, N); v != e {
							t.Fatalf("%s image %d pixel (%d,%d,%d) = %v, want %v", c.name, k, h, w, ch, v, e)
						}
					}
				}
			}
		}
	}
}

func TestBatchesCoverEachExampleOncePerEpoch(t *testing.T) {
	tests := []struct {
		n, batch    int
		partial     bool
		wantBatches int
	}{
		{n: 12, batch: 4, wantBatches: 3},
		{n: 13, batch: 4, wantBatches: 3},
		{n: 13, batch: 4, partial: true, wantBatches: 4},
		{n: 12, batch: 4, partial: true, wantBatches: 3}, // no partial batch to keep
		{n: 7, batch: 7, partial: true, wantBatches: 1},
		{n: 7, batch: 7, wantBatches: 1},
		{n: 7, batch: 1, wantBatches: 7},
	}
	for _, tc := range tests {
		opts := []BatchOption{WithSeed(3)}
		if tc.partial {
			opts = append(opts, WithPartialBatch())
		}
		b, err := NewBatches(testImages(tc.n, 1, 2, 1, true), tc.batch, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.BatchesPerEpoch(); got != tc.wantBatches {
			t.Errorf("n=%d batch=%d partial=%v: BatchesPerEpoch %d, want %d", tc.n, tc.batch, tc.partial, got, tc.wantBatches)
		}
		for epoch := range 3 {
			labels, batches := readEpoch(t, b)
			if batches != tc.wantBatches {
				t.Errorf("n=%d batch=%d epoch %d: %d batches, want %d", tc.n, tc.batch, epoch, batches, tc.wantBatches)
			}
			wantCount := tc.n
			if !tc.partial {
				wantCount = tc.n / tc.batch * tc.batch
			}
			seen := make(map[int]int)
			for _, l := range labels {
				seen[l]++
			}
			if len(labels) != wantCount || len(seen) != wantCount {
				t.Errorf("n=%d batch=%d epoch %d: %d examples, %d distinct, want %d of each",
					tc.n, tc.batch, epoch, len(labels), len(seen), wantCount)
			}
			if _, _, _, err := b.Yield(); !errors.Is(err, io.EOF) {
				t.Errorf("Yield after the epoch's end: %v, want io.EOF", err)
			}
			b.Reset()
		}
	}
}

func TestBatchesPixelsMatchSource(t *testing.T) {
	const N, H, W, C, B = 9, 3, 2, 3, 4
	b, err := NewBatches(testImages(N, H, W, C, true), B, WithSeed(1), WithPartialBatch())
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, xs, ys, err := b.Yield()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		x, y := xs[0], ys[0]
		n := y.Shape().Dimensions[0]
		if x.DType() != dtypes.Float32 || !slices.Equal(x.Shape().Dimensions, []int{n, H, W, C}) {
			t.Fatalf("inputs shape %s, want float32 [%d %d %d %d]", x.Shape(), n, H, W, C)
		}
		if y.DType() != dtypes.Int32 || y.Rank() != 1 {
			t.Fatalf("labels shape %s, want int32 [%d]", y.Shape(), n)
		}
		pixels := x.Value().([][][][]float32)
		labels := y.Value().([]int32)
		for i := range n {
			src := int(labels[i])
			for h := range H {
				for w := range W {
					for c := range C {
						if got, want := pixels[i][h][w][c], pixel(src, h, w, c, H, W, C, N); got != want {
							t.Fatalf("example %d (image %d) pixel (%d,%d,%d) = %v, want %v", i, src, h, w, c, got, want)
						}
					}
				}
			}
		}
	}
}

func TestBatchesUnlabelled(t *testing.T) {
	b, err := NewBatches(testImages(6, 2, 2, 1, false), 3)
	if err != nil {
		t.Fatal(err)
	}
	_, xs, ys, err := b.Yield()
	if err != nil || len(xs) != 1 || ys != nil {
		t.Fatalf("Yield = %d inputs, labels %v, err %v; want 1 input, nil labels", len(xs), ys, err)
	}
}

func TestBatchesOrder(t *testing.T) {
	const N, B = 50, 10
	epochs := func(opts ...BatchOption) [][]int {
		b, err := NewBatches(testImages(N, 1, 1, 1, true), B, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]int
		for range 3 {
			labels, _ := readEpoch(t, b)
			out = append(out, labels)
			b.Reset()
		}
		return out
	}
	a, again, other := epochs(WithSeed(7)), epochs(WithSeed(7)), epochs(WithSeed(8))
	identity := make([]int, N)
	for i := range identity {
		identity[i] = i
	}
	for e := range a {
		if !slices.Equal(a[e], again[e]) {
			t.Errorf("epoch %d: same seed gave different orders", e)
		}
		if slices.Equal(a[e], other[e]) {
			t.Errorf("epoch %d: seeds 7 and 8 gave the same order", e)
		}
		if slices.Equal(a[e], identity) {
			t.Errorf("epoch %d: not shuffled", e)
		}
	}
	if slices.Equal(a[0], a[1]) || slices.Equal(a[1], a[2]) {
		t.Error("consecutive epochs have the same order")
	}
	for e, order := range epochs(WithoutShuffle()) {
		if !slices.Equal(order, identity) {
			t.Errorf("WithoutShuffle epoch %d: order %v, want stored order", e, order)
		}
	}
}

func TestBatchesSeekResumes(t *testing.T) {
	const N, B = 23, 5
	images := testImages(N, 1, 1, 1, true)
	newBatches := func() *Batches {
		b, err := NewBatches(images, B, WithSeed(11), WithPartialBatch())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Record the labels of the first three epochs, and each batch's position.
	type step struct{ epoch, batch int }
	var stream []int
	var starts []step
	b := newBatches()
	for range 3 {
		for {
			e, k := b.Position()
			_, _, ys, err := b.Yield()
			if errors.Is(err, io.EOF) {
				break
			}
			starts = append(starts, step{e, k})
			stream = append(stream, int(ys[0].Value().([]int32)[0]))
		}
		b.Reset()
	}
	for i, s := range starts {
		r := newBatches()
		if err := r.Seek(s.epoch, s.batch); err != nil {
			t.Fatal(err)
		}
		// The resumed reader must replay the rest of the recorded stream.
		for j := i; j < len(stream); j++ {
			_, _, ys, err := r.Yield()
			if errors.Is(err, io.EOF) {
				r.Reset()
				_, _, ys, err = r.Yield()
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := int(ys[0].Value().([]int32)[0]); got != stream[j] {
				t.Fatalf("Seek(%d, %d): batch %d starts with image %d, want %d", s.epoch, s.batch, j-i, got, stream[j])
			}
		}
	}
	// Batch BatchesPerEpoch (5 = ⌈23/5⌉) is the documented end of an epoch:
	// seeking there is allowed and leaves nothing to yield.
	end := newBatches()
	if err := end.Seek(2, 5); err != nil {
		t.Fatalf("Seek to the end of epoch 2: %v", err)
	}
	if e, k := end.Position(); e != 2 || k != 5 {
		t.Errorf("Position after Seek(2, 5) = (%d, %d), want (2, 5)", e, k)
	}
	if _, _, _, err := end.Yield(); !errors.Is(err, io.EOF) {
		t.Errorf("Yield after Seek to the end of the epoch: %v, want io.EOF", err)
	}
	if err := newBatches().Seek(0, 6); err == nil || !strings.Contains(err.Error(), "batch 6") {
		t.Errorf("Seek past the epoch's end: error %v, want one naming batch 6", err)
	}
	if err := newBatches().Seek(-1, 0); err == nil {
		t.Error("Seek to epoch -1: no error")
	}
}

func TestNewBatchesErrors(t *testing.T) {
	images := testImages(8, 2, 2, 1, true)
	for _, size := range []int{0, -3, 9} {
		if _, err := NewBatches(images, size); err == nil || !strings.Contains(err.Error(), "batch size "+strconv.Itoa(size)) {
			t.Errorf("NewBatches(batch %d): error %v, want one naming the size", size, err)
		}
	}
	bad := testImages(8, 2, 2, 1, true)
	bad.Pixels[3] = -2
	if _, err := NewBatches(bad, 2); err == nil {
		t.Error("NewBatches of invalid images: no error")
	}
}
