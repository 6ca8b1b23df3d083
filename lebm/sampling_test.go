package lebm

import (
	"fmt"
	"math"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
)

func TestChainBlocks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ steps, block, first, rest int }{
		{0, ChainBlock, 0, 0}, {1, ChainBlock, 1, 0}, {ChainBlock, ChainBlock, ChainBlock, 0}, {ChainBlock + 1, ChainBlock, 1, 1},
		{2 * ChainBlock, ChainBlock, ChainBlock, 1}, {2*ChainBlock + 3, ChainBlock, 3, 2}, {20 * ChainBlock, ChainBlock, ChainBlock, 19},
		{0, 4, 0, 0}, {3, 4, 3, 0}, {4, 4, 4, 0}, {7, 4, 3, 1}, {500, 4, 4, 124},
	} {
		first, rest := chainBlocks(c.steps, c.block)
		if first != c.first || rest != c.rest {
			t.Errorf("chainBlocks(%d, %d) = %d, %d; want %d, %d", c.steps, c.block, first, rest, c.first, c.rest)
		}
	}
}

// TestBlockedChainsMatchTheUnrolledChain runs the sampling methods, which
// loop over compiled blocks (of testChainBlock steps here), against the
// whole chain unrolled in one graph from the same random state: the random
// stream advances draw by draw in both, so even the noisy chains agree.
func TestBlockedChainsMatchTheUnrolledChain(t *testing.T) {
	t.Parallel()
	// A first block of 3 steps and a full one (chainBlocks' other splits
	// are TestChainBlocks').
	for _, steps := range []int{testChainBlock + 3} {
		t.Run(fmt.Sprintf("%d steps", steps), func(t *testing.T) {
			cfg := tinyConfig(t)
			// Lengths and step sizes unlike the training chains' (5 steps
			// of 0.1 and of 0.4), so that a sampler running a training
			// chain instead fails.
			cfg.TestPosteriorLangevin = losses.LangevinConfig{Steps: steps, StepSize: 0.07}
			cfg.GenerationLangevin = losses.LangevinConfig{Steps: steps, StepSize: 0.13}
			m := newModel(t, cfg)
			x := imagesTensor(cfg, structuredImages())
			const n = 3
			cases := []struct {
				name     string
				blocked  func() (*tensors.Tensor, error)
				unrolled func(ctx *context.Context, x *Node) *Node
			}{
				{"posterior", func() (*tensors.Tensor, error) { return m.PosteriorSample(x) }, func(ctx *context.Context, x *Node) *Node {
					z0 := BaseSample(ctx, cfg, x.Graph(), testBatch)
					return PosteriorSample(ctx, cfg, x, z0, cfg.TestPosteriorLangevin)
				}},
				{"reconstruction", func() (*tensors.Tensor, error) { return m.Reconstruct(x) }, func(ctx *context.Context, x *Node) *Node {
					z0 := BaseSample(ctx, cfg, x.Graph(), testBatch)
					return Decode(ctx, cfg, PosteriorSample(ctx, cfg, x, z0, cfg.TestPosteriorLangevin))
				}},
				{"anomaly score", func() (*tensors.Tensor, error) { return m.AnomalyScore(x) }, func(ctx *context.Context, x *Node) *Node {
					z0 := BaseSample(ctx, cfg, x.Graph(), testBatch)
					return PosteriorEnergy(ctx, cfg, x, PosteriorSample(ctx, cfg, x, z0, cfg.TestPosteriorLangevin))
				}},
				{"generation", func() (*tensors.Tensor, error) { return m.Generate(n) }, func(ctx *context.Context, x *Node) *Node {
					return Generate(ctx, cfg, x.Graph(), n, cfg.GenerationLangevin)
				}},
			}
			for _, c := range cases {
				if err := m.Seed(11); err != nil {
					t.Fatal(err)
				}
				got, err := c.blocked()
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Seed(11); err != nil {
					t.Fatal(err)
				}
				want, err := context.ExecOnce(testBackend(), m.Context(), c.unrolled, x)
				if err != nil {
					t.Fatal(err)
				}
				g, w := flatFloat64(t, got), flatFloat64(t, want)
				if len(g) != len(w) {
					t.Fatalf("%s: %d values, want %d", c.name, len(g), len(w))
				}
				for i := range g {
					if math.Abs(g[i]-w[i]) > 1e-9*(1+math.Abs(w[i])) {
						t.Fatalf("%s: value %d is %.12g, the unrolled chain's %.12g", c.name, i, g[i], w[i])
					}
				}
			}
		})
	}
}

// TestExactGenerationIsSamplings: with GenerationSampler "mala" or "hmc"
// the blocked generation chains are sampling.MALA or sampling.HMC on the
// prior energy U from the same draws — the latents and the acceptance
// both — and at a step large enough to reject some proposals the
// acceptance is strictly between 0 and 1 (eval-lebm's tests see Langevin
// report 1).
func TestExactGenerationIsSamplings(t *testing.T) {
	t.Parallel()
	const n, steps = 40, testChainBlock + 3
	for _, tc := range []struct {
		sampler string
		step    float64
		run     func(ctx *context.Context, prior losses.EnergyFn, z0 *Node) (z, rate *Node)
	}{
		{SamplerMALA, 1.5, func(ctx *context.Context, prior losses.EnergyFn, z0 *Node) (z, rate *Node) {
			return sampling.MALA(ctx, prior, z0, sampling.MALAConfig{StepSize: 1.5, Steps: steps})
		}},
		{SamplerHMC, 0.8, func(ctx *context.Context, prior losses.EnergyFn, z0 *Node) (z, rate *Node) {
			return sampling.HMC(ctx, prior, z0, sampling.HMCConfig{StepSize: 0.8, LeapfrogSteps: 3, Steps: steps})
		}},
	} {
		t.Run(tc.sampler, func(t *testing.T) {
			cfg := tinyConfig(t)
			cfg.GenerationSampler, cfg.GenerationLeapfrogSteps = tc.sampler, 3
			cfg.GenerationLangevin = losses.LangevinConfig{Steps: steps, StepSize: tc.step}
			m := newModel(t, cfg)
			if err := m.Seed(11); err != nil {
				t.Fatal(err)
			}
			z, err := m.PriorSample(n)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Seed(11); err != nil {
				t.Fatal(err)
			}
			want := runGraph(t, m.Context(), func(ctx *context.Context, g *Graph) []*Node {
				prior := func(z *Node) *Node { return PriorEnergy(ctx, cfg, z) }
				z, rate := tc.run(ctx, prior, BaseSample(ctx, cfg, g, n))
				return []*Node{z, ReduceAllMean(rate)}
			})
			testutil.AssertAllClose(t, tc.sampler+" latents", flatFloat64s(z), want[0], 1e-9)
			if a := m.GenerationAcceptance(); math.Abs(a-want[1][0]) > 1e-9 || !(a > 0 && a < 1) {
				t.Errorf("acceptance %v, sampling's %v; want it in (0, 1) at step %v", a, want[1][0], tc.step)
			}
		})
	}
	cfg := tinyConfig(t)
	for _, bad := range []func(*Config){
		func(c *Config) { c.GenerationSampler = "nuts" },
		func(c *Config) { c.GenerationSampler, c.GenerationLangevin.NoNoise = SamplerMALA, true },
		func(c *Config) { c.GenerationSampler, c.GenerationLangevin.NoNoise = SamplerHMC, true },
		func(c *Config) { c.GenerationSampler, c.GenerationLeapfrogSteps = SamplerHMC, 0 },
	} {
		c := cfg
		bad(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "Generation") {
			t.Errorf("%+v: error %v", c.GenerationSampler, err)
		}
	}
}
