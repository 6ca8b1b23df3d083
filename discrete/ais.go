package discrete

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
)

// AISConfig is the setting of annealed importance sampling on bits.
type AISConfig struct {
	sampling.AnnealConfig
	// Transitions is the number of Gibbs-with-gradients steps at each
	// temperature (default 1).
	Transitions int
}

// AIS estimates the log normaliser log Z of p(x) ∝ exp(−E(x)) over
// {0,1}^D by annealed importance sampling (Neal 2001), as Grathwohl et al.
// (2021) evaluate their binary EBMs: chains start from the product of
// Bernoulli distributions with means base (D values, clipped to
// [10⁻³, 1 − 10⁻³]; the data's pixel means make a good base) and pass
// through p_β ∝ p₀^(1−β)·exp(−β·E), each temperature adding
// (β_k − β_{k−1})·(−E(x) − log p₀(x)) to the chain's log weight and then
// moving x by Gibbs-with-gradients steps that keep p_{β_k} invariant.
// sampling.Anneal runs it as for continuous energies: the temperatures
// spaced by a pilot run, the estimate checked at half of them and
// bracketed from above by the reverse annealing (the result's Check,
// Upper, Converged and Warnings).
//
// energyOf builds the energy, of float32 bits, from the context the graph
// is built with (ctx, the model's): for example the averaged parameters of
// a trained model. The computation runs with ctx's random stream seeded
// from cfg.Seed and puts the stream back afterwards, so training that goes
// on draws what it would have drawn.
func AIS(backend backends.Backend, ctx *context.Context, energyOf func(*context.Context) losses.EnergyFn, base []float64, cfg AISConfig) (res sampling.AISResult, err error) {
	if cfg.Transitions < 0 {
		return res, fmt.Errorf("AIS transitions = %d: must be ≥ 1", cfg.Transitions)
	}
	if len(base) == 0 {
		return res, errors.New("AIS: the base distribution has no bits")
	}
	probs, logOn, logOff := make([]float64, len(base)), make([]float64, len(base)), make([]float64, len(base))
	for i, p := range base {
		if math.IsNaN(p) {
			return res, fmt.Errorf("AIS: base mean of bit %d is NaN", i)
		}
		probs[i] = min(max(p, 1e-3), 1-1e-3)
		logOn[i], logOff[i] = math.Log(probs[i]), math.Log1p(-probs[i])
	}
	path := sampling.Path{
		Dim: len(base),
		SampleBase: func(rng *rand.Rand, n int) []float64 {
			x := make([]float64, 0, n*len(base))
			for range n {
				for _, p := range probs {
					bit := 0.0
					if rng.Float64() < p {
						bit = 1
					}
					x = append(x, bit)
				}
			}
			return x
		},
		LogBase: func(x *Node) *Node {
			g := x.Graph()
			return ReduceSum(Add(Mul(x, InsertAxes(Const(g, logOn), 0)), Mul(OneMinus(x), InsertAxes(Const(g, logOff), 0))), 1)
		},
		Energy: func(ctx *context.Context) losses.EnergyFn {
			energy := energyOf(ctx)
			return func(x *Node) *Node { // the chains are float64, the network float32
				return ConvertDType(energy(ConvertDType(x, dtypes.Float32)), x.DType())
			}
		},
	}
	transitions := max(cfg.Transitions, 1)
	kernel := sampling.Kernel{Cost: 2 * transitions, // each step's proposal takes a gradient at x and one at the flipped x
		Move: func(ctx *context.Context, annealed losses.EnergyFn, x, _ *Node) (*Node, *Node) {
			return losses.GibbsWithGradients(ctx, annealed, x, transitions)
		}}
	return sampling.Anneal(backend, ctx, path, kernel, cfg.AnnealConfig)
}
