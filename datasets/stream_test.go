package datasets

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// memorySource serves an Images set as a Source, failing on image bad
// (when ≥ 0), so that a Stream can be checked against Batches.
type memorySource struct {
	im  *Images
	bad int
}

func (m memorySource) Name() string                  { return m.im.Name }
func (m memorySource) Len() int                      { return m.im.N }
func (m memorySource) Shape() (height, width, c int) { return m.im.Height, m.im.Width, m.im.Channels }
func (m memorySource) Labels() []int                 { return m.im.Labels }
func (m memorySource) NewReader() func(i int, dst []float32) error {
	return func(i int, dst []float32) error {
		if i == m.bad {
			return fmt.Errorf("image %d: corrupt", i)
		}
		copy(dst, m.im.Image(i))
		return nil
	}
}

// numbered is a set of n 2×3×1 images whose pixels all hold their index,
// scaled into [-1, 1], labelled i mod 3.
func numbered(n int) *Images {
	im := &Images{Name: "numbered", N: n, Height: 2, Width: 3, Channels: 1, Labels: make([]int, n)}
	for i := range n {
		for range 6 {
			im.Pixels = append(im.Pixels, float32(i)/float32(n))
		}
		im.Labels[i] = i % 3
	}
	return im
}

// TestStreamMatchesBatches checks that a Stream yields, over three epochs
// and from a Seek into the middle of one, the batches Batches yields from
// the same images and seed.
func TestStreamMatchesBatches(t *testing.T) {
	im := numbered(11)
	for _, partial := range []bool{false, true} {
		stream, err := NewStream(memorySource{im, -1}, StreamOptions{BatchSize: 4, Seed: 7, KeepPartial: partial, Workers: 3, Prefetch: 2})
		if err != nil {
			t.Fatal(err)
		}
		opts := []BatchOption{WithSeed(7)}
		if partial {
			opts = append(opts, WithPartialBatch())
		}
		batches, err := NewBatches(im, 4, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if stream.BatchesPerEpoch() != batches.BatchesPerEpoch() || stream.Len() != 11 {
			t.Fatalf("%d batches per epoch of %d images, want %d of 11", stream.BatchesPerEpoch(), stream.Len(), batches.BatchesPerEpoch())
		}
		compare := func(what string) {
			_, got, _, err1 := stream.Yield()
			_, want, _, err2 := batches.Yield()
			if errors.Is(err1, io.EOF) && errors.Is(err2, io.EOF) {
				stream.Reset()
				batches.Reset()
				return
			}
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: errors %v and %v", what, err1, err2)
			}
			g, w := tensors.MustCopyFlatData[float32](got[0]), tensors.MustCopyFlatData[float32](want[0])
			if !slices.Equal(g, w) || !slices.Equal(got[0].Shape().Dimensions, want[0].Shape().Dimensions) {
				t.Fatalf("%s (partial %v): stream yields %v, batches %v", what, partial, g, w)
			}
		}
		for i := range 3 * (stream.BatchesPerEpoch() + 1) {
			compare(fmt.Sprintf("yield %d", i))
		}
		if err := stream.Seek(5, 1); err != nil {
			t.Fatal(err)
		}
		if err := batches.Seek(5, 1); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			compare(fmt.Sprintf("yield %d after Seek(5, 1)", i))
		}
		stream.Close()
	}
}

// TestStreamPrefetch checks the depth of the queue of ready batches: the
// Prefetch asked for, or DefaultPrefetch for zero.
func TestStreamPrefetch(t *testing.T) {
	for _, tc := range []struct{ prefetch, want int }{{0, DefaultPrefetch}, {2, 2}} {
		s, err := NewStream(memorySource{numbered(5), -1}, StreamOptions{BatchSize: 1, Prefetch: tc.prefetch, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := cap(s.pipe.ready); got != tc.want {
			t.Errorf("Prefetch %d: %d batches queued ahead, want %d", tc.prefetch, got, tc.want)
		}
		s.Close()
	}
}

// TestLoadSource checks that LoadSource copies every image and label, and
// that a failing image fails the whole load with its error.
func TestLoadSource(t *testing.T) {
	im := numbered(9)
	got, err := LoadSource(memorySource{im, -1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Pixels, im.Pixels) || !slices.Equal(got.Labels, im.Labels) || got.Name != im.Name || got.N != 9 {
		t.Errorf("LoadSource = %+v, want a copy of %+v", got, im)
	}
	if _, err := LoadSource(memorySource{im, 6}, 2); err == nil || !strings.Contains(err.Error(), "image 6: corrupt") {
		t.Errorf("a corrupt image: error %v", err)
	}
	s, err := NewStream(memorySource{im, 6}, StreamOptions{BatchSize: 9, NoShuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, _, err := s.Yield(); err == nil || !strings.Contains(err.Error(), "image 6: corrupt") {
		t.Errorf("a stream over a corrupt image: error %v", err)
	}
}
