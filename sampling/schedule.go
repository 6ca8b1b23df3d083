package sampling

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// segment is one temperature step (lo, hi] of the pilot run: sd is the
// spread of log(p₁*/p₀) across it (the geometric mean of its ends'),
// params the kernel's parameters the pilot used there.
type segment struct {
	lo, hi, sd float64
	params     []float64
}

// schedule is the pilot's record from β = 0 to β = 1, segment by segment:
// where the reported runs place their temperatures and which parameters
// each takes.
type schedule []segment

// paramsAt is the kernel's parameters for the temperature beta.
func (s schedule) paramsAt(beta float64) []float64 {
	for _, seg := range s {
		if beta <= seg.hi {
			return seg.params
		}
	}
	return s[len(s)-1].params
}

// length is the thermodynamic length ∫₀¹ sd_β dβ.
func (s schedule) length() float64 {
	l := 0.0
	for _, seg := range s {
		l += seg.sd * (seg.hi - seg.lo)
	}
	return l
}

// linearShare is the share of the temperatures spaced equally in β by the
// adaptive spacing, so that no stretch of the path goes without.
const linearShare = 0.1

// grid is temperatures+1 values of β from 0 to 1: equally spaced, or
// (adaptive) at equal steps of (1 − linearShare)·Λ(β)/Λ + linearShare·β,
// Λ(β) the thermodynamic length up to β.
func (s schedule) grid(temperatures int, adaptive bool) []float64 {
	betas := make([]float64, temperatures+1)
	total := s.length()
	if !adaptive || !(total > 0) || math.IsInf(total, 1) {
		for k := range betas {
			betas[k] = float64(k) / float64(temperatures)
		}
		return betas
	}
	// The cumulative share F rises linearly across each segment.
	density := func(seg segment) float64 { return (1-linearShare)*seg.sd/total + linearShare }
	k, cum := 1, 0.0
	for _, seg := range s {
		rise := density(seg) * (seg.hi - seg.lo)
		for ; k < temperatures && float64(k)/float64(temperatures) <= cum+rise; k++ {
			betas[k] = seg.lo + (float64(k)/float64(temperatures)-cum)/density(seg)
		}
		cum += rise
	}
	for ; k < temperatures; k++ { // rounding at the end
		betas[k] = 1
	}
	betas[temperatures] = 1
	return betas
}

// The pilot's settings.
const (
	// pilotSpread is the standard deviation across chains of one
	// temperature's log-weight increment that the pilot's steps aim at.
	pilotSpread = 0.2
	// pilotMinTemperatures bounds the pilot's step in β from above (at
	// least this many temperatures, so that the kernel's parameters are
	// tuned along the way).
	pilotMinTemperatures = 100
	// pilotMinStep bounds it from below while the pilot has taken fewer
	// than pilotBudget times the reported temperatures; past that, their
	// spacing does.
	pilotMinStep, pilotBudget = 1e-7, 4
	// pilotWarmupBlocks tune the kernel at β = 0 before the pilot starts.
	pilotWarmupBlocks = 3
)

// pilot is an adaptive sequential Monte Carlo run over the path: each
// block's step in β is chosen from the spread of the log weights'
// increments, the kernel's parameters are adapted after each block to the
// chains (Kernel.Adapt), and the chains are resampled when their effective
// number falls below half. It records what it measured and used as the
// schedule of the reported runs.
func (a *annealer) pilot() (schedule, error) {
	if a.kernel.Adapt == nil && a.cfg.Spacing == SpacingLinear {
		return schedule{{lo: 0, hi: 1, params: a.kernel.Initial}}, nil
	}
	n := a.cfg.Chains
	chains := a.path.SampleBase(rand.New(rand.NewPCG(uint64(a.cfg.Seed), 0x9170)), n)
	x, logW := a.tensor(chains), tensors.FromFlatDataAndDimensions(make([]float64, n), n)
	params, w := a.kernel.Initial, uniformWeights(n)
	repeat := func(p []float64) [][]float64 {
		ps := make([][]float64, a.block)
		for i := range ps {
			ps[i] = p
		}
		return ps
	}
	var sd float64
	for range pilotWarmupBlocks { // at β = 0, no weights
		r, err := a.run(x, logW, make([]float64, a.block+1), repeat(params))
		if err != nil {
			return nil, err
		}
		x, chains = r.x, tensors.MustCopyFlatData[float64](r.x)
		if params, err = a.adapt(chains, w, r.acceptance, params); err != nil {
			return nil, err
		}
		sd = spread(r.logRatios[a.block*n:], w)
	}
	temperatures := float64(max(a.cfg.Temperatures, pilotMinTemperatures))
	var sched schedule
	for beta := 0.0; beta < 1; {
		if math.IsNaN(sd) || math.IsInf(sd, 0) {
			return nil, fmt.Errorf("at β = %.4g the log weights' spread is %v: the energy is not finite on the annealing path", beta, sd)
		}
		lowest := pilotMinStep
		if float64(len(sched)) > pilotBudget*temperatures {
			lowest = 1 / temperatures
		}
		step := min(max(pilotSpread/sd, lowest), 1/float64(pilotMinTemperatures))
		betas := make([]float64, a.block+1)
		for i := range betas {
			betas[i] = min(beta+float64(i)*step, 1)
		}
		start := tensors.MustCopyFlatData[float64](logW)
		r, err := a.run(x, logW, betas, repeat(params))
		if err != nil {
			return nil, err
		}
		sds := spreads(r.logRatios, start, betas, n)
		for k := 1; k <= a.block; k++ {
			if betas[k] > betas[k-1] {
				sched = append(sched, segment{lo: betas[k-1], hi: betas[k], sd: math.Sqrt(sds[k-1] * sds[k]), params: params})
			}
		}
		beta, sd = betas[a.block], sds[a.block]
		x, logW, chains = r.x, r.logW, tensors.MustCopyFlatData[float64](r.x)
		w = normalisedWeights(tensors.MustCopyFlatData[float64](r.logW))
		if effectiveSampleSize(w) < float64(n)/2 {
			chains = resample(a.rng, chains, w, a.path.Dim)
			x, logW, w = a.tensor(chains), tensors.FromFlatDataAndDimensions(make([]float64, n), n), uniformWeights(n)
		}
		if params, err = a.adapt(chains, w, r.acceptance, params); err != nil {
			return nil, err
		}
	}
	return sched, nil
}

// adapt is the kernel's Adapt, or params where it has none.
func (a *annealer) adapt(chains, w []float64, acceptance float64, params []float64) ([]float64, error) {
	if a.kernel.Adapt == nil {
		return params, nil
	}
	return a.kernel.Adapt(chains, w, acceptance, params)
}

// spread is the weighted standard deviation of v under the normalised
// weights w, but at most three times the one that its interquartile range
// implies (where it is not 0): a few chains where the model has (next to) no mass, E = 10¹²
// outside a box, would otherwise make the whole path look steep.
func spread(v, w []float64) float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return cmp.Compare(v[i], v[j]) })
	quantile := func(q float64) float64 {
		cum := 0.0
		for _, i := range idx {
			if cum += w[i]; cum >= q {
				return v[i]
			}
		}
		return v[idx[len(idx)-1]]
	}
	sd, robust := weightedSD(v, w), (quantile(0.75)-quantile(0.25))/1.349 // a normal's interquartile range in standard deviations
	if robust > 0 {
		return min(sd, 3*robust)
	}
	return sd
}

// spreads is, for each row of logRatios (block+1 rows of n chains), the
// weighted standard deviation of log(p₁*/p₀) under the chains' weights at
// that point (spread): logW0 at the block's start, then each temperature's
// increments (β_k − β_{k−1})·row k−1 added.
func spreads(logRatios, logW0, betas []float64, n int) []float64 {
	logW := append([]float64(nil), logW0...)
	out := make([]float64, len(betas))
	for k := range betas {
		row := logRatios[k*n : (k+1)*n]
		out[k] = spread(row, normalisedWeights(logW))
		if k+1 < len(betas) {
			for c := range logW {
				logW[c] += (betas[k+1] - betas[k]) * row[c]
			}
		}
	}
	return out
}

// uniformWeights is n weights of 1/n.
func uniformWeights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / float64(n)
	}
	return w
}
