package lebm

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// ImageSeeds returns a seed for each of the images in pixels (n images of
// size values each): a hash of seed and the image's pixels, so that the
// same image under the same seed always gets the same seed, whatever file
// or request it came in.
func ImageSeeds(seed int64, pixels []float32, size int) []uint64 {
	if size < 1 || len(pixels)%size != 0 {
		panic(fmt.Errorf("lebm: %d pixel values do not split into images of %d", len(pixels), size))
	}
	seeds := make([]uint64, len(pixels)/size)
	var word [8]byte
	for i := range seeds {
		h := fnv.New64a()
		binary.LittleEndian.PutUint64(word[:], uint64(seed))
		h.Write(word[:])
		for _, v := range pixels[i*size : (i+1)*size] {
			binary.LittleEndian.PutUint32(word[:4], math.Float32bits(v))
			h.Write(word[:4])
		}
		seeds[i] = h.Sum64()
	}
	return seeds
}

// noiseStreams are the per-image random streams of a seeded posterior
// chain: stream i draws image i's starting latents, then its Langevin
// noise step after step.
type noiseStreams []*rand.Rand

// streamTag tells the seeded chains' streams apart from any other use of
// the same seeds.
const streamTag = 0x6c65626d // "lebm"

func newNoiseStreams(seeds []uint64) noiseStreams {
	s := make(noiseStreams, len(seeds))
	for i, seed := range seeds {
		s[i] = rand.New(rand.NewPCG(seed, streamTag))
	}
	return s
}

// draw returns the next steps draws of every stream, as a tensor
// [steps, len(s), nz] of the model's dtype (steps 0: [len(s), nz], the
// starting latents).
func (s noiseStreams) draw(cfg Config, steps, nz int) *tensors.Tensor {
	dims := []int{steps, len(s), nz}
	if steps == 0 {
		steps, dims = 1, dims[1:]
	}
	values := make([]float64, steps*len(s)*nz)
	for k := range steps {
		for i, r := range s {
			row := values[(k*len(s)+i)*nz : (k*len(s)+i+1)*nz]
			for j := range row {
				row[j] = r.NormFloat64()
			}
		}
	}
	if cfg.dtype().Bits() == 64 {
		return tensors.FromFlatDataAndDimensions(values, dims...)
	}
	narrow := make([]float32, len(values))
	for i, v := range values {
		narrow[i] = float32(v)
	}
	return tensors.FromFlatDataAndDimensions(narrow, dims...)
}

// AnomalyScoreSeeded is AnomalyScore with each image's posterior chain
// drawn from a random stream of its own, seeded by seeds[i] (ImageSeeds):
// its starting latents and its Langevin noise. An image's score then
// depends only on the image, its seed and the model — not on the other
// images of the batch, its place in it, or what the model computed before
// — so a batch command and a service that gathers requests into batches
// give one image the same score. The model's own random stream is left
// untouched.
func (m *Model) AnomalyScoreSeeded(x *tensors.Tensor, seeds []uint64) (*tensors.Tensor, error) {
	const what = "seeded anomaly scoring"
	if err := m.checkImages(what, x); err != nil {
		return nil, err
	}
	if n := x.Shape().Dimensions[0]; len(seeds) != n {
		return nil, fmt.Errorf("lebm: %s: %d seeds for %d images", what, len(seeds), n)
	}
	if m.seededChain == nil {
		var err error
		m.seededChain, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, x, z, noise *Node) *Node {
			langevin := withSteps(m.cfg.TestPosteriorLangevin, noise.Shape().Dimensions[0])
			posterior := func(z *Node) *Node { return PosteriorEnergy(ctx, m.cfg, x, z) }
			return losses.LangevinWithNoise(posterior, z, noise, langevin)
		})
		if err != nil {
			return nil, fmt.Errorf("lebm: %s: creating executor: %w", what, err)
		}
	}
	nz := m.cfg.Generator.Nz
	streams := newNoiseStreams(seeds)
	z := streams.draw(m.cfg, 0, nz)
	first, rest := chainBlocks(m.cfg.TestPosteriorLangevin.Steps, m.block)
	for i := range rest + 1 {
		steps := first
		if i > 0 {
			steps = m.block
		}
		if steps == 0 {
			break // an empty chain: no blocks
		}
		noise := streams.draw(m.cfg, steps, nz)
		next, err := m.exec1(what, m.seededChain, x, z, noise)
		finalize([]*tensors.Tensor{z, noise})
		if err != nil {
			return nil, err
		}
		z = next
	}
	defer finalize([]*tensors.Tensor{z})
	return m.exec1(what, m.score, x, z)
}
