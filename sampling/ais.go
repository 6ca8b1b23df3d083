package sampling

import (
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
)

// AISConfig is the setting of annealed importance sampling on ℝ^d.
type AISConfig struct {
	// Chains is the number of independent annealing runs (importance
	// weights); at least 2, for the bootstrap interval.
	Chains int
	// Temperatures is the number of intermediate distributions, equally
	// spaced in β from the base (β = 0) to the model (β = 1).
	Temperatures int
	// BaseStd is σ₀ of the base N(0, σ₀²I); a base wider than the model
	// keeps the weights' variance down.
	BaseStd float64
	// StepSize is the step of the one MALA transition at each temperature.
	StepSize float64
	// Seed fixes the base samples and the transitions' draws.
	Seed int64
}

// Validate reports the first invalid setting, naming it and its value.
func (c AISConfig) Validate() error {
	switch {
	case c.Chains < 2:
		return fmt.Errorf("AIS chains = %d: must be ≥ 2 (the interval resamples them)", c.Chains)
	case c.Temperatures < 1:
		return fmt.Errorf("AIS temperatures = %d: must be ≥ 1", c.Temperatures)
	case !(c.BaseStd > 0) || math.IsInf(c.BaseStd, 1):
		return fmt.Errorf("AIS base standard deviation = %v: must be a finite number > 0", c.BaseStd)
	}
	return MALAConfig{StepSize: c.StepSize}.Validate()
}

// AISResult is an estimate of log Z.
type AISResult struct {
	// LogZ is the log of the mean importance weight, whose mean is Z (so
	// log Z is underestimated on average, by Jensen).
	LogZ float64
	// Interval is the 95 % bootstrap interval of LogZ over the chains.
	Interval eval.Interval
	// LogWeights holds each chain's log importance weight.
	LogWeights []float64
	// Acceptance is the fraction of accepted MALA proposals.
	Acceptance float64
	// Samples holds the chains' final states (Chains × d values), samples
	// of the model each with its importance weight.
	Samples []float64
}

// AIS estimates log Z = log ∫ exp(−E(x)) dx over ℝ^dim by annealed
// importance sampling (Neal 2001): chains start from the base p₀ =
// N(0, σ₀²I) and pass through p_β ∝ p₀^(1−β)·exp(−βE) at cfg.Temperatures
// equally spaced β, each step adding (β_k − β_{k−1})·(−E(x) − log p₀(x))
// to the chain's log weight and then moving x by one MALA step that keeps
// p_{β_k} invariant. With Z known, a held-out point's log-likelihood is
// −E(x) − log Z.
//
// energyOf builds the energy from the context the graph is built with
// (ctx: the model's variables); Anneal says how the random stream is used.
func AIS(backend backends.Backend, ctx *context.Context, energyOf func(*context.Context) losses.EnergyFn, dim int, cfg AISConfig) (res AISResult, err error) {
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	if dim < 1 {
		return res, fmt.Errorf("AIS: dimension %d: must be ≥ 1", dim)
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xa15c))
	x := make([]float64, cfg.Chains*dim)
	for i := range x {
		x[i] = cfg.BaseStd * rng.NormFloat64()
	}
	// log p₀(x) = −‖x‖²/(2σ₀²) − (d/2) log(2πσ₀²).
	logNorm := -0.5 * float64(dim) * math.Log(2*math.Pi*cfg.BaseStd*cfg.BaseStd)
	state, logW, acceptance, err := Anneal(backend, ctx, tensors.FromFlatDataAndDimensions(x, cfg.Chains, dim), cfg.Temperatures, cfg.Seed,
		func(ctx *context.Context, x, logW, betas *Node) (*Node, *Node, *Node) {
			return annealBlock(ctx, energyOf(ctx), x, logW, betas, cfg.BaseStd, logNorm, cfg.StepSize)
		})
	if err != nil {
		return res, fmt.Errorf("AIS: %w", err)
	}
	res.LogWeights, res.Acceptance = logW, acceptance
	res.Samples = tensors.MustCopyFlatData[float64](state)
	if res.LogZ, res.Interval, err = LogZ(logW, cfg.Seed); err != nil {
		return res, fmt.Errorf("AIS: %w", err)
	}
	return res, nil
}

// annealBlock runs the temperatures betas[1:] (betas[0] is the previous
// block's last) on the chains x [C, d] (float64) with log weights logW [C]
// and returns the new chains, log weights and the block's mean acceptance.
func annealBlock(ctx *context.Context, energy losses.EnergyFn, x, logW, betas *Node, baseStd, logNorm, step float64) (next, nextLogW, acceptance *Node) {
	negLogBase := func(x *Node) *Node { // −log p₀(x)
		return AddScalar(DivScalar(perExampleSumSq(x), 2*baseStd*baseStd), -logNorm)
	}
	n := betas.Shape().Dimensions[0] - 1
	beta := func(k int) *Node { return Reshape(Slice(betas, AxisElem(k))) }
	acceptance = ScalarZero(x.Graph(), x.DType())
	for k := 1; k <= n; k++ {
		logRatio := Add(Neg(energy(x)), negLogBase(x)) // log(exp(−E(x))/p₀(x))
		logW = Add(logW, ConvertDType(StopGradient(Mul(Sub(beta(k), beta(k-1)), logRatio)), dtypes.Float64))
		b := beta(k)
		annealed := func(x *Node) *Node { return Add(Mul(b, energy(x)), Mul(OneMinus(b), negLogBase(x))) }
		var accepted *Node
		x, accepted = MALASteps(ctx, annealed, x, Scalar(x.Graph(), x.DType(), step), 1)
		acceptance = Add(acceptance, ReduceAllMean(accepted))
	}
	return x, logW, ConvertDType(DivScalar(acceptance, float64(n)), dtypes.Float64)
}
