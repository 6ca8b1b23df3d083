package sampling

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/internal/progress"
	"github.com/edlebm/edlebm/internal/rngstate"
	"github.com/edlebm/edlebm/losses"
)

// The spacings of AnnealConfig.Spacing.
const (
	// SpacingAdaptive places the temperatures at equal steps of
	// thermodynamic length, ∫ sd_β(log p₁*/p₀) dβ, measured by the pilot
	// run: where the log weight's increments vary most between chains, the
	// temperatures lie closest.
	SpacingAdaptive = "adaptive"
	// SpacingLinear places them equally in β.
	SpacingLinear = "linear"
)

// AnnealConfig holds the settings that every annealed importance sampler
// of the module shares (AIS on ℝ^d, discrete.AIS on bits).
type AnnealConfig struct {
	// Chains is the number of independent annealing runs (importance
	// weights; default DefaultAISChains); at least 2, for the bootstrap
	// interval.
	Chains int
	// Temperatures is the number of intermediate distributions of the
	// reported estimate (default DefaultAISTemperatures); the check run
	// has half of them.
	Temperatures int
	// Spacing is SpacingAdaptive (the default, "") or SpacingLinear.
	Spacing string
	// Tolerance is the widest bracket, reverse estimate minus forward
	// estimate of log Z in nats, taken as converged (default 1).
	Tolerance float64
	// NoChecks skips the check run and the reverse run: one annealing,
	// with no evidence of convergence (Converged is then true).
	NoChecks bool
	// Seed fixes the base samples and the transitions' draws.
	Seed int64
	// Stop, when it delivers (a Ctrl-C), ends the annealing between two
	// compiled blocks with ErrStopped: on a large model it takes minutes.
	Stop <-chan os.Signal `json:"-"`
	// Progress, when set, names the annealing in a report of its
	// temperatures done, their rate and the time to go.
	Progress string `json:"-"`
}

// ErrStopped is what Anneal returns when AnnealConfig.Stop delivered.
var ErrStopped = errors.New("sampling: annealing stopped")

// The defaults of AnnealConfig and AISConfig: converged, by their checks,
// on docs/sampling.md's closed-form targets and on the models of
// docs/own-data.md's density table.
const (
	DefaultAISChains       = 256
	DefaultAISTemperatures = 2000
	DefaultAISTransitions  = 2
)

// withDefaults fills in the zero fields and checks the settings.
func (c AnnealConfig) withDefaults() (AnnealConfig, error) {
	c.Chains, c.Temperatures = cmp.Or(c.Chains, DefaultAISChains), cmp.Or(c.Temperatures, DefaultAISTemperatures)
	if c.Spacing == "" {
		c.Spacing = SpacingAdaptive
	}
	if c.Tolerance == 0 {
		c.Tolerance = 1
	}
	return c, c.Validate()
}

// Validate reports the first invalid setting, naming it and its value.
func (c AnnealConfig) Validate() error {
	switch {
	case c.Chains < 2:
		return fmt.Errorf("AIS chains = %d: must be ≥ 2 (the interval resamples them)", c.Chains)
	case c.Temperatures < 1:
		return fmt.Errorf("AIS temperatures = %d: must be ≥ 1", c.Temperatures)
	case !c.NoChecks && c.Temperatures < 2:
		return fmt.Errorf("AIS temperatures = %d: must be ≥ 2 for the check run at half of them (or no checks)", c.Temperatures)
	case c.Spacing != "" && c.Spacing != SpacingAdaptive && c.Spacing != SpacingLinear:
		return fmt.Errorf("AIS spacing %q: want %q or %q", c.Spacing, SpacingAdaptive, SpacingLinear)
	case !(c.Tolerance >= 0) || math.IsInf(c.Tolerance, 1):
		return fmt.Errorf("AIS tolerance = %v: must be a finite number ≥ 0", c.Tolerance)
	}
	return nil
}

// Path is what annealed importance sampling anneals: from a normalised
// base p₀ over vectors of Dim values, through p_β ∝ p₀^(1−β)·exp(−βE), to
// exp(−E), whose normaliser Z it estimates.
type Path struct {
	Dim int
	// SampleBase draws n chains from p₀: n·Dim values, chain by chain.
	SampleBase func(rng *rand.Rand, n int) []float64
	// LogBase is log p₀(x) [C] of chains x [C, Dim] (float64).
	LogBase func(x *Node) *Node
	// Energy builds E, of chains x [C, Dim] (float64), from the context the
	// graph is built with (the model's variables).
	Energy func(ctx *context.Context) losses.EnergyFn
}

// Kernel is a family of Markov transitions for a Path, each leaving its
// temperature's distribution invariant, with parameters (a step size, a
// preconditioner) that the pilot run tunes and the reported runs then
// keep fixed.
type Kernel struct {
	// Params is the length of a temperature's parameter vector (0: none).
	Params int
	// Initial holds the parameters the pilot starts from.
	Initial []float64
	// Move builds the transitions of the chains x [C, Dim] at one
	// temperature, whose energy is annealed, with that temperature's
	// params [max(Params, 1)]; it returns the new chains and their
	// acceptance (of any shape: its mean is reported).
	Move func(ctx *context.Context, annealed losses.EnergyFn, x, params *Node) (next, acceptance *Node)
	// Adapt returns the next parameters after a pilot block, from the
	// chains (C·Dim values), their normalised weights, the block's
	// acceptance and the block's parameters; nil keeps Initial.
	Adapt func(chains, weights []float64, acceptance float64, params []float64) ([]float64, error)
	// Cost is the number of energy gradients one Move takes (≥ 1); it
	// sizes the compiled blocks of temperatures.
	Cost int
}

// Estimate is one annealing's estimate of log Z.
type Estimate struct {
	Chains       int `json:"chains"`
	Temperatures int `json:"temperatures"`
	// LogZ is the log of the mean importance weight (forward: an
	// underestimate on average, by Jensen; reverse: an overestimate).
	LogZ float64 `json:"log_z"`
	// Interval is the 95 % bootstrap interval of LogZ over the chains: the
	// spread of their weights, not the annealing's distance from
	// equilibrium (which the check run and the bracket show).
	Interval eval.Interval `json:"interval"`
	// Acceptance is the mean acceptance of the transitions.
	Acceptance float64 `json:"acceptance"`
	// EffectiveChains is 1/Σw² of the normalised weights: how many chains
	// the estimate rests on.
	EffectiveChains float64 `json:"effective_chains"`
}

// AISResult is an estimate of log Z with its evidence of convergence.
type AISResult struct {
	// Estimate is the forward annealing at the configured temperatures:
	// the reported log Z.
	Estimate
	// Check is the same annealing at half the temperatures; it differs
	// from Estimate by more than their intervals when the annealing has
	// not converged (with equilibrated chains the error falls as
	// 1/temperatures, so the difference is about Estimate's own error).
	Check Estimate `json:"check"`
	// Upper is the reverse annealing, from the forward chains' final
	// states resampled by weight down to the base (bidirectional Monte
	// Carlo, Grosse et al. 2015): an upper estimate of log Z, exact in
	// expectation when those states are the model's. Upper.LogZ − LogZ is
	// the width of the bracket.
	Upper Estimate `json:"upper"`
	// Bracket is Upper.LogZ − LogZ (0 without checks).
	Bracket float64 `json:"bracket"`
	// Length is the path's thermodynamic length ∫₀¹ sd_β(log p₁*/p₀) dβ
	// from the pilot run: about √(Temperatures · variance of the log
	// weights) with equilibrated chains, so Length²/Temperatures near 1 or
	// above says the temperatures are too few.
	Length float64 `json:"thermodynamic_length"`
	// PilotTemperatures is the number of temperatures the pilot run took.
	PilotTemperatures int `json:"pilot_temperatures"`
	// Seconds is the wall time of the pilot and the runs together.
	Seconds float64 `json:"seconds"`
	// Converged is false when the check or the bracket disagrees, or when
	// a few chains carry the weight; Warnings say how.
	Converged bool     `json:"converged"`
	Warnings  []string `json:"warnings,omitempty"`
	// LogWeights holds each chain's log importance weight.
	LogWeights []float64 `json:"-"`
	// Samples holds the chains' final states (Chains × Dim values),
	// samples of the model each with its importance weight.
	Samples []float64 `json:"-"`
}

// Anneal runs annealed importance sampling (Neal 2001) along path with
// kernel's transitions: a pilot run with resampling tunes the kernel's
// parameters at each temperature and measures the thermodynamic length;
// then, with those fixed (so that each run is exact AIS), the forward
// annealing at cfg.Temperatures, the check at half of them and the
// reverse annealing from the forward chains' final states. Each
// annealing step adds (β_k − β_{k−1})·(−E(x) − log p₀(x)) to a chain's log
// weight, then moves x by transitions that keep p_{β_k} invariant.
//
// The runs use ctx's random stream seeded from cfg.Seed, and the stream is
// put back afterwards, so that training that goes on draws what it would
// have drawn.
func Anneal(backend backends.Backend, ctx *context.Context, path Path, kernel Kernel, cfg AnnealConfig) (res AISResult, err error) {
	if cfg, err = cfg.withDefaults(); err != nil {
		return res, err
	}
	if path.Dim < 1 {
		return res, fmt.Errorf("AIS: dimension %d: must be ≥ 1", path.Dim)
	}
	start := time.Now()
	err = rngstate.Aside(ctx, func() error {
		if err := ctx.SetRNGStateFromSeed(cfg.Seed); err != nil {
			return err
		}
		a, err := newAnnealer(backend, ctx, path, kernel, cfg)
		if err != nil {
			return err
		}
		defer a.exec.Finalize()
		res, err = a.all()
		return err
	})
	res.Seconds = time.Since(start).Seconds()
	if err != nil {
		return res, fmt.Errorf("AIS: %w", err)
	}
	return res, nil
}

// annealBlockGradients is about the number of energy gradients that one
// compiled block holds: GoMLX has no loop op, so each block is unrolled.
const annealBlockGradients = 10

// annealer runs the blocks of one Anneal call: one compiled graph serves
// the pilot, the forward, check and reverse runs.
type annealer struct {
	path   Path
	kernel Kernel
	cfg    AnnealConfig
	exec   *context.Exec
	block  int // temperatures a block
	params int // values of a temperature's parameter vector
	rng    *rand.Rand
	// progress counts the temperatures of the runs after the pilot, when
	// cfg.Progress asks for it.
	progress *progress.Counter
}

func newAnnealer(backend backends.Backend, ctx *context.Context, path Path, kernel Kernel, cfg AnnealConfig) (*annealer, error) {
	a := &annealer{path: path, kernel: kernel, cfg: cfg, params: max(kernel.Params, 1),
		block: max(1, annealBlockGradients/max(kernel.Cost, 1)), rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0xa15c))}
	if kernel.Params > 0 && len(kernel.Initial) != kernel.Params {
		return nil, fmt.Errorf("kernel: %d initial parameters, want %d", len(kernel.Initial), kernel.Params)
	}
	var err error
	a.exec, err = context.NewExec(backend, ctx, func(ctx *context.Context, x, logW, betas, params *Node) []*Node {
		return a.graph(ctx, path.Energy(ctx), x, logW, betas, params)
	})
	return a, err
}

// graph builds one block: the temperatures betas[1:] (betas[0] is the
// previous block's last) with their parameters params [block, P] on the
// chains x [C, Dim] with log weights logW [C]. It returns the new chains
// and log weights, the block's mean acceptance and log(p₁*/p₀) [block+1,
// C] at the chains before each temperature's transitions and at the
// final chains (the pilot measures their spread).
func (a *annealer) graph(ctx *context.Context, energy losses.EnergyFn, x, logW, betas, params *Node) []*Node {
	logRatio := func(x *Node) *Node { return StopGradient(Sub(Neg(energy(x)), a.path.LogBase(x))) }
	beta := func(k int) *Node { return Reshape(Slice(betas, AxisElem(k))) }
	acceptance := ScalarZero(x.Graph(), dtypes.Float64)
	ratios := make([]*Node, 0, a.block+1)
	for k := 1; k <= a.block; k++ {
		r := logRatio(x)
		ratios = append(ratios, r)
		logW = Add(logW, Mul(Sub(beta(k), beta(k-1)), r))
		b := beta(k)
		annealed := func(x *Node) *Node { return Sub(Mul(b, energy(x)), Mul(OneMinus(b), a.path.LogBase(x))) }
		var accepted *Node
		x, accepted = a.kernel.Move(ctx, annealed, x, Reshape(Slice(params, AxisElem(k-1)), a.params))
		acceptance = Add(acceptance, ConvertDType(ReduceAllMean(accepted), dtypes.Float64))
	}
	ratios = append(ratios, logRatio(x))
	return []*Node{x, logW, DivScalar(acceptance, float64(a.block)), Stack(ratios, 0)}
}

// blockResult is what one block returns.
type blockResult struct {
	x, logW    *tensors.Tensor
	acceptance float64
	// logRatios holds block+1 rows of C values: log(p₁*/p₀) before each
	// temperature's transitions, then at the final chains.
	logRatios []float64
}

// run executes one block from x, logW through betas (block+1 values) with
// params (block rows).
func (a *annealer) run(x, logW *tensors.Tensor, betas []float64, params [][]float64) (blockResult, error) {
	select {
	case <-a.cfg.Stop:
		return blockResult{}, ErrStopped
	default:
	}
	flat := make([]float64, 0, a.block*a.params)
	for _, p := range params {
		if len(p) == 0 {
			p = []float64{0}
		}
		flat = append(flat, p...)
	}
	out, err := a.exec.Exec(x, logW, betas, tensors.FromFlatDataAndDimensions(flat, a.block, a.params))
	if err != nil {
		return blockResult{}, err
	}
	r := blockResult{x: out[0], logW: out[1], acceptance: tensors.ToScalar[float64](out[2]),
		logRatios: tensors.MustCopyFlatData[float64](out[3])}
	out[2].FinalizeAll()
	out[3].FinalizeAll()
	return r, nil
}

// walk anneals the chains x0 through betas (betas[0] their temperature),
// each temperature with sched's parameters, block by block (a last,
// shorter block padded with the last temperature: no weight, transitions
// that keep it invariant). It returns the final chains, the log weights
// and the mean acceptance.
func (a *annealer) walk(x0 *tensors.Tensor, betas []float64, sched schedule) (*tensors.Tensor, []float64, float64, error) {
	chains := x0.Shape().Dimensions[0]
	x, logW := x0, tensors.FromFlatDataAndDimensions(make([]float64, chains), chains)
	accepted, blocks := 0.0, 0
	for k := 0; k+1 < len(betas); k += a.block {
		bs, ps := make([]float64, a.block+1), make([][]float64, a.block)
		for i := range bs {
			bs[i] = betas[min(k+i, len(betas)-1)]
			if i > 0 {
				ps[i-1] = sched.paramsAt(bs[i])
			}
		}
		r, err := a.run(x, logW, bs, ps)
		if err != nil {
			return nil, nil, 0, err
		}
		x, logW = r.x, r.logW
		accepted += r.acceptance
		blocks++
		if a.progress != nil {
			a.progress.Add(a.block)
		}
	}
	return x, tensors.MustCopyFlatData[float64](logW), accepted / float64(max(blocks, 1)), nil
}

// all runs the pilot, the forward annealing, the check and the reverse
// annealing, and judges their agreement.
func (a *annealer) all() (res AISResult, err error) {
	sched, err := a.pilot()
	if err != nil {
		return res, fmt.Errorf("pilot run: %w", err)
	}
	res.Length, res.PilotTemperatures = sched.length(), len(sched)
	adaptive := a.cfg.Spacing == SpacingAdaptive
	if a.cfg.Progress != "" {
		total := a.cfg.Temperatures
		if !a.cfg.NoChecks { // the check, the reverse run and its settling
			total += a.cfg.Temperatures/2 + a.cfg.Temperatures + 2*a.block
		}
		a.progress = progress.New(a.cfg.Progress, total)
	}
	forward := func(temperatures int) (Estimate, *tensors.Tensor, []float64, error) {
		x0 := a.tensor(a.path.SampleBase(a.rng, a.cfg.Chains))
		x, logW, acc, err := a.walk(x0, sched.grid(temperatures, adaptive), sched)
		if err != nil {
			return Estimate{}, nil, nil, err
		}
		e, err := estimate(temperatures, logW, acc, a.cfg.Seed)
		return e, x, logW, err
	}
	var x *tensors.Tensor
	if res.Estimate, x, res.LogWeights, err = forward(a.cfg.Temperatures); err != nil {
		return res, err
	}
	res.Samples = tensors.MustCopyFlatData[float64](x)
	res.Converged = true
	if a.cfg.NoChecks {
		return res, nil
	}
	if res.Check, _, _, err = forward(a.cfg.Temperatures / 2); err != nil {
		return res, fmt.Errorf("check run: %w", err)
	}
	if res.Upper, err = a.reverse(res.Samples, res.LogWeights, sched); err != nil {
		return res, fmt.Errorf("reverse run: %w", err)
	}
	res.Bracket = res.Upper.LogZ - res.LogZ
	res.judge(a.cfg.Tolerance)
	return res, nil
}

// minEffectiveShare is the smallest share of the chains the forward
// weights may rest on before a warning. Equilibrated chains would give
// log weights of variance about Length²/Temperatures and a share near 1;
// local kernels lag behind the path, and converged estimates here rest on
// 10–100 % of their chains (docs/sampling.md), a starved one on 1 of 256.
const minEffectiveShare = 0.05

// judge sets Converged and Warnings from the check, the bracket and the
// weights' effective number.
func (r *AISResult) judge(tolerance float64) {
	if r.EffectiveChains < minEffectiveShare*float64(r.Chains) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the estimate rests on %.1f of its %d chains (effective number): a few weights dominate, so the annealing is far from equilibrium (use more temperatures)",
			r.EffectiveChains, r.Chains))
	}
	if r.Check.Interval.Hi < r.Interval.Lo || r.Interval.Hi < r.Check.Interval.Lo {
		r.Warnings = append(r.Warnings, fmt.Sprintf("log Z at %d temperatures, %.3f [%.3f, %.3f], and at %d, %.3f [%.3f, %.3f], differ by more than their intervals: the annealing has not converged (use more temperatures)",
			r.Temperatures, r.LogZ, r.Interval.Lo, r.Interval.Hi, r.Check.Temperatures, r.Check.LogZ, r.Check.Interval.Lo, r.Check.Interval.Hi))
	}
	if r.Bracket > tolerance {
		r.Warnings = append(r.Warnings, fmt.Sprintf("log Z is bracketed by %.3f (forward) and %.3f (reverse): %.3f nats apart, more than the tolerance of %g (use more temperatures, or a kernel that moves further)",
			r.LogZ, r.Upper.LogZ, r.Bracket, tolerance))
	}
	r.Converged = len(r.Warnings) == 0
}

// reverse anneals from the forward chains' final states, resampled by
// their weights and moved by the model's transitions, down to the base:
// its mean weight estimates 1/Z.
func (a *annealer) reverse(final, logW []float64, sched schedule) (Estimate, error) {
	x := a.tensor(resample(a.rng, final, normalisedWeights(logW), a.path.Dim))
	// Two blocks at β = 1 (no weight) spread the resampled copies apart.
	settle := make([]float64, 2*a.block+1)
	for i := range settle {
		settle[i] = 1
	}
	x, _, _, err := a.walk(x, settle, sched)
	if err != nil {
		return Estimate{}, err
	}
	betas := sched.grid(a.cfg.Temperatures, a.cfg.Spacing == SpacingAdaptive)
	for i, j := 0, len(betas)-1; i < j; i, j = i+1, j-1 {
		betas[i], betas[j] = betas[j], betas[i]
	}
	_, logWReverse, acc, err := a.walk(x, betas, sched)
	if err != nil {
		return Estimate{}, err
	}
	e, err := estimate(a.cfg.Temperatures, logWReverse, acc, a.cfg.Seed)
	e.LogZ, e.Interval = -e.LogZ, eval.Interval{Lo: -e.Interval.Hi, Hi: -e.Interval.Lo}
	return e, err
}

// tensor is chains, flat, as a [C, Dim] tensor.
func (a *annealer) tensor(flat []float64) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(flat, len(flat)/a.path.Dim, a.path.Dim)
}
