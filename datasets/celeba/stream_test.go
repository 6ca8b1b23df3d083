package celeba

import (
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets"
)

// yieldPixels calls Yield once and returns the batch's pixels and shape.
func yieldPixels(t *testing.T, ds interface {
	Yield() (any, []*tensors.Tensor, []*tensors.Tensor, error)
}) (pixels []float32, dims []int, err error) {
	t.Helper()
	_, inputs, labels, err := ds.Yield()
	if err != nil {
		return nil, nil, err
	}
	if len(inputs) != 1 || labels != nil {
		t.Fatalf("Yield: %d inputs and labels %v, want 1 input and no labels", len(inputs), labels)
	}
	return tensors.MustCopyFlatData[float32](inputs[0]), inputs[0].Shape().Dimensions, nil
}

func newStream(t *testing.T, root string, opts Options, sopts datasets.StreamOptions) *datasets.Stream {
	t.Helper()
	s, err := NewStream(root, opts, sopts)
	if err != nil {
		t.Fatalf("NewStream(%+v, %+v): %v", opts, sopts, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStreamCoversEpoch identifies each yielded image by comparing its
// pixels with Load's images (the fixture's images all differ) and checks
// that an epoch yields each image exactly once, in the order of a
// permutation that changes between epochs.
func TestStreamCoversEpoch(t *testing.T) {
	root := newFixture(t, false)
	opts := Options{Size: 64, Split: "train", Limit: -1}
	im := loadOK(t, root, opts)
	s := newStream(t, root, opts, datasets.StreamOptions{BatchSize: 2, Seed: 3, KeepPartial: true, Prefetch: 1})
	if s.Name() != "celeba64/train" || s.BatchesPerEpoch() != 3 {
		t.Fatalf("stream %q with %d batches per epoch, want celeba64/train with 3", s.Name(), s.BatchesPerEpoch())
	}
	size := im.ImageSize()
	var orders [][]int
	for epoch := range 4 {
		var order []int
		for b := 0; ; b++ {
			pixels, dims, err := yieldPixels(t, s)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := []int{min(2, im.N-2*b), 64, 64, 3}; !slices.Equal(dims, want) {
				t.Fatalf("epoch %d batch %d: shape %v, want %v", epoch, b, dims, want)
			}
			for k := range dims[0] {
				found := -1
				for i := range im.N {
					if slices.Equal(pixels[k*size:(k+1)*size], im.Image(i)) {
						found = i
					}
				}
				if found < 0 {
					t.Fatalf("epoch %d batch %d image %d matches none of Load's images", epoch, b, k)
				}
				order = append(order, found)
			}
		}
		if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(sorted, []int{0, 1, 2, 3, 4}) {
			t.Fatalf("epoch %d yielded images %v, want each of 0…4 once", epoch, order)
		}
		orders = append(orders, order)
		s.Reset()
	}
	if slices.EqualFunc(orders[1:], orders[:3], slices.Equal) {
		t.Errorf("four epochs yield the same order %v", orders[0])
	}
}

// TestStreamMatchesBatches checks that a Stream yields, batch for batch,
// what datasets.Batches yields over Load's result with the same settings.
func TestStreamMatchesBatches(t *testing.T) {
	dir, zipped := newFixture(t, false), newFixture(t, true)
	tests := []struct {
		root  string
		opts  Options
		sopts datasets.StreamOptions
		bopts []datasets.BatchOption
	}{
		{dir, Options{Size: 64, Split: "train", Limit: -1}, datasets.StreamOptions{BatchSize: 2, Seed: 11},
			[]datasets.BatchOption{datasets.WithSeed(11)}},
		{dir, Options{Size: 64, Split: "train", Limit: 4, Workers: 1}, datasets.StreamOptions{BatchSize: 3, Seed: 5, KeepPartial: true},
			[]datasets.BatchOption{datasets.WithSeed(5), datasets.WithPartialBatch()}},
		{zipped, Options{Size: 128, Split: "train", Limit: -1, Workers: 3}, datasets.StreamOptions{BatchSize: 1, NoShuffle: true, Prefetch: 2},
			[]datasets.BatchOption{datasets.WithoutShuffle()}},
		{zipped, Options{Size: 64, Split: "valid"}, datasets.StreamOptions{BatchSize: 2},
			nil},
	}
	for _, tc := range tests {
		im := loadOK(t, tc.root, tc.opts)
		batches, err := datasets.NewBatches(im, tc.sopts.BatchSize, tc.bopts...)
		if err != nil {
			t.Fatal(err)
		}
		s := newStream(t, tc.root, tc.opts, tc.sopts)
		if s.BatchesPerEpoch() != batches.BatchesPerEpoch() {
			t.Fatalf("%+v: %d batches per epoch, want %d", tc.sopts, s.BatchesPerEpoch(), batches.BatchesPerEpoch())
		}
		for epoch := range 3 {
			for b := 0; ; b++ {
				want, _, wantErr := yieldPixels(t, batches)
				got, _, err := yieldPixels(t, s)
				if errors.Is(wantErr, io.EOF) != errors.Is(err, io.EOF) {
					t.Fatalf("%+v epoch %d batch %d: stream error %v, in-memory error %v", tc.sopts, epoch, b, err, wantErr)
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil || wantErr != nil {
					t.Fatal(err, wantErr)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%+v epoch %d batch %d: stream and in-memory batches differ", tc.sopts, epoch, b)
				}
			}
			s.Reset()
			batches.Reset()
		}
	}
}

func TestStreamSeek(t *testing.T) {
	root := newFixture(t, false)
	opts := Options{Size: 64, Split: "train", Limit: -1}
	sopts := datasets.StreamOptions{BatchSize: 2, Seed: 9}

	// Read through epochs 0 and 1 and into epoch 2, recording every batch.
	ref := newStream(t, root, opts, sopts)
	seen := map[[2]int][]float32{}
	for epoch := range 3 {
		for b := range ref.BatchesPerEpoch() {
			if e, p := ref.Position(); e != epoch || p != b {
				t.Fatalf("Position = %d, %d; want %d, %d", e, p, epoch, b)
			}
			pixels, _, err := yieldPixels(t, ref)
			if err != nil {
				t.Fatal(err)
			}
			seen[[2]int{epoch, b}] = pixels
		}
		if _, _, err := yieldPixels(t, ref); !errors.Is(err, io.EOF) {
			t.Fatalf("epoch %d: error %v after the last batch, want io.EOF", epoch, err)
		}
		ref.Reset()
	}

	// Seek a fresh stream around in any order.
	s := newStream(t, root, opts, sopts)
	for _, pos := range [][2]int{{2, 1}, {0, 0}, {1, 1}, {1, 0}, {2, 0}, {0, 1}} {
		if err := s.Seek(pos[0], pos[1]); err != nil {
			t.Fatal(err)
		}
		pixels, _, err := yieldPixels(t, s)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pixels, seen[pos]) {
			t.Errorf("batch after Seek(%d, %d) differs from batch %d of epoch %d read in sequence",
				pos[0], pos[1], pos[1], pos[0])
		}
		if e, b := s.Position(); e != pos[0] || b != pos[1]+1 {
			t.Errorf("after Seek(%d, %d) and Yield, Position = %d, %d; want %d, %d", pos[0], pos[1], e, b, pos[0], pos[1]+1)
		}
	}
	// Seeking to the end of an epoch leaves nothing to yield.
	if err := s.Seek(4, s.BatchesPerEpoch()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := yieldPixels(t, s); !errors.Is(err, io.EOF) {
		t.Errorf("Yield after seeking to the end of an epoch: error %v, want io.EOF", err)
	}
	for _, pos := range [][2]int{{-1, 0}, {0, -1}, {0, s.BatchesPerEpoch() + 1}} {
		if err := s.Seek(pos[0], pos[1]); err == nil || !strings.Contains(err.Error(), "want epoch ≥ 0") {
			t.Errorf("Seek(%d, %d): error %v, want a range error", pos[0], pos[1], err)
		}
	}
}

// TestStreamDecodeError checks that a corrupt image fails the batch holding
// it, naming the image, and that the stream goes on.
func TestStreamDecodeError(t *testing.T) {
	root := newFixture(t, false)
	writeFile(t, filepath.Join(root, ImageDir, "000003.jpg"), []byte("garbage"))
	s := newStream(t, root, Options{Size: 64, Split: "train", Limit: -1}, datasets.StreamOptions{BatchSize: 1, NoShuffle: true})
	for b := range 5 {
		_, _, err := yieldPixels(t, s)
		if b == 2 {
			if err == nil || !strings.Contains(err.Error(), filepath.Join(ImageDir, "000003.jpg")) {
				t.Errorf("batch 2: error %v, want one naming 000003.jpg", err)
			}
		} else if err != nil {
			t.Errorf("batch %d: %v", b, err)
		}
	}
}

func TestNewStreamErrors(t *testing.T) {
	root := newFixture(t, false)
	opts := Options{Size: 64, Split: "valid"}
	tests := []struct {
		opts    Options
		sopts   datasets.StreamOptions
		wantErr string
	}{
		{opts, datasets.StreamOptions{BatchSize: 0}, "batch size 0, want a value in [1, 2]"},
		{opts, datasets.StreamOptions{BatchSize: 3}, "batch size 3"},
		{opts, datasets.StreamOptions{BatchSize: 1, Prefetch: -1}, "prefetch -1"},
		{Options{Size: 64, Split: "train"}, datasets.StreamOptions{BatchSize: 1}, "fewer than the 40000 requested"},
		{Options{Size: 100, Split: "train"}, datasets.StreamOptions{BatchSize: 1}, "image size 100"},
	}
	for _, tc := range tests {
		if s, err := NewStream(root, tc.opts, tc.sopts); err == nil {
			s.Close()
			t.Errorf("NewStream(%+v, %+v) succeeded, want an error containing %q", tc.opts, tc.sopts, tc.wantErr)
		} else if !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("NewStream(%+v, %+v): error %q, want it to contain %q", tc.opts, tc.sopts, err, tc.wantErr)
		}
	}
}

// TestStreamClose checks that Close stops every goroutine the stream
// started, including while batches are being decoded, and that a closed
// stream refuses further use.
func TestStreamClose(t *testing.T) {
	root := newFixture(t, true)
	before := runtime.NumGoroutine()
	s, err := NewStream(root, Options{Size: 128, Split: "train", Limit: -1, Workers: 4}, datasets.StreamOptions{BatchSize: 1, Prefetch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := yieldPixels(t, s); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Goroutines that have returned may take a moment to be accounted for.
	for wait := 0; runtime.NumGoroutine() > before && wait < 100; wait++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before NewStream", n, before)
	}
	if _, _, _, err := s.Yield(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Yield after Close: error %v, want one saying the stream is closed", err)
	}
	if err := s.Seek(0, 0); err == nil {
		t.Error("Seek after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
