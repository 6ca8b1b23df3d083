package sampling

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
)

// TestTuningReachesTheTargetAndScales: on N(0, σ²I₁₀) for MALA, and for
// HMC on an anharmonic target (on a Gaussian HMC's acceptance is not
// monotone in the step: leapfrog resonates with the oscillator), the step
// TuneMALA or TuneHMC settles on gives the target acceptance in the chains
// that follow, and it scales with σ (the target is the same problem in
// other units).
func TestTuningReachesTheTargetAndScales(t *testing.T) {
	const chains, dim, leapfrog = 500, 10, 5
	for _, k := range []struct {
		name   string
		target float64
		energy func(sigma float64) losses.EnergyFn
		tune   func(ctx *context.Context, energy losses.EnergyFn, x0 *tensors.Tensor, cfg TuneConfig) (float64, *tensors.Tensor, error)
		run    func(ctx *context.Context, energy losses.EnergyFn, x *Node, step float64) (*Node, *Node)
	}{
		{"MALA", 0.574, gaussian, func(ctx *context.Context, energy losses.EnergyFn, x0 *tensors.Tensor, cfg TuneConfig) (float64, *tensors.Tensor, error) {
			return TuneMALA(testutil.Backend(), ctx, energy, x0, cfg)
		}, func(ctx *context.Context, energy losses.EnergyFn, x *Node, step float64) (*Node, *Node) {
			return MALA(ctx, energy, x, MALAConfig{StepSize: step, Steps: 4})
		}},
		{"HMC", 0.651, anharmonic, func(ctx *context.Context, energy losses.EnergyFn, x0 *tensors.Tensor, cfg TuneConfig) (float64, *tensors.Tensor, error) {
			return TuneHMC(testutil.Backend(), ctx, energy, x0, leapfrog, cfg)
		}, func(ctx *context.Context, energy losses.EnergyFn, x *Node, step float64) (*Node, *Node) {
			return HMC(ctx, energy, x, HMCConfig{StepSize: step, LeapfrogSteps: leapfrog, Steps: 4})
		}},
	} {
		var tuned []float64
		for _, sigma := range []float64{1, 3} {
			ctx := context.New()
			if err := ctx.SetRNGStateFromSeed(5); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(8, 9))
			x0 := tensors.FromFlatDataAndDimensions(normals(rng, chains*dim, sigma), chains, dim)
			step, x, err := k.tune(ctx, k.energy(sigma), x0, TuneConfig{Target: k.target, InitialStepSize: 0.05, WarmupSteps: 400})
			if err != nil {
				t.Fatal(err)
			}
			exec := context.MustNewExec(testutil.Backend(), ctx, func(ctx *context.Context, x *Node) *Node {
				_, a := k.run(ctx, k.energy(sigma), x, step)
				return ReduceAllMean(a)
			})
			acceptance := tensors.ToScalar[float64](exec.MustExec(x)[0])
			t.Logf("%s, σ = %g: tuned step %.4f, acceptance after warm-up %.3f", k.name, sigma, step, acceptance)
			if math.Abs(acceptance-k.target) > 0.06 {
				t.Errorf("%s, σ = %g: acceptance %.3f with the tuned step %.4f, want %.3f ± 0.06", k.name, sigma, acceptance, step, k.target)
			}
			tuned = append(tuned, step)
		}
		if ratio := tuned[1] / tuned[0]; math.Abs(ratio-3) > 0.6 {
			t.Errorf("%s: tuned steps %.4f (σ = 1) and %.4f (σ = 3): ratio %.2f, want about 3", k.name, tuned[0], tuned[1], ratio)
		}
	}
	if _, _, err := TuneHMC(testutil.Backend(), context.New(), gaussian(1), tensors.FromFlatDataAndDimensions([]float64{0}, 1, 1), 0,
		TuneConfig{Target: 0.6, InitialStepSize: 0.1, WarmupSteps: 1}); err == nil {
		t.Error("TuneHMC with 0 leapfrog steps: no error")
	}
}

func TestTuneConfigRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		cfg  TuneConfig
		want string
	}{
		{TuneConfig{Target: 1, InitialStepSize: 0.1, WarmupSteps: 1}, "target acceptance = 1"},
		{TuneConfig{Target: 0.5, InitialStepSize: -1, WarmupSteps: 1}, "initial step size = -1"},
		{TuneConfig{Target: 0.5, InitialStepSize: 0.1, WarmupSteps: 0}, "warm-up steps = 0"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.cfg, err, tc.want)
		}
	}
}

// TestRunMALAEqualsOneGraph: 12 steps run as blocks (of 6) give the
// states and acceptance of the 12 steps in one graph from the same random
// stream; 0 steps return the chains as they are.
func TestRunMALAEqualsOneGraph(t *testing.T) {
	const n, dim = 50, 3
	x0 := normals(rand.New(rand.NewPCG(1, 2)), n*dim, 2)
	for _, steps := range []int{12} {
		cfg := MALAConfig{StepSize: 0.8, Steps: steps}
		want, wantAcceptance := run(t, func(ctx *context.Context, energy losses.EnergyFn, x0 *Node) (*Node, *Node) {
			return MALA(ctx, energy, x0, cfg)
		}, gaussian(1), x0, dim)
		ctx := context.New()
		if err := ctx.SetRNGStateFromSeed(7); err != nil { // run's seed
			t.Fatal(err)
		}
		x, acceptance, err := RunMALA(testutil.Backend(), ctx, gaussian(1), tensors.FromFlatDataAndDimensions(x0, n, dim), cfg)
		if err != nil {
			t.Fatal(err)
		}
		testutil.AssertAllClose(t, "states", tensors.MustCopyFlatData[float64](x), want, 1e-12)
		if math.Abs(acceptance-wantAcceptance) > 1e-12 {
			t.Errorf("%d steps: acceptance %v, one graph's %v", steps, acceptance, wantAcceptance)
		}
	}
	x := tensors.FromFlatDataAndDimensions(x0, n, dim)
	if got, a, err := RunMALA(testutil.Backend(), context.New(), gaussian(1), x, MALAConfig{StepSize: 0.8}); err != nil || got != x || a != 0 {
		t.Errorf("0 steps: %v, %v, %v", got == x, a, err)
	}
}

// anharmonic is E(x) = Σ_j u_j²/2 + u_j⁴/4, u = x/σ: a log-concave target
// whose oscillation frequency changes with amplitude, so that leapfrog
// does not resonate with it as with a Gaussian.
func anharmonic(sigma float64) losses.EnergyFn {
	return func(x *Node) *Node {
		u2 := Square(DivScalar(x, sigma))
		return ReduceSum(Add(MulScalar(u2, 0.5), MulScalar(Square(u2), 0.25)), -1)
	}
}
