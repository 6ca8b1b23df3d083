package datasets

import (
	"errors"
	"io"
	"math/rand/v2"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
)

// pixelProbability maps a pixel in [-1, 1] to the probability in [0, 1]
// that its binarisation is 1.
func pixelProbability(v float32) float64 { return (float64(v) + 1) / 2 }

// StaticBinarization returns a copy of im with every pixel replaced by one
// Bernoulli draw of probability (v+1)/2, stored as −1 or 1, drawn once from
// seed: the fixed binarisation of the binary-image literature's "static"
// sets, and of the test sets of both kinds.
func StaticBinarization(im *Images, seed uint64) *Images {
	rng := rand.New(rand.NewPCG(seed, 0xb1a))
	out := *im
	out.Name = im.Name + "/static-binary"
	out.Pixels = make([]float32, len(im.Pixels))
	for i, v := range im.Pixels {
		out.Pixels[i] = -1
		if rng.Float64() < pixelProbability(v) {
			out.Pixels[i] = 1
		}
	}
	return &out
}

// BinaryBatches serves an image set as flat binary vectors: each Yield
// returns inputs = [float32 tensor [B, H·W·C]] of values 0 and 1, in the
// order and positions of its Batches (Seek and Position included). With
// dynamic binarisation every pixel is a fresh Bernoulli draw of
// probability (v+1)/2 at every visit, drawn from (seed, epoch, batch), so
// that a run resumed at a batch draws what the uninterrupted run drew;
// without it pixels are thresholded at 0 (for sets already binarised,
// such as StaticBinarization's, whose pixels are −1 and 1).
type BinaryBatches struct {
	*Batches
	dynamic bool
	seed    uint64
}

var _ train.Dataset = (*BinaryBatches)(nil)

// NewBinaryBatches serves b's batches as binary vectors; dynamic chooses
// dynamic binarisation, seeded by seed.
func NewBinaryBatches(b *Batches, dynamic bool, seed uint64) *BinaryBatches {
	return &BinaryBatches{Batches: b, dynamic: dynamic, seed: seed}
}

// Name names the set and its binarisation.
func (b *BinaryBatches) Name() string {
	if b.dynamic {
		return b.Batches.Name() + "/dynamic-binary"
	}
	return b.Batches.Name() + "/binary"
}

// Yield returns the next batch of binary vectors, or io.EOF at the end of
// an epoch.
func (b *BinaryBatches) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	epoch, batch := b.Position()
	spec, inputs, labels, err = b.Batches.Yield()
	if err != nil {
		return spec, inputs, labels, err
	}
	images := inputs[0]
	defer images.FinalizeAll()
	pixels := tensors.MustCopyFlatData[float32](images)
	n := images.Shape().Dimensions[0]
	rng := rand.New(rand.NewPCG(b.seed, uint64(epoch)<<32|uint64(batch)))
	bits := make([]float32, len(pixels))
	for i, v := range pixels {
		on := v > 0
		if b.dynamic {
			on = rng.Float64() < pixelProbability(v)
		}
		if on {
			bits[i] = 1
		}
	}
	return spec, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(bits, n, len(bits)/n)}, labels, nil
}

// Bits returns the images of im as flat binary vectors (N × H·W·C values
// 0 and 1), thresholded at 0: the test set of a binary experiment, after
// StaticBinarization.
func Bits(im *Images) []float32 {
	out := make([]float32, len(im.Pixels))
	for i, v := range im.Pixels {
		if v > 0 {
			out[i] = 1
		}
	}
	return out
}

// Endless serves ds without end, for training to a step count: at the end
// of an epoch it resets ds (which starts the next, reshuffled) and yields
// the new epoch's first batch (YieldAcrossEpochs).
func Endless(ds train.Dataset) train.Dataset { return endless{ds} }

type endless struct{ train.Dataset }

func (e endless) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	return YieldAcrossEpochs(e.Dataset)
}

// Epochs is a source of batches in epochs: Yield returns io.EOF at the end
// of one, Reset starts the next.
type Epochs interface {
	Yield() (spec any, inputs, labels []*tensors.Tensor, err error)
	Reset()
}

// YieldAcrossEpochs yields ds's next batch, going on into the next epoch
// when the current one is exhausted. An epoch without any batch is an
// error.
func YieldAcrossEpochs(ds Epochs) (spec any, inputs, labels []*tensors.Tensor, err error) {
	spec, inputs, labels, err = ds.Yield()
	if errors.Is(err, io.EOF) {
		ds.Reset()
		if spec, inputs, labels, err = ds.Yield(); errors.Is(err, io.EOF) {
			return nil, nil, nil, errors.New("an epoch without a batch")
		}
	}
	return spec, inputs, labels, err
}
