package discrete

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
)

// AISConfig is the setting of annealed importance sampling.
type AISConfig struct {
	// Chains is the number of independent annealing runs (importance
	// weights).
	Chains int
	// Temperatures is the number of intermediate distributions between
	// the base (β = 0) and the model (β = 1), equally spaced in β.
	Temperatures int
	// Seed fixes the base samples and the transitions' draws.
	Seed int64
}

// Validate reports the first invalid setting.
func (c AISConfig) Validate() error {
	if c.Chains < 2 {
		return fmt.Errorf("AIS chains = %d: must be ≥ 2 (the interval resamples them)", c.Chains)
	}
	if c.Temperatures < 1 {
		return fmt.Errorf("AIS temperatures = %d: must be ≥ 1", c.Temperatures)
	}
	return nil
}

// AISResult is an estimate of log Z.
type AISResult struct {
	// LogZ is log of the mean importance weight: an unbiased estimate of Z
	// (so, by Jensen, log Z underestimated on average, and a
	// log-likelihood −E − LogZ overestimated).
	LogZ float64
	// Low and High bound the 95 % bootstrap interval of LogZ, from the
	// chains resampled with replacement.
	Low, High float64
	// LogWeights holds each chain's log importance weight.
	LogWeights []float64
	// Acceptance is the fraction of accepted Gibbs-with-gradients
	// proposals over all transitions.
	Acceptance float64
	// Samples holds the chains' final states (Chains × D values 0 and 1):
	// annealed from the base to the model, samples of the model (each
	// with its importance weight).
	Samples []float32
}

// AIS estimates the log normaliser log Z of p(x) ∝ exp(−E(x)) over
// {0,1}^D by annealed importance sampling (Neal 2001), as Grathwohl et al.
// (2021) evaluate their binary EBMs: chains start from the product of
// Bernoulli distributions with means base (D values, clipped to
// [10⁻³, 1 − 10⁻³]; the data's pixel means make a good base) and pass
// through p_β ∝ p₀^(1−β)·exp(−β·E) at cfg.Temperatures equally spaced β,
// each step adding (β_k − β_{k−1})·(−E(x) − log p₀(x)) to the chain's log
// weight and then moving x by one Gibbs-with-gradients step that keeps
// p_{β_k} invariant (sampling.Anneal runs the loop, as for continuous
// energies).
//
// energyOf builds the energy from the context the graph is built with
// (ctx, the model's): for example the averaged parameters of a trained
// model. The computation runs with ctx's random stream seeded from
// cfg.Seed and puts the stream back afterwards, so training that goes on
// draws what it would have drawn.
func AIS(backend backends.Backend, ctx *context.Context, energyOf func(*context.Context) losses.EnergyFn, base []float64, cfg AISConfig) (res AISResult, err error) {
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	if len(base) == 0 {
		return res, errors.New("AIS: the base distribution has no bits")
	}
	d := len(base)
	logOn, logOff := make([]float32, d), make([]float32, d)
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xa15))
	x := make([]float32, cfg.Chains*d)
	for i, p := range base {
		if math.IsNaN(p) {
			return res, fmt.Errorf("AIS: base mean of bit %d is NaN", i)
		}
		p = min(max(p, 1e-3), 1-1e-3)
		logOn[i], logOff[i] = float32(math.Log(p)), float32(math.Log1p(-p))
		for c := range cfg.Chains {
			if rng.Float64() < p {
				x[c*d+i] = 1
			}
		}
	}

	state, logW, acceptance, err := sampling.Anneal(backend, ctx, tensors.FromFlatDataAndDimensions(x, cfg.Chains, d), cfg.Temperatures, cfg.Seed,
		func(ctx *context.Context, x, logW, betas *Node) (*Node, *Node, *Node) {
			return annealBlock(ctx, energyOf(ctx), x, logW, betas, Const(x.Graph(), logOn), Const(x.Graph(), logOff))
		})
	if err != nil {
		return res, fmt.Errorf("AIS: %w", err)
	}
	res.LogWeights, res.Acceptance = logW, acceptance
	res.Samples = tensors.MustCopyFlatData[float32](state)
	var iv eval.Interval
	if res.LogZ, iv, err = sampling.LogZ(logW, cfg.Seed); err != nil {
		return res, fmt.Errorf("AIS: %w", err)
	}
	res.Low, res.High = iv.Lo, iv.Hi
	return res, nil
}

// annealBlock runs the temperatures betas[1:] (betas[0] is the previous
// block's last) on the chains x [C, D] with log weights logW [C] (float64),
// for the base log-probabilities logOn, logOff [D] of each bit's values.
// It returns the new chains, the new log weights and the block's mean
// acceptance.
func annealBlock(ctx *context.Context, energy losses.EnergyFn, x, logW, betas, logOn, logOff *Node) (next, nextLogW, acceptance *Node) {
	logBase := func(x *Node) *Node {
		return ReduceSum(Add(Mul(x, InsertAxes(logOn, 0)), Mul(OneMinus(x), InsertAxes(logOff, 0))), 1)
	}
	n := betas.Shape().Dimensions[0] - 1
	betas = ConvertDType(betas, x.DType())
	beta := func(k int) *Node { return Reshape(Slice(betas, AxisElem(k))) }
	acceptance = ScalarZero(x.Graph(), x.DType())
	for k := 1; k <= n; k++ {
		logRatio := Sub(Neg(energy(x)), logBase(x)) // log p₁*(x) − log p₀(x)
		increment := Mul(Sub(beta(k), beta(k-1)), logRatio)
		logW = Add(logW, ConvertDType(StopGradient(increment), dtypes.Float64))
		b := beta(k)
		annealed := func(x *Node) *Node {
			return Sub(Mul(b, energy(x)), Mul(OneMinus(b), logBase(x)))
		}
		var accepted *Node
		x, accepted = losses.GibbsWithGradients(ctx, annealed, x, 1)
		acceptance = Add(acceptance, accepted)
	}
	return x, logW, ConvertDType(DivScalar(acceptance, float64(n)), dtypes.Float64)
}
