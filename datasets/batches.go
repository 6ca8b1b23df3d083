package datasets

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
)

// Batches serves an Images set as a train.Dataset of mini-batches, one epoch
// at a time.
//
// Each Yield returns inputs = [float32 tensor [B, H, W, C]] and, when the set
// has labels, labels = [int32 tensor [B]]. The example order of epoch e is a
// permutation drawn from a PCG generator seeded with (seed, e), so it depends
// only on the seed and the epoch: a resumed run continues the same order by
// calling Seek. Batches is not safe for concurrent use.
type Batches struct {
	images      *Images
	batchSize   int
	seed        uint64
	shuffle     bool
	keepPartial bool

	epoch int   // current epoch
	next  int   // position in order of the next example to yield
	order []int // example order of the current epoch
}

var _ train.Dataset = (*Batches)(nil)

// BatchOption configures NewBatches.
type BatchOption func(*Batches)

// WithSeed sets the seed of the per-epoch shuffle (default 0).
func WithSeed(seed uint64) BatchOption {
	return func(b *Batches) { b.seed = seed }
}

// WithoutShuffle serves the examples in their stored order every epoch, as
// an evaluation set wants.
func WithoutShuffle() BatchOption {
	return func(b *Batches) { b.shuffle = false }
}

// WithPartialBatch yields the last, smaller batch of an epoch instead of
// dropping it (the default drops it, so every batch has the same shape and
// one compiled graph serves them all).
func WithPartialBatch() BatchOption {
	return func(b *Batches) { b.keepPartial = true }
}

// NewBatches returns a Batches serving images in batches of batchSize,
// positioned at the start of epoch 0. It errors if images is invalid or
// batchSize is not in [1, N].
func NewBatches(images *Images, batchSize int, opts ...BatchOption) (*Batches, error) {
	if err := images.Validate(); err != nil {
		return nil, err
	}
	if batchSize <= 0 || batchSize > images.N {
		return nil, fmt.Errorf("images %q: batch size %d, want a value in [1, %d] (the number of images)",
			images.Name, batchSize, images.N)
	}
	b := &Batches{images: images, batchSize: batchSize, shuffle: true, order: make([]int, images.N)}
	for _, opt := range opts {
		opt(b)
	}
	b.startEpoch(0)
	return b, nil
}

// Name returns the name of the image set.
func (b *Batches) Name() string { return b.images.Name }

// BatchesPerEpoch returns the number of batches Yield returns before io.EOF.
func (b *Batches) BatchesPerEpoch() int {
	if b.keepPartial {
		return (b.images.N + b.batchSize - 1) / b.batchSize
	}
	return b.images.N / b.batchSize
}

// Position returns the epoch and the index within it of the batch the next
// Yield returns; batch equals BatchesPerEpoch when the epoch is exhausted.
func (b *Batches) Position() (epoch, batch int) {
	return b.epoch, (b.next + b.batchSize - 1) / b.batchSize
}

// Seek positions the dataset so that the next Yield returns batch `batch` of
// epoch `epoch`, exactly as if the earlier batches had been read.
func (b *Batches) Seek(epoch, batch int) error {
	if epoch < 0 || batch < 0 || batch > b.BatchesPerEpoch() {
		return fmt.Errorf("images %q: seek to epoch %d batch %d, want epoch ≥ 0 and batch in [0, %d]",
			b.images.Name, epoch, batch, b.BatchesPerEpoch())
	}
	b.startEpoch(epoch)
	b.next = min(batch*b.batchSize, b.images.N)
	return nil
}

// Reset moves to the start of the next epoch, which has a new order when
// shuffling. (train.Loop calls Reset after each epoch's io.EOF.)
func (b *Batches) Reset() { b.startEpoch(b.epoch + 1) }

// Yield returns the next batch, or io.EOF when the epoch is exhausted.
func (b *Batches) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	n := min(b.batchSize, b.images.N-b.next)
	if n == 0 || (n < b.batchSize && !b.keepPartial) {
		return nil, nil, nil, io.EOF
	}
	indices := b.order[b.next : b.next+n]
	b.next += n

	im := b.images
	x := tensors.FromShape(shapes.Make(dtypes.Float32, n, im.Height, im.Width, im.Channels))
	err = tensors.MutableFlatData(x, func(flat []float32) {
		size := im.ImageSize()
		for i, idx := range indices {
			copy(flat[i*size:(i+1)*size], im.Image(idx))
		}
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("images %q: filling batch tensor: %w", im.Name, err)
	}
	inputs = []*tensors.Tensor{x}
	if im.Labels == nil {
		return nil, inputs, nil, nil
	}
	y := tensors.FromShape(shapes.Make(dtypes.Int32, n))
	err = tensors.MutableFlatData(y, func(flat []int32) {
		for i, idx := range indices {
			flat[i] = int32(im.Labels[idx])
		}
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("images %q: filling label tensor: %w", im.Name, err)
	}
	return nil, inputs, []*tensors.Tensor{y}, nil
}

// startEpoch sets the order of epoch e and rewinds to its first batch.
func (b *Batches) startEpoch(e int) {
	b.epoch, b.next = e, 0
	for i := range b.order {
		b.order[i] = i
	}
	if b.shuffle {
		rng := rand.New(rand.NewPCG(b.seed, uint64(e)))
		rng.Shuffle(len(b.order), func(i, j int) { b.order[i], b.order[j] = b.order[j], b.order[i] })
	}
}
