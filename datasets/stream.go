package datasets

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
)

// DefaultPrefetch is the number of decoded batches a Stream keeps ready
// unless StreamOptions.Prefetch says otherwise.
const DefaultPrefetch = 4

// StreamOptions configures the batches of NewStream.
type StreamOptions struct {
	// BatchSize is the number of images per batch.
	BatchSize int
	// Seed seeds the per-epoch shuffle.
	Seed uint64
	// NoShuffle serves the images in file order every epoch.
	NoShuffle bool
	// KeepPartial yields the last, smaller batch of an epoch instead of
	// dropping it.
	KeepPartial bool
	// Prefetch is the number of decoded batches kept ready ahead of Yield;
	// zero means DefaultPrefetch.
	Prefetch int
	// Workers is the number of images decoded in parallel; zero means
	// runtime.GOMAXPROCS(0).
	Workers int
}

// Stream is a train.Dataset that decodes the mini-batches of a Source on
// the fly, so that memory holds a few batches instead of the whole set.
//
// Each Yield returns inputs = [float32 tensor [B, H, W, C]] in [-1, 1] and
// no labels. Behind the current position a pool of StreamOptions.Workers
// goroutines decodes the following batches in parallel into a queue of
// StreamOptions.Prefetch ready batches, so at most Prefetch + 2 batches
// (B·H·W·C float32 each) are held at a time.
//
// Epoch e visits the images in the order of a permutation drawn from a PCG
// generator seeded with (Seed, e), the same order NewBatches with
// WithSeed(Seed) gives over LoadSource's result: a stream and an in-memory
// set yield identical batches, and a resumed run continues the same order
// by calling Seek. A Stream is not safe for concurrent use; call Close to
// stop its goroutines and, when the Source is an io.Closer, close it.
type Stream struct {
	src       Source
	h, w, c   int
	n         int
	batchSize int
	seed      uint64
	shuffle   bool
	partial   bool
	workers   int
	prefetch  int

	epoch  int
	batch  int   // index of the batch the next Yield returns
	order  []int // image order of the current epoch
	pipe   *pipeline
	closed bool
}

var _ train.Dataset = (*Stream)(nil)

// pending is a batch being decoded: Yield waits on done, then reads pixels
// and errs.
type pending struct {
	pixels []float32 // len(errs)·H·W·C values
	errs   []error   // error of each image, nil once decoded
	done   sync.WaitGroup
}

// pipeline decodes the batches of one epoch from a starting batch on. Its
// producer goroutine queues each batch on ready (blocking once Prefetch
// batches wait there) and hands its images to the workers.
type pipeline struct {
	ready chan *pending // batches in order; closed after the epoch's last
	stop  chan struct{} // closed to abandon the epoch
	wg    sync.WaitGroup
}

// job asks a worker to decode image index into slot of batch p.
type job struct {
	p           *pending
	slot, index int
}

// NewStream returns a Stream over src positioned at the start of epoch 0,
// already decoding its first batches. An image that fails to decode is
// reported by the Yield that needs it. It errors if the batch size is not
// in [1, src.Len()].
func NewStream(src Source, opts StreamOptions) (*Stream, error) {
	if opts.Prefetch < 0 || opts.Workers < 0 {
		return nil, fmt.Errorf("%s: stream with prefetch %d and %d workers, want positive numbers or 0 for the defaults", src.Name(), opts.Prefetch, opts.Workers)
	}
	n := src.Len()
	if opts.BatchSize <= 0 || opts.BatchSize > n {
		return nil, fmt.Errorf("%s: batch size %d, want a value in [1, %d] (the number of images)", src.Name(), opts.BatchSize, n)
	}
	h, w, c := src.Shape()
	s := &Stream{
		src: src, h: h, w: w, c: c, n: n,
		batchSize: opts.BatchSize, seed: opts.Seed, shuffle: !opts.NoShuffle, partial: opts.KeepPartial,
		workers: cmp.Or(opts.Workers, runtime.GOMAXPROCS(0)), prefetch: cmp.Or(opts.Prefetch, DefaultPrefetch),
		order: make([]int, n),
	}
	s.moveTo(0, 0)
	return s, nil
}

// Name returns the name of the image set, e.g. "celeba64/train".
func (s *Stream) Name() string { return s.src.Name() }

// Len returns the number of images of the set.
func (s *Stream) Len() int { return s.n }

// BatchesPerEpoch returns the number of batches Yield returns before io.EOF.
func (s *Stream) BatchesPerEpoch() int {
	if s.partial {
		return (s.n + s.batchSize - 1) / s.batchSize
	}
	return s.n / s.batchSize
}

// Position returns the epoch and the index within it of the batch the next
// Yield returns; batch equals BatchesPerEpoch when the epoch is exhausted.
func (s *Stream) Position() (epoch, batch int) { return s.epoch, s.batch }

// Seek positions the stream so that the next Yield returns batch `batch` of
// epoch `epoch`, exactly as if the earlier batches had been read, and starts
// decoding from there.
func (s *Stream) Seek(epoch, batch int) error {
	if s.closed {
		return fmt.Errorf("%s: seek on a closed stream", s.Name())
	}
	if epoch < 0 || batch < 0 || batch > s.BatchesPerEpoch() {
		return fmt.Errorf("%s: seek to epoch %d batch %d, want epoch ≥ 0 and batch in [0, %d]",
			s.Name(), epoch, batch, s.BatchesPerEpoch())
	}
	s.moveTo(epoch, batch)
	return nil
}

// Reset moves to the start of the next epoch, which has a new order when
// shuffling, and starts decoding it. (train.Loop calls Reset after each
// epoch's io.EOF.)
func (s *Stream) Reset() {
	if !s.closed {
		s.moveTo(s.epoch+1, 0)
	}
}

// Yield returns the next batch, or io.EOF when the epoch is exhausted. An
// image that fails to decode makes Yield return an error naming it; the
// batch counts as read.
func (s *Stream) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	if s.closed {
		return nil, nil, nil, fmt.Errorf("%s: yield on a closed stream", s.Name())
	}
	p, ok := <-s.pipe.ready
	if !ok {
		return nil, nil, nil, io.EOF
	}
	p.done.Wait()
	s.batch++
	for _, err := range p.errs {
		if err != nil {
			return nil, nil, nil, err
		}
	}
	x := tensors.FromFlatDataAndDimensions(p.pixels, len(p.errs), s.h, s.w, s.c)
	return nil, []*tensors.Tensor{x}, nil, nil
}

// Close stops the decoding goroutines and closes the Source when it is an
// io.Closer. The stream cannot be used afterwards.
func (s *Stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopPipeline()
	if c, ok := s.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// moveTo sets the position to batch `batch` of epoch `epoch` and restarts
// the decoding pipeline there.
func (s *Stream) moveTo(epoch, batch int) {
	s.stopPipeline()
	for i := range s.order {
		s.order[i] = i
	}
	if s.shuffle {
		rng := rand.New(rand.NewPCG(s.seed, uint64(epoch)))
		rng.Shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
	}
	s.epoch, s.batch = epoch, batch
	s.startPipeline()
}

// startPipeline starts decoding the current epoch from the current batch.
func (s *Stream) startPipeline() {
	p := &pipeline{ready: make(chan *pending, s.prefetch), stop: make(chan struct{})}
	jobs := make(chan job, s.workers)
	imageSize := s.h * s.w * s.c
	order := s.order // not modified until the pipeline has stopped
	first, last := s.batch, s.BatchesPerEpoch()

	p.wg.Go(func() { // producer
		defer close(jobs)
		for b := first; b < last; b++ {
			indices := order[b*s.batchSize : min((b+1)*s.batchSize, len(order))]
			batch := &pending{pixels: make([]float32, len(indices)*imageSize), errs: make([]error, len(indices))}
			batch.done.Add(len(indices))
			select {
			case p.ready <- batch:
			case <-p.stop:
				return
			}
			for slot, idx := range indices {
				select {
				case jobs <- job{p: batch, slot: slot, index: idx}:
				case <-p.stop:
					return
				}
			}
		}
		close(p.ready)
	})
	for range s.workers {
		p.wg.Go(func() {
			read := s.src.NewReader()
			for j := range jobs {
				select {
				case <-p.stop: // abandoned: drain the queue without decoding
				default:
					dst := j.p.pixels[j.slot*imageSize : (j.slot+1)*imageSize]
					j.p.errs[j.slot] = read(j.index, dst)
				}
				j.p.done.Done()
			}
		})
	}
	s.pipe = p
}

// stopPipeline abandons the running pipeline, if any, and waits for its
// goroutines to finish.
func (s *Stream) stopPipeline() {
	if s.pipe == nil {
		return
	}
	close(s.pipe.stop)
	s.pipe.wg.Wait()
	s.pipe = nil
}
