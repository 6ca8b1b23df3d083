package serving

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// doubling is a model whose output row is twice the sum of its input row,
// recording the batch sizes it was called with and failing if it is ever
// called by two goroutines at once.
type doubling struct {
	width   int
	mu      sync.Mutex
	sizes   []int
	running atomic.Int32
	delay   time.Duration
}

func (d *doubling) compute(inputs []float32, size int) ([]float32, error) {
	if d.running.Add(1) != 1 {
		return nil, errors.New("called concurrently")
	}
	defer d.running.Add(-1)
	time.Sleep(d.delay)
	d.mu.Lock()
	d.sizes = append(d.sizes, size)
	d.mu.Unlock()
	out := make([]float32, size)
	for r := range size {
		for _, v := range inputs[r*d.width : (r+1)*d.width] {
			out[r] += 2 * v
		}
	}
	return out, nil
}

// TestBatcherGathersConcurrentCallsIntoCompiledSizes sends 40 concurrent
// calls of 1 to 3 rows: each gets twice its own rows' sums (whatever its
// batch), every batch is one of the sizes, no batch runs beside another,
// and the calls share batches.
func TestBatcherGathersConcurrentCallsIntoCompiledSizes(t *testing.T) {
	d := &doubling{width: 3, delay: 2 * time.Millisecond}
	b, err := NewBatcher(d.compute, BatcherOptions{Sizes: []int{8, 1, 4}, Width: 3, OutWidth: 1, MaxWait: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const calls = 40
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for c := range calls {
		wg.Go(func() {
			rows := 1 + c%3
			inputs := make([]float32, rows*3)
			want := make([]float32, rows)
			for i := range inputs {
				inputs[i] = float32(c*100 + i)
				want[i/3] += 2 * inputs[i]
			}
			got, err := b.Do(context.Background(), inputs, rows)
			if err == nil && !slices.Equal(got, want) {
				err = fmt.Errorf("call %d: got %v, want %v", c, got, want)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, s := range d.sizes {
		if s != 1 && s != 4 && s != 8 {
			t.Errorf("a batch of %d rows; the sizes are 1, 4 and 8", s)
		}
	}
	if len(d.sizes) >= calls {
		t.Errorf("%d batches for %d calls: none were gathered", len(d.sizes), calls)
	}
}

// TestBatcherPadsToTheSmallestSizeThatHolds: one call of 3 rows runs at
// size 4, and a call of more rows than the largest size is refused.
func TestBatcherPadsToTheSmallestSizeThatHolds(t *testing.T) {
	d := &doubling{width: 2}
	b, err := NewBatcher(d.compute, BatcherOptions{Sizes: []int{1, 4, 8}, Width: 2, OutWidth: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Do(context.Background(), []float32{1, 2, 3, 4, 5, 6}, 3)
	if err != nil || !slices.Equal(got, []float32{6, 14, 22}) || !slices.Equal(d.sizes, []int{4}) {
		t.Errorf("got %v (%v) in batches %v; want [6 14 22] in one batch of 4", got, err, d.sizes)
	}
	if _, err := b.Do(context.Background(), make([]float32, 18), 9); err == nil {
		t.Error("9 rows, largest size 8: no error")
	}
	b.Close()
	if _, err := b.Do(context.Background(), []float32{1, 2}, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

// TestBatcherPadsWithThePaddingRow: a batch of 3 rows at size 4 has the
// padding row as its fourth, for a model that computes only on valid
// rows; a padding row of the wrong width is refused.
func TestBatcherPadsWithThePaddingRow(t *testing.T) {
	var seen []float32
	compute := func(inputs []float32, size int) ([]float32, error) {
		seen = slices.Clone(inputs)
		return make([]float32, size), nil
	}
	b, err := NewBatcher(compute, BatcherOptions{Sizes: []int{4}, Width: 2, OutWidth: 1, Pad: []float64{7, -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Do(context.Background(), []float32{1, 2, 3, 4, 5, 6}, 3); err != nil || !slices.Equal(seen, []float32{1, 2, 3, 4, 5, 6, 7, -1}) {
		t.Errorf("the batch computed %v (%v); want the rows, then the padding row 7, -1", seen, err)
	}
	if _, err := NewBatcher(compute, BatcherOptions{Sizes: []int{4}, Width: 2, OutWidth: 1, Pad: []float64{7}}); err == nil {
		t.Error("a padding row of 1 value for rows of 2: no error")
	}
}

// TestBatcherOptionsAreChecked: sizes and widths are refused, naming them.
func TestBatcherOptionsAreChecked(t *testing.T) {
	for _, o := range []BatcherOptions{{Width: 1, OutWidth: 1}, {Sizes: []int{0, 4}, Width: 1, OutWidth: 1}, {Sizes: []int{4}, OutWidth: 1}, {Sizes: []int{4}, Width: 1, OutWidth: 1, MaxWait: -1}} {
		if _, err := NewBatcher[float32](nil, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
