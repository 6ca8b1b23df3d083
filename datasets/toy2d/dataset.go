package toy2d

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
)

// Dataset is an endless train.Dataset of fresh samples from a Set: every
// Yield returns inputs = [float32 tensor [B, 2]] and no labels, and never
// io.EOF. Batch k is drawn from a PCG generator seeded with (seed, k), so it
// depends only on the seed and k, and Seek resumes a stream exactly.
// Dataset is not safe for concurrent use.
type Dataset struct {
	set       *Set
	batchSize int
	seed      uint64
	step      int // index of the next batch
}

var _ train.Dataset = (*Dataset)(nil)

// NewDataset returns a Dataset of batches of batchSize points of set,
// positioned at batch 0. It errors if batchSize ≤ 0.
func NewDataset(set *Set, batchSize int, seed uint64) (*Dataset, error) {
	if batchSize <= 0 {
		return nil, fmt.Errorf("toy2d %s: batch size %d, want a positive value", set.name, batchSize)
	}
	return &Dataset{set: set, batchSize: batchSize, seed: seed}, nil
}

// Name returns "toy2d/" followed by the set's name.
func (d *Dataset) Name() string { return "toy2d/" + d.set.name }

// Reset does nothing: the stream has no epochs, and every batch stays fresh.
func (d *Dataset) Reset() {}

// Step returns the index of the batch the next Yield returns.
func (d *Dataset) Step() int { return d.step }

// Seek positions the stream so that the next Yield returns batch step.
func (d *Dataset) Seek(step int) error {
	if step < 0 {
		return fmt.Errorf("toy2d %s: seek to batch %d, want a value ≥ 0", d.set.name, step)
	}
	d.step = step
	return nil
}

// Yield returns the next batch of fresh samples.
func (d *Dataset) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	rng := rand.New(rand.NewPCG(d.seed, uint64(d.step)))
	d.step++
	x := tensors.FromShape(shapes.Make(dtypes.Float32, d.batchSize, 2))
	if err := tensors.MutableFlatData(x, func(flat []float32) { d.set.fill(rng, flat) }); err != nil {
		return nil, nil, nil, fmt.Errorf("toy2d %s: filling batch tensor: %w", d.set.name, err)
	}
	return nil, []*tensors.Tensor{x}, nil, nil
}
