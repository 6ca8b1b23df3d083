package lebm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/nets"
)

// noiseSeed reseeds the random number generator before each of two graphs
// that must draw the same noise: the loss under test, and the test's
// independent draw of that noise.
const noiseSeed = 11

// priorLossOf runs priorLoss at fixed posterior samples z for images x and
// returns the loss and mean f(z_prior) (0 when the method has none).
func priorLossOf(t *testing.T, ctx *context.Context, cfg Config, x, z []float64) (loss, priorEnergy float64) {
	t.Helper()
	if err := ctx.SetRNGStateFromSeed(noiseSeed); err != nil {
		t.Fatal(err)
	}
	out := runGraph(t, ctx, func(ctx *context.Context, x, z *Node) (*Node, *Node) {
		loss, fPrior := PriorLoss(ctx, cfg, x, z)
		if fPrior == nil {
			fPrior = ZerosLike(loss)
		}
		return loss, fPrior
	}, imagesTensor(cfg, x), latentTensor(z))
	return out[0][0], out[1][0]
}

// drawNormals reseeds the generator as priorLossOf does and draws standard
// normal arrays of the given shapes, in order.
func drawNormals(t *testing.T, ctx *context.Context, dims ...[]int) [][]float64 {
	t.Helper()
	if err := ctx.SetRNGStateFromSeed(noiseSeed); err != nil {
		t.Fatal(err)
	}
	return runGraph(t, ctx, func(ctx *context.Context, g *Graph) []*Node {
		var out []*Node
		for _, d := range dims {
			out = append(out, ctx.RandomNormal(g, shapes.Make(dtypes.Float64, d...)))
		}
		return out
	})
}

func TestEnergyDiscrepancyUsesFullPriorEnergy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		constantF  bool
		priorSigma float64
		w          float64
	}{
		{"constant f, σ0 1, w 1", true, 1, 1},
		{"constant f, σ0 2, w 0", true, 2, 0},
		{"MLP f, σ0 1, w 1", false, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			cfg := oneLayerConfig(t)
			cfg.Method, cfg.PriorSigma, cfg.ED.W = MethodED, tc.priorSigma, tc.w
			ctx, naive := newNaiveContext(t, cfg, rng)
			if tc.constantF {
				// f ≡ 0.7: zero output weights, constant output bias.
				last := fmt.Sprintf("/prior/layer_%d", len(cfg.Prior.Hidden))
				setVariable(t, ctx, last, "weights", make([]float64, cfg.Prior.Hidden[len(cfg.Prior.Hidden)-1]))
				setVariable(t, ctx, last, "biases", []float64{0.7})
				naive = readNaiveModel(t, ctx, cfg)
			}
			x, z := randomBatch(rng)
			got, _ := priorLossOf(t, ctx, cfg, x, z)

			m := cfg.ED.M
			noise := drawNormals(t, ctx, []int{testBatch, testNz}, []int{testBatch, m, testNz})
			xi, xiPrime := noise[0], noise[1]
			sqrtT := math.Sqrt(cfg.ED.T)
			var want float64
			for i := range testBatch {
				zi := row(z, i, testNz)
				terms := []float64{tc.w}
				for j := range m {
					y := make([]float64, testNz)
					for d := range y {
						y[d] = zi[d] + sqrtT*xi[i*testNz+d] + sqrtT*xiPrime[(i*m+j)*testNz+d]
					}
					terms = append(terms, math.Exp(naive.u(zi)-naive.u(y)))
				}
				var sum float64
				for _, v := range terms {
					sum += v
				}
				want += math.Log(sum/float64(m)) / testBatch
			}
			testutil.AssertAllClose(t, "ED prior loss", []float64{got}, []float64{want}, 1e-9)
			if tc.constantF {
				// Without the base term every exponent would be 0.
				if fOnly := math.Log(tc.w/float64(m) + 1); math.Abs(got-fOnly) < 1e-3 {
					t.Errorf("ED prior loss %g equals the value %g of ED on f alone: the base term ‖z‖²/(2σ0²) is missing", got, fOnly)
				}
			}
		})
	}
}

func TestContrastiveDivergenceLoss(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	cfg := oneLayerConfig(t)
	cfg.Method = MethodCD
	cfg.PriorLangevin.Steps, cfg.PriorLangevin.StepSize = 3, 0.3
	ctx, naive := newNaiveContext(t, cfg, rng)
	x, z := randomBatch(rng)
	got, gotPriorEnergy := priorLossOf(t, ctx, cfg, x, z)

	// The same chains, from the same noise.
	if err := ctx.SetRNGStateFromSeed(noiseSeed); err != nil {
		t.Fatal(err)
	}
	zPrior := runGraph(t, ctx, func(ctx *context.Context, g *Graph) *Node {
		return PriorSample(ctx, cfg, BaseSample(ctx, cfg, g, testBatch), cfg.PriorLangevin)
	})[0]
	var fPost, fPrior float64
	for i := range testBatch {
		fPost += naive.f(row(z, i, testNz)) / testBatch
		fPrior += naive.f(row(zPrior, i, testNz)) / testBatch
	}
	testutil.AssertAllClose(t, "CD prior loss", []float64{got}, []float64{fPost - fPrior}, 1e-9)
	testutil.AssertAllClose(t, "mean f(z_prior)", []float64{gotPriorEnergy}, []float64{fPrior}, 1e-9)
}

func TestScoreMatchingLosses(t *testing.T) {
	t.Parallel()
	for _, variant := range SMVariants {
		t.Run(variant, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 10))
			cfg := oneLayerConfig(t)
			cfg.Method, cfg.SMVariant, cfg.SMProjections = MethodSM, variant, 3
			// Smooth, so that finite differences of second order are accurate.
			cfg.Prior = nets.MLPConfig{Hidden: []int{16, 16}, Activation: nets.ActSoftplus}
			ctx, naive := newNaiveContext(t, cfg, rng)
			x, z := randomBatch(rng)
			got, _ := priorLossOf(t, ctx, cfg, x, z)

			var projections []float64
			if variant == SMSliced {
				projections = drawNormals(t, ctx, []int{cfg.SMProjections, testBatch, testNz})[0]
			}
			const h = 1e-4
			var want float64
			for i := range testBatch {
				xi, zi := row(x, i, testSize*testSize), row(z, i, testNz)
				gradU := gradient(naive.u, zi, 1e-6)
				switch variant {
				case SMFisher:
					// ∇U_post − ∇U is the gradient of the likelihood term.
					g := gradient(func(z []float64) float64 { return naive.likelihood(xi, z) }, zi, 1e-6)
					want += 0.5 * dot(g, g) / testBatch
				case SMExact:
					laplacian := 0.0
					for d := range testNz {
						unit := make([]float64, testNz)
						unit[d] = 1
						laplacian += secondDerivative(naive.u, zi, unit, h)
					}
					want += (0.5*dot(gradU, gradU) - laplacian) / testBatch
				case SMSliced:
					for k := range cfg.SMProjections {
						v := row(projections, k*testBatch+i, testNz)
						vg := dot(v, gradU)
						want += (0.5*vg*vg - secondDerivative(naive.u, zi, v, h)) / float64(testBatch*cfg.SMProjections)
					}
				}
			}
			testutil.AssertAllClose(t, variant+" score-matching prior loss", []float64{got}, []float64{want}, 1e-5)
		})
	}
}
