package lebm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// newNaiveContext returns a context holding the initialised variables of
// the oneLayerConfig-shaped cfg, with random prior biases (so that f(0) ≠ 0),
// and the independent naive model reading them.
func newNaiveContext(t *testing.T, cfg Config, rng *rand.Rand) (*context.Context, naiveModel) {
	t.Helper()
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(cfg.Seed); err != nil {
		t.Fatal(err)
	}
	x := imagesTensor(cfg, make([]float64, testSize*testSize))
	z := tensors.FromFlatDataAndDimensions(make([]float64, testNz), 1, testNz)
	runGraph(t, ctx, func(ctx *context.Context, x, z *Node) *Node { return PosteriorEnergy(ctx, cfg, x, z) }, x, z)
	for i := 0; i <= len(cfg.Prior.Hidden); i++ {
		scope := fmt.Sprintf("/prior/layer_%d", i)
		n := len(variable(t, ctx, scope, "biases"))
		setVariable(t, ctx, scope, "biases", randomValues(rng, n, 0.3))
	}
	return ctx, readNaiveModel(t, ctx, cfg)
}

// randomBatch draws images in (−1, 1) and latents N(0, 1).
func randomBatch(rng *rand.Rand) (x, z []float64) {
	x = make([]float64, testBatch*testSize*testSize)
	for i := range x {
		x[i] = 2*rng.Float64() - 1
	}
	return x, randomValues(rng, testBatch*testNz, 1)
}

func latentTensor(z []float64) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(append([]float64{}, z...), len(z)/testNz, testNz)
}

func TestPosteriorEnergyAndGradient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sigma, priorSigma float64
	}{
		{0.3, 1},
		{0.7, 2},
	} {
		t.Run(fmt.Sprintf("sigma=%g,sigma0=%g", tc.sigma, tc.priorSigma), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			cfg := oneLayerConfig(t)
			cfg.Sigma, cfg.PriorSigma = tc.sigma, tc.priorSigma
			ctx, naive := newNaiveContext(t, cfg, rng)
			x, z := randomBatch(rng)

			out := runGraph(t, ctx, func(ctx *context.Context, x, z *Node) (*Node, *Node, *Node) {
				e, grad := losses.EnergyGradient(func(z *Node) *Node { return PosteriorEnergy(ctx, cfg, x, z) }, z)
				return e, grad, PriorEnergy(ctx, cfg, z)
			}, imagesTensor(cfg, x), latentTensor(z))

			var wantE, wantGrad, wantPrior []float64
			for i := range testBatch {
				xi, zi := row(x, i, testSize*testSize), row(z, i, testNz)
				wantE = append(wantE, naive.posterior(xi, zi))
				wantPrior = append(wantPrior, naive.u(zi))
				wantGrad = append(wantGrad, gradient(func(z []float64) float64 { return naive.posterior(xi, z) }, zi, 1e-6)...)
			}
			testutil.AssertAllClose(t, "U_post", out[0], wantE, 1e-9)
			testutil.AssertAllClose(t, "∇U_post", out[1], wantGrad, 1e-5)
			testutil.AssertAllClose(t, "U", out[2], wantPrior, 1e-9)
		})
	}
}

func TestLangevinStepsWithoutNoise(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		posterior bool
		steps     int
	}{
		{"posterior, 1 step", true, 1},
		{"posterior, 3 steps", true, 3},
		{"prior, 1 step", false, 1},
		{"prior, 3 steps", false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			cfg := oneLayerConfig(t)
			ctx, naive := newNaiveContext(t, cfg, rng)
			x, z := randomBatch(rng)
			langevin := losses.LangevinConfig{StepSize: 0.3, Steps: tc.steps, NoNoise: true}

			out := runGraph(t, ctx, func(ctx *context.Context, x, z0 *Node) *Node {
				if tc.posterior {
					return PosteriorSample(ctx, cfg, x, z0, langevin)
				}
				return PriorSample(ctx, cfg, z0, langevin)
			}, imagesTensor(cfg, x), latentTensor(z))

			var want []float64
			for i := range testBatch {
				xi := row(x, i, testSize*testSize)
				energy := naive.u
				if tc.posterior {
					energy = func(z []float64) float64 { return naive.posterior(xi, z) }
				}
				zi := append([]float64{}, row(z, i, testNz)...)
				for range tc.steps {
					grad := gradient(energy, zi, 1e-6)
					for d := range zi {
						zi[d] -= langevin.StepSize * langevin.StepSize / 2 * grad[d]
					}
				}
				want = append(want, zi...)
			}
			testutil.AssertAllClose(t, "z after Langevin", out[0], want, 1e-6)
		})
	}
}
