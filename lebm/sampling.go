package lebm

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// ChainBlock is the most Langevin steps that the sampling methods
// (PosteriorSample, Reconstruct, AnomalyScore, PriorSample, Generate)
// unroll into one compiled graph; longer chains run as a host loop over
// blocks, their state staying on the device. XLA's compile time grows with
// the unrolled chain (the Fashion-MNIST model's 500-step generation chain
// took 79 s to compile on XLA CPU, 25 steps take about 2 s) while a call
// per block costs microseconds. The training step keeps its chains in one
// graph, which runs every step.
const ChainBlock = 25

// chainBlocks splits a chain of steps into a first block of first steps
// (1 … block, or 0 for an empty chain) and rest blocks of block steps.
func chainBlocks(steps, block int) (first, rest int) {
	if steps <= 0 {
		return 0, 0
	}
	rest = (steps - 1) / block
	return steps - rest*block, rest
}

// withSteps returns langevin with its number of steps replaced.
func withSteps(langevin losses.LangevinConfig, steps int) losses.LangevinConfig {
	langevin.Steps = steps
	return langevin
}

// samplers are the compiled graphs of the test-time chains: each chain
// starts from N(0, I) and runs its first block in one graph, then full
// blocks in another.
type samplers struct {
	// block is the steps of a full block: ChainBlock (tests shorten it,
	// since XLA's compile time grows with it).
	block                          int
	posteriorStart, posteriorBlock *context.Exec // x → z; (x, z) → z
	priorStart                     map[int]*context.Exec
	priorBlock                     *context.Exec // z → (z, accepted proposals per chain)
	// generationAcceptance is the fraction of proposals the last
	// generation chains accepted.
	generationAcceptance float64
	score, decode        *context.Exec // (x, z) → U_post; z → G(z)
	// seededChain runs a block of posterior steps with the noise given:
	// (x, z, noise [steps, B, nz]) → z (AnomalyScoreSeeded).
	seededChain *context.Exec
	// chainStart and chainAdvance are PriorChainEnergies' graphs, by
	// number of chains and by steps a call: N(0, I) draws; z → (z, the
	// energies before each step).
	chainStart, chainAdvance map[int]*context.Exec
}

// newSamplers creates (without compiling) the samplers of m's Config.
func (m *Model) newSamplers() error {
	post := m.cfg.TestPosteriorLangevin
	m.samplers = samplers{block: ChainBlock, priorStart: map[int]*context.Exec{},
		chainStart: map[int]*context.Exec{}, chainAdvance: map[int]*context.Exec{}}
	var err error
	// The graphs read m.block when they are built, at their first call.
	m.posteriorStart, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, x *Node) *Node {
		z0 := BaseSample(ctx, m.cfg, x.Graph(), x.Shape().Dimensions[0])
		postFirst, _ := chainBlocks(post.Steps, m.block)
		return PosteriorSample(ctx, m.cfg, x, z0, withSteps(post, postFirst))
	})
	if err == nil {
		m.posteriorBlock, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, x, z *Node) *Node {
			return PosteriorSample(ctx, m.cfg, x, z, withSteps(post, m.block))
		})
	}
	if err == nil {
		m.priorBlock, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, z *Node) []*Node {
			next, accepted := GenerationSample(ctx, m.cfg, z, m.block)
			return []*Node{next, accepted}
		})
	}
	if err == nil {
		m.score, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, x, z *Node) *Node {
			return PosteriorEnergy(ctx, m.cfg, x, z)
		})
	}
	if err == nil {
		m.decode, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, z *Node) *Node {
			return Decode(ctx, m.cfg, z)
		})
	}
	if err != nil {
		return fmt.Errorf("lebm: creating executor: %w", err)
	}
	return nil
}

// posteriorLatents runs the test-time posterior chain of the images x
// (already checked).
func (m *Model) posteriorLatents(what string, x *tensors.Tensor) (*tensors.Tensor, error) {
	z, err := m.exec1(what, m.posteriorStart, x)
	if err != nil {
		return nil, err
	}
	_, rest := chainBlocks(m.cfg.TestPosteriorLangevin.Steps, m.block)
	for range rest {
		next, err := m.exec1(what, m.posteriorBlock, x, z)
		finalize([]*tensors.Tensor{z})
		if err != nil {
			return nil, err
		}
		z = next
	}
	return z, nil
}

// priorLatents runs n generation chains.
func (m *Model) priorLatents(what string, n int) (*tensors.Tensor, error) {
	if n < 1 {
		return nil, fmt.Errorf("lebm: %s: number of samples n = %d: must be at least 1", what, n)
	}
	steps := m.cfg.GenerationLangevin.Steps
	first, rest := chainBlocks(steps, m.block)
	start, ok := m.priorStart[n]
	if !ok {
		var err error
		start, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, g *Graph) []*Node {
			z, accepted := GenerationSample(ctx, m.cfg, BaseSample(ctx, m.cfg, g, n), first)
			return []*Node{z, accepted}
		})
		if err != nil {
			return nil, fmt.Errorf("lebm: %s: creating executor: %w", what, err)
		}
		m.priorStart[n] = start
	}
	outs, err := m.exec(what, start)
	if err != nil {
		return nil, err
	}
	z, accepted := outs[0], sumFloats(outs[1])
	finalize(outs[1:])
	for range rest {
		outs, err := m.exec(what, m.priorBlock, z)
		finalize([]*tensors.Tensor{z})
		if err != nil {
			return nil, err
		}
		z, accepted = outs[0], accepted+sumFloats(outs[1])
		finalize(outs[1:])
	}
	m.generationAcceptance = 1
	if steps > 0 {
		m.generationAcceptance = accepted / float64(n*steps)
	}
	return z, nil
}

// GenerationAcceptance is the fraction of proposals the chains of the last
// PriorSample or Generate accepted: 1 for Langevin, which has no
// rejection; MALA's rate for SamplerMALA.
func (m *Model) GenerationAcceptance() float64 { return m.generationAcceptance }

// sumFloats is the sum of a float tensor's values.
func sumFloats(t *tensors.Tensor) float64 {
	var sum float64
	for _, v := range flatFloat64s(t) {
		sum += v
	}
	return sum
}

// PosteriorSample returns latents z [B, nz] sampled from the posterior of
// the images x [B, H, W, C] with Config.TestPosteriorLangevin, from N(0, I).
func (m *Model) PosteriorSample(x *tensors.Tensor) (*tensors.Tensor, error) {
	const what = "posterior sampling"
	if err := m.checkImages(what, x); err != nil {
		return nil, err
	}
	return m.posteriorLatents(what, x)
}

// Reconstruct returns G(z) [B, H, W, C] for posterior samples z of x (see
// PosteriorSample).
func (m *Model) Reconstruct(x *tensors.Tensor) (*tensors.Tensor, error) {
	const what = "reconstruction"
	if err := m.checkImages(what, x); err != nil {
		return nil, err
	}
	z, err := m.posteriorLatents(what, x)
	if err != nil {
		return nil, err
	}
	defer finalize([]*tensors.Tensor{z})
	return m.exec1(what, m.decode, z)
}

// AnomalyScore returns U_post(z) = ‖x − G(z)‖²/(2σ²) + f(z) + ‖z‖²/(2σ0²)
// [B] at posterior samples z of x (see PosteriorSample): an estimate of
// −log p(x, z), higher for more anomalous images.
func (m *Model) AnomalyScore(x *tensors.Tensor) (*tensors.Tensor, error) {
	const what = "anomaly scoring"
	if err := m.checkImages(what, x); err != nil {
		return nil, err
	}
	z, err := m.posteriorLatents(what, x)
	if err != nil {
		return nil, err
	}
	defer finalize([]*tensors.Tensor{z})
	return m.exec1(what, m.score, x, z)
}

// PriorSample returns n latents [n, nz] sampled from the prior with
// Config.GenerationLangevin, from N(0, I).
func (m *Model) PriorSample(n int) (*tensors.Tensor, error) {
	return m.priorLatents("prior sampling", n)
}

// Decode returns the generator's images G(z) [B, H, W, C] for latents z
// [B, nz] of the model's DType — for interpolations and attribute
// manipulation in latent space.
func (m *Model) Decode(z *tensors.Tensor) (*tensors.Tensor, error) {
	if z == nil || z.Rank() != 2 || z.Shape().Dimensions[1] != m.cfg.Generator.Nz || z.DType() != m.cfg.dtype() {
		return nil, fmt.Errorf("lebm: decoding: latents have shape %v; want (%s)[batch, %d]", shapeOf(z), m.cfg.dtype(), m.cfg.Generator.Nz)
	}
	return m.exec1("decoding", m.decode, z)
}

func shapeOf(t *tensors.Tensor) any {
	if t == nil {
		return "nil"
	}
	return t.Shape()
}

// Generate returns n images [n, H, W, C] decoded from prior samples (see
// PriorSample).
func (m *Model) Generate(n int) (*tensors.Tensor, error) {
	const what = "generation"
	z, err := m.priorLatents(what, n)
	if err != nil {
		return nil, err
	}
	defer finalize([]*tensors.Tensor{z})
	return m.exec1(what, m.decode, z)
}
