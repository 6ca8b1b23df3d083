package lebm

import (
	"math"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
)

// stepDraws draws what a training step draws before its losses, in
// TrainStepGraph's order: z₀ and the posterior chain, then for CD the prior
// chain's start and chain. It returns z_post and z_prior (zeros unless CD).
func stepDraws(ctx *context.Context, cfg Config, x *Node) (zPost, zPrior *Node) {
	g, n := x.Graph(), x.Shape().Dimensions[0]
	zPost = PosteriorSample(ctx, cfg, x, BaseSample(ctx, cfg, g, n), cfg.PosteriorLangevin)
	if cfg.Method != MethodCD {
		return zPost, ZerosLike(zPost)
	}
	return zPost, PriorSample(ctx, cfg, BaseSample(ctx, cfg, g, n), cfg.PriorLangevin)
}

// lossesAt is the generator loss mean ‖x − G(z_post)‖² and the prior loss
// at fixed samples: for CD, mean f(z_post) − mean f(z_prior); for the
// paper's SM, ½ mean ‖∇U(z_post) − s‖² with the posterior score s fixed
// too (its value, ½ mean ‖∇log p(x|z)‖², does not depend on the prior: only
// its gradient with s held does); for the others PriorLoss, whose own draws
// (ED's perturbations, sliced SM's projections) come next from the stream.
func lossesAt(ctx *context.Context, cfg Config, x, zPost, zPrior, posteriorScore *Node) (generator, prior *Node) {
	generator = ReduceAllMean(squaredError(x, Decode(ctx, cfg, zPost)))
	switch {
	case cfg.Method == MethodCD:
		f := func(z *Node) *Node { return EBMEnergy(ctx, cfg, z) }
		prior = losses.ContrastiveDivergenceWithNegatives(f, Identity(zPost), zPrior, 0)
	case cfg.Method == MethodSM && cfg.SMVariant == SMFisher:
		_, priorScore := losses.EnergyGradient(func(z *Node) *Node { return PriorEnergy(ctx, cfg, z) }, Identity(zPost))
		prior = MulScalar(ReduceAllMean(ReduceSum(Square(Sub(priorScore, posteriorScore)), 1)), 0.5)
	default:
		prior, _ = PriorLoss(ctx, cfg, x, zPost)
	}
	return generator, prior
}

// TestOneStepLowersEachLossAtItsOwnSamples checks the direction of both
// updates: after one training step, the generator loss and the prior loss
// evaluated at the step's own samples and noise (the same seed replays
// them) are lower than before it — for CD, f rises at the negatives
// relative to the data. A prior trained by gradient ascent, or a generator
// update of the wrong sign, fails here.
func TestOneStepLowersEachLossAtItsOwnSamples(t *testing.T) {
	t.Parallel()
	const seed = 5
	for _, tc := range []struct{ method, smVariant string }{
		{MethodED, ""}, {MethodCD, ""}, {MethodSM, SMFisher}, {MethodSM, SMExact}, {MethodSM, SMSliced},
	} {
		name := tc.method + tc.smVariant
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := tinyConfig(t)
			cfg.Method = tc.method
			if tc.smVariant != "" {
				cfg.SMVariant = tc.smVariant
			}
			// Small steps, so the first-order decrease −lr·‖g‖₁ of Adam's
			// first step dominates.
			cfg.GeneratorLR, cfg.PriorLR = 1e-6, 1e-6
			m := newModel(t, cfg)
			x := imagesTensor(cfg, structuredImages())
			seedModel := func() {
				t.Helper()
				if err := m.Seed(seed); err != nil {
					t.Fatal(err)
				}
			}

			seedModel()
			before := runGraph(t, m.Context(), func(ctx *context.Context, x *Node) []*Node {
				zPost, zPrior := stepDraws(ctx, cfg, x)
				_, score := losses.EnergyGradient(func(z *Node) *Node { return PosteriorEnergy(ctx, cfg, x, z) }, Identity(zPost))
				generator, prior := lossesAt(ctx, cfg, x, zPost, zPrior, score)
				return []*Node{zPost, zPrior, score, generator, prior, Decode(ctx, cfg, zPost)}
			}, x)
			generator0, prior0 := before[3][0], before[4][0]
			naive := readNaiveModel(t, m.Context(), cfg) // its prior f, before the update

			seedModel()
			metrics := trainStep(t, m, x)
			checkStepMetrics(t, metrics, cfg, naive, flatFloat64(t, x), before[5], before[0], before[1])
			// The step saw the same samples and noise: its losses match.
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"generator loss", metrics.GeneratorLoss, generator0}, {"prior loss", metrics.PriorLoss, prior0}} {
				if math.Abs(c.got-c.want) > 1e-9*(1+math.Abs(c.want)) {
					t.Fatalf("the step's %s %.12g differs from its replay %.12g: the replay does not draw what the step drew", c.what, c.got, c.want)
				}
			}

			seedModel()
			latent := func(values []float64) *tensors.Tensor {
				return tensors.FromFlatDataAndDimensions(values, testBatch, testNz)
			}
			after := runGraph(t, m.Context(), func(ctx *context.Context, x, zPost, zPrior, score *Node) []*Node {
				stepDraws(ctx, cfg, x) // advance the stream as the step did
				generator, prior := lossesAt(ctx, cfg, x, zPost, zPrior, score)
				return []*Node{generator, prior}
			}, x, latent(before[0]), latent(before[1]), latent(before[2]))
			generator1, prior1 := after[0][0], after[1][0]

			if !(generator1 < generator0) {
				t.Errorf("generator loss at the step's samples %.9g → %.9g: want it lower after the update", generator0, generator1)
			}
			if !(prior1 < prior0) {
				t.Errorf("%s prior loss at the step's samples %.9g → %.9g: want it lower after the update", name, prior0, prior1)
			}
		})
	}
}

// checkStepMetrics checks a training step's reported metrics against their
// definitions, computed here from the step's replayed samples: the
// reconstruction MSE is the squared error of the images x against G(z_post)
// averaged over examples and pixels, PosteriorEnergy is mean f(z_post) and,
// for CD only, PriorEnergy is mean f(z_prior), f computed by the naive MLP.
func checkStepMetrics(t *testing.T, metrics StepMetrics, cfg Config, naive naiveModel, x, decoded, zPost, zPrior []float64) {
	t.Helper()
	var mse, fPost, fPrior float64
	for i, v := range x {
		mse += (v - decoded[i]) * (v - decoded[i]) / float64(len(x))
	}
	for i := range testBatch {
		fPost += naive.f(row(zPost, i, testNz)) / testBatch
		fPrior += naive.f(row(zPrior, i, testNz)) / testBatch
	}
	if cfg.Method != MethodCD {
		fPrior = 0 // not sampled
	}
	if metrics.PriorSampled != (cfg.Method == MethodCD) {
		t.Errorf("PriorSampled = %v for method %s", metrics.PriorSampled, cfg.Method)
	}
	got := []float64{metrics.ReconstructionMSE, metrics.PosteriorEnergy, metrics.PriorEnergy}
	testutil.AssertAllClose(t, "step metrics (reconstruction MSE, mean f(z_post), mean f(z_prior))", got, []float64{mse, fPost, fPrior}, 1e-9)
}

// TestGuardKeepsEveryVariableUnlessAllChecksPass runs guardUpdates on a
// variable doubled (or multiplied by +Inf) in the graph, with the other
// checks passed or failed, and reads the variable back: it must change only
// when the checks pass and its new value is finite, and the random
// generator's state must advance either way.
func TestGuardKeepsEveryVariableUnlessAllChecksPass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		checksPass bool
		factor     float64
		want       []float64
		wantFinite bool
	}{
		{"all checks pass", true, 2, []float64{2, -4}, true},
		{"a check fails, updates finite", false, 2, []float64{1, -2}, true},
		{"updates infinite", true, math.Inf(1), []float64{1, -2}, false},
		{"both", false, math.Inf(1), []float64{1, -2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.New()
			if err := ctx.SetRNGStateFromSeed(3); err != nil {
				t.Fatal(err)
			}
			rngBefore := rngState(t, ctx)
			exec, err := context.NewExec(testBackend(), ctx, func(ctx *context.Context, checksPass, factor *Node) *Node {
				g := factor.Graph()
				w := ctx.VariableWithValue("w", []float64{1, -2})
				w.SetValueGraph(Mul(w.ValueGraph(g), factor))
				ctx.RandomNormal(g, factor.Shape()) // advances the generator's state
				return guardUpdates(ctx, g, checksPass)
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Exec(tc.checksPass, tc.factor)
			if err != nil {
				t.Fatal(err)
			}
			if got := tensors.ToScalar[bool](out[0]); got != tc.wantFinite {
				t.Errorf("guardUpdates reported new values finite = %v, want %v", got, tc.wantFinite)
			}
			w := ctx.GetVariable("w")
			if got := w.MustValue().Value().([]float64); !slices.Equal(got, tc.want) {
				t.Errorf("w = %v after the step, want %v", got, tc.want)
			}
			if rngState(t, ctx) == rngBefore {
				t.Error("the random generator's state did not advance: the guard must not hold it back")
			}
		})
	}
}

// rngState is ctx's random generator state, printed.
func rngState(t *testing.T, ctx *context.Context) string {
	t.Helper()
	v := ctx.GetVariableByScopeAndName(context.RootScope, context.RNGStateVariableName)
	if v == nil {
		t.Fatal("no random generator state variable")
	}
	return v.MustValue().String()
}
