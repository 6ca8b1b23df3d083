package sampling

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// MixedAISConfig is the setting of annealed importance sampling over
// mixed rows (MixedAIS).
type MixedAISConfig struct {
	AnnealConfig
	// BaseStd is σ of the base's numbers, N(0, σ²) each (default 1, the
	// scale of standardised numbers).
	BaseStd float64
	// Categories, when set, are the base's probabilities of each
	// categorical column's categories (the data's shares, say: the nearer
	// the base to the model, the fewer temperatures AIS needs); default
	// uniform. Each is floored at 10⁻³ and renormalised.
	Categories [][]float64
	// MALASteps are the MALA steps on the numbers after each Gibbs sweep
	// of the categories, at every temperature (default 2).
	MALASteps int
	// TargetAcceptance is the MALA acceptance the pilot run tunes each
	// temperature's step toward (default 0.574).
	TargetAcceptance float64
}

// Validate reports the first invalid setting, its zero fields taking
// their defaults.
func (c MixedAISConfig) Validate() error {
	c, err := c.withDefaults()
	if err != nil {
		return err
	}
	_, err = c.AnnealConfig.withDefaults()
	return err
}

func (c MixedAISConfig) withDefaults() (MixedAISConfig, error) {
	c.BaseStd, c.MALASteps, c.TargetAcceptance = cmp.Or(c.BaseStd, 1), cmp.Or(c.MALASteps, 2), cmp.Or(c.TargetAcceptance, 0.574)
	switch {
	case !(c.BaseStd > 0) || math.IsInf(c.BaseStd, 1):
		return c, fmt.Errorf("mixed AIS base σ = %v: must be a finite number > 0", c.BaseStd)
	case c.MALASteps < 0:
		return c, fmt.Errorf("mixed AIS MALA steps = %d: must be ≥ 1", c.MALASteps)
	case !(c.TargetAcceptance > 0 && c.TargetAcceptance < 1):
		return c, fmt.Errorf("mixed AIS target acceptance = %v: want one in (0, 1)", c.TargetAcceptance)
	}
	return c, nil
}

// MixedAIS estimates the log normaliser log Z of p(x) ∝ exp(−E(x)) over
// mixed rows — layout.Numeric numbers, then a one-hot block of each
// categorical column — by annealed importance sampling (Neal 2001): chains
// start from the base p₀, N(0, BaseStd²) numbers and uniform categories,
// and pass through p_β ∝ p₀^(1−β)·exp(−β·E), each temperature adding
// (β_k − β_{k−1})·(−E(x) − log p₀(x)) to a chain's log weight and then
// moving x by one sweep of MixedSweeps (every categorical column drawn
// from its exact conditional under p_β, then MALASteps MALA steps on the
// numbers, their step tuned by the pilot run), which keeps p_β invariant.
// Z sums over the categories and integrates over the numbers, so that a
// row's log-likelihood is −E(x) − log Z. sampling.Anneal runs it as for
// continuous energies: the temperatures spaced by a pilot run, the
// estimate checked at half of them and bracketed from above by the
// reverse annealing (the result's Check, Upper, Converged and Warnings).
//
// energyOf builds the energy, of float32 rows, from the context the graph
// is built with (ctx, the model's). The computation runs with ctx's random
// stream seeded from cfg.Seed and puts the stream back afterwards.
func MixedAIS(backend backends.Backend, ctx *context.Context, energyOf func(*context.Context) losses.EnergyFn, layout MixedLayout, cfg MixedAISConfig) (res AISResult, err error) {
	if cfg, err = cfg.withDefaults(); err != nil {
		return res, err
	}
	if layout.Width() < 1 {
		return res, fmt.Errorf("mixed AIS: rows of %d numbers and categories %v: nothing to anneal", layout.Numeric, layout.Categories)
	}
	probs, err := baseCategories(layout, cfg.Categories)
	if err != nil {
		return res, err
	}
	var logProbs []float64 // log p₀ of each category, in the rows' one-hot places (0 for the numbers)
	for range layout.Numeric {
		logProbs = append(logProbs, 0)
	}
	for _, p := range probs {
		for _, v := range p {
			logProbs = append(logProbs, math.Log(v))
		}
	}
	sigma := cfg.BaseStd
	path := Path{
		Dim: layout.Width(),
		SampleBase: func(rng *rand.Rand, n int) []float64 {
			x := make([]float64, 0, n*layout.Width())
			for range n {
				for range layout.Numeric {
					x = append(x, sigma*rng.NormFloat64())
				}
				for _, p := range probs {
					c, u := 0, rng.Float64()
					for c < len(p)-1 && u >= p[c] {
						u -= p[c]
						c++
					}
					for i := range p {
						x = append(x, float64(btoi(i == c)))
					}
				}
			}
			return x
		},
		LogBase: func(x *Node) *Node {
			// The numbers by a mask, not a slice: SimpleGo has no Pad, a
			// slice's gradient.
			mask := make([]float64, layout.Width())
			for i := range layout.Numeric {
				mask[i] = 1
			}
			numbers := Mul(x, InsertAxes(ConstAs(x, mask), 0))
			categories := ReduceSum(Mul(x, InsertAxes(ConstAs(x, logProbs), 0)), 1) // the one-hot picks each column's log p₀
			constant := -float64(layout.Numeric) * (math.Log(sigma) + 0.5*math.Log(2*math.Pi))
			return Add(AddScalar(MulScalar(ReduceSum(Square(numbers), 1), -0.5/(sigma*sigma)), constant), categories)
		},
		Energy: func(ctx *context.Context) losses.EnergyFn {
			energy := energyOf(ctx)
			return func(x *Node) *Node { // the chains are float64, the network float32
				return ConvertDType(energy(ConvertDType(x, dtypes.Float32)), x.DType())
			}
		},
	}
	categories := 0
	for _, k := range layout.Categories {
		categories += k
	}
	kernel := Kernel{Params: 1, Initial: []float64{0.5 * sigma},
		Cost: max(2*cfg.MALASteps+categories/2, 1), // a MALA step takes two gradients; a Gibbs update, k energies
		Move: func(ctx *context.Context, annealed losses.EnergyFn, x, params *Node) (*Node, *Node) {
			return MixedSweeps(ctx, annealed, x, layout, Reshape(params), 1, cfg.MALASteps)
		},
		Adapt: func(_, _ []float64, acceptance float64, p []float64) ([]float64, error) {
			if layout.Numeric == 0 || cfg.MALASteps == 0 {
				return p, nil
			}
			return []float64{min(max(p[0]*math.Exp(stepGain*(acceptance-cfg.TargetAcceptance)), 1e-10), 1e3)}, nil
		}}
	return Anneal(backend, ctx, path, kernel, cfg.AnnealConfig)
}

// baseCategories is the base's probabilities of each categorical
// column's categories: given (floored at 10⁻³, renormalised) or uniform.
func baseCategories(layout MixedLayout, given [][]float64) ([][]float64, error) {
	if given != nil && len(given) != len(layout.Categories) {
		return nil, fmt.Errorf("mixed AIS: base probabilities of %d columns for %d categorical columns", len(given), len(layout.Categories))
	}
	out := make([][]float64, len(layout.Categories))
	for j, k := range layout.Categories {
		if k < 1 {
			return nil, fmt.Errorf("mixed AIS: categorical column %d has %d categories", j+1, k)
		}
		p := make([]float64, k)
		for i := range p {
			p[i] = 1 / float64(k)
		}
		if given != nil {
			if len(given[j]) != k {
				return nil, fmt.Errorf("mixed AIS: base probabilities of %d categories for column %d of %d", len(given[j]), j+1, k)
			}
			var sum float64
			for i, v := range given[j] {
				if !(v >= 0) || math.IsInf(v, 1) {
					return nil, fmt.Errorf("mixed AIS: base probability %v of column %d's category %d", v, j+1, i+1)
				}
				p[i] = max(v, 1e-3)
				sum += p[i]
			}
			for i := range p {
				p[i] /= sum
			}
		}
		out[j] = p
	}
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
