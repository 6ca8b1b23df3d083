package serving

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrClosed is what a Batcher answers once it is closed.
var ErrClosed = errors.New("serving: the model is shut down")

// BatchFunc computes the outputs of a batch of exactly size rows, each of
// width values in inputs (rows past the requests' are padding: zeros, or
// BatcherOptions.Pad), and returns outWidth values a row.
type BatchFunc[T Value] func(inputs []T, size int) ([]T, error)

// Value is the type of a batch's values: float32 for images, float64 for
// rows of a table (on the data's scale, as the batch commands read them).
type Value interface{ float32 | float64 }

// A Batcher gathers concurrent requests into batches for one model: the
// model is called from one goroutine only, so a model that is not safe
// for concurrent use (lebm.Model) serves any number of callers, and every
// batch is one of a fixed set of sizes, so that each compiles once. A
// batch closes when it holds the largest size's rows or MaxWait after its
// first request, and is padded up to the smallest size that holds it.
type Batcher[T Value] struct {
	sizes           []int
	width, outWidth int
	maxWait         time.Duration
	compute         BatchFunc[T]
	pad             []T
	jobs            chan *job[T]
	done            chan struct{}
	observe         func(rows, size int, took time.Duration, err error)
}

// job is one caller's rows and where its outputs go.
type job[T Value] struct {
	inputs []T
	rows   int
	out    chan result[T]
}

type result[T Value] struct {
	outputs []T
	err     error
}

// BatcherOptions configure NewBatcher.
type BatcherOptions struct {
	// Sizes are the batch sizes compute is called with, each ≥ 1; a
	// request may have at most the largest's rows.
	Sizes []int
	// Width and OutWidth are the values of a row going in and coming out.
	Width, OutWidth int
	// Pad, when set, is the row (Width values) a batch is padded with,
	// for a model that computes only on valid rows; else zeros.
	Pad []float64
	// MaxWait is how long a batch waits for more requests after its first
	// (0: it takes only what is already queued).
	MaxWait time.Duration
	// Observe, when set, is told of every batch: the requests' rows, the
	// size it ran at, how long compute took and its error.
	Observe func(rows, size int, took time.Duration, err error)
}

// NewBatcher starts a Batcher over compute; Close stops it.
func NewBatcher[T Value](compute BatchFunc[T], o BatcherOptions) (*Batcher[T], error) {
	sizes := slices.Clone(o.Sizes)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	if len(sizes) == 0 || sizes[0] < 1 {
		return nil, fmt.Errorf("serving: batch sizes %v: want one or more sizes ≥ 1", o.Sizes)
	}
	if o.Width < 1 || o.OutWidth < 1 || o.MaxWait < 0 {
		return nil, fmt.Errorf("serving: batcher of rows of %d values in, %d out, waiting %v: want widths ≥ 1 and a wait ≥ 0", o.Width, o.OutWidth, o.MaxWait)
	}
	if o.Pad != nil && len(o.Pad) != o.Width {
		return nil, fmt.Errorf("serving: a padding row of %d values for rows of %d", len(o.Pad), o.Width)
	}
	b := &Batcher[T]{sizes: sizes, width: o.Width, outWidth: o.OutWidth, maxWait: o.MaxWait, compute: compute,
		jobs: make(chan *job[T]), done: make(chan struct{}), observe: o.Observe}
	for _, v := range o.Pad {
		b.pad = append(b.pad, T(v))
	}
	go b.loop()
	return b, nil
}

// MaxRows is the most rows one call of Do may have: the largest batch size.
func (b *Batcher[T]) MaxRows() int { return b.sizes[len(b.sizes)-1] }

// Do computes the outputs of rows rows (inputs holds rows × Width values),
// in a batch with whatever other calls arrive meanwhile. It returns when
// they are computed, when ctx ends (the rows may still be computed, their
// outputs dropped) or when the Batcher is closed.
func (b *Batcher[T]) Do(ctx context.Context, inputs []T, rows int) ([]T, error) {
	if rows < 1 || rows > b.MaxRows() || len(inputs) != rows*b.width {
		return nil, fmt.Errorf("serving: %d values for %d rows: want 1 to %d rows of %d values", len(inputs), rows, b.MaxRows(), b.width)
	}
	j := &job[T]{inputs: inputs, rows: rows, out: make(chan result[T], 1)}
	select {
	case b.jobs <- j:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.done:
		return nil, ErrClosed
	}
	select {
	case r := <-j.out:
		return r.outputs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the Batcher once the batch it is computing is done; calls
// queued after it get ErrClosed.
func (b *Batcher[T]) Close() { close(b.done) }

// warm computes a batch of every size, each row a copy of row, so that
// every graph is compiled before the first request (which must wait: the
// batch is computed from the caller's goroutine).
func (b *Batcher[T]) warm(row []T) error {
	for _, size := range b.sizes {
		if _, err := b.compute(slices.Repeat(row, size), size); err != nil {
			return fmt.Errorf("warming up the batch size %d: %w", size, err)
		}
	}
	return nil
}

// loop is the one goroutine that calls compute.
func (b *Batcher[T]) loop() {
	var next *job[T] // a request that did not fit the last batch
	for {
		if next == nil {
			select {
			case next = <-b.jobs:
			case <-b.done:
				return
			}
		}
		batch := []*job[T]{next}
		rows := next.rows
		next = nil
		timer := time.NewTimer(b.maxWait)
	gather:
		for rows < b.MaxRows() {
			select {
			case j := <-b.jobs:
				if rows+j.rows > b.MaxRows() {
					next = j
					break gather
				}
				batch, rows = append(batch, j), rows+j.rows
			case <-timer.C:
				break gather
			case <-b.done:
				break gather
			}
		}
		timer.Stop()
		b.run(batch, rows)
	}
}

// run computes one batch and hands each job its outputs.
func (b *Batcher[T]) run(batch []*job[T], rows int) {
	size := b.sizes[len(b.sizes)-1]
	for _, s := range b.sizes {
		if s >= rows {
			size = s
			break
		}
	}
	inputs := make([]T, size*b.width)
	at := 0
	for _, j := range batch {
		at += copy(inputs[at:], j.inputs)
	}
	if b.pad != nil {
		for ; at < len(inputs); at += b.width {
			copy(inputs[at:], b.pad)
		}
	}
	start := time.Now()
	outputs, err := b.compute(inputs, size)
	if err == nil && len(outputs) != size*b.outWidth {
		err = fmt.Errorf("serving: the model returned %d values for a batch of %d rows of %d", len(outputs), size, b.outWidth)
	}
	if b.observe != nil {
		b.observe(rows, size, time.Since(start), err)
	}
	at = 0
	for _, j := range batch {
		if err != nil {
			j.out <- result[T]{err: err}
			continue
		}
		j.out <- result[T]{outputs: outputs[at : at+j.rows*b.outWidth]}
		at += j.rows * b.outWidth
	}
}
