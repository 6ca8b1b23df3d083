package lebm

import (
	"fmt"

	"github.com/edlebm/edlebm/losses"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// StepLosses holds the graph values of one training step.
type StepLosses struct {
	// Generator is the generator loss mean_i ‖x_i − G(z_post,i)‖², the
	// squared error summed over each example's pixels (see Losses).
	Generator *Node
	// Prior is the prior loss of the configured method.
	Prior *Node
	// PosteriorEnergy is mean f(z_post).
	PosteriorEnergy *Node
	// PriorEnergy is mean f(z_prior) for MethodCD, nil for the others,
	// which draw no prior samples.
	PriorEnergy *Node
	// ReconstructionMSE is the per-pixel mean squared error of G(z_post).
	ReconstructionMSE *Node
	// PosteriorSamples is z_post [B, nz], gradient-stopped.
	PosteriorSamples *Node
}

// Losses builds the losses of one training step on the images x
// [B, H, W, C] (the paper's algorithm): z₀ ~ N(0, I); z_post from
// cfg.PosteriorLangevin on U_post, without gradient through the chain; the
// generator loss at z_post; the prior loss of cfg.Method at the same z_post.
//
// The generator loss is the summed squared error ‖x − G(z)‖², as in the
// authors' code (SPEC), not the negative log-likelihood ‖x − G(z)‖²/(2σ²)
// of the paper's algorithm: the two differ by a constant factor, which
// leaves Adam's updates unchanged (up to ε).
//
// Because z_post carries no gradient, the generator loss depends only on the
// generator's variables and the prior loss only on the prior's, so one
// optimizer (NewOptimizer) can minimise their sum.
func Losses(ctx *context.Context, cfg Config, x *Node) StepLosses {
	mustValid(cfg)
	g := x.Graph()
	z0 := BaseSample(ctx, cfg, g, x.Shape().Dimensions[0])
	zPost := PosteriorSample(ctx, cfg, x, z0, cfg.PosteriorLangevin)

	sse := squaredError(x, Decode(ctx, cfg, zPost))
	pixels := x.Shape().Size() / x.Shape().Dimensions[0]
	out := StepLosses{
		Generator:         ReduceAllMean(sse),
		ReconstructionMSE: StopGradient(MulScalar(ReduceAllMean(sse), 1/float64(pixels))),
		PosteriorEnergy:   StopGradient(ReduceAllMean(EBMEnergy(ctx, cfg, zPost))),
		PosteriorSamples:  zPost,
	}
	out.Prior, out.PriorEnergy = PriorLoss(ctx, cfg, x, zPost)
	return out
}

// PriorLoss returns the prior loss of cfg.Method at the posterior samples
// zPost of the images x, and mean f(z_prior) for contrastive divergence
// (else nil). Only the score-matching "fisher" variant reads x (for the
// posterior score). It is the prior half of Losses, exported so the prior
// update can be measured on its own.
func PriorLoss(ctx *context.Context, cfg Config, x, zPost *Node) (loss, priorEnergy *Node) {
	prior := func(z *Node) *Node { return PriorEnergy(ctx, cfg, z) }
	// The losses differentiate with respect to z: give them a live node
	// (GoMLX returns zero gradients with respect to a StopGradient node);
	// zPost itself stops any gradient flowing back into the chain.
	z := Identity(zPost)
	switch cfg.Method {
	case MethodED:
		return losses.EnergyDiscrepancy(ctx, prior, z, cfg.ED), nil
	case MethodCD:
		zPrior := PriorSample(ctx, cfg, BaseSample(ctx, cfg, x.Graph(), z.Shape().Dimensions[0]), cfg.PriorLangevin)
		f := func(z *Node) *Node { return EBMEnergy(ctx, cfg, z) }
		loss = losses.ContrastiveDivergenceWithNegatives(f, z, zPrior, 0)
		return loss, StopGradient(ReduceAllMean(f(zPrior)))
	}
	switch cfg.SMVariant {
	case SMFisher:
		// ∇log p_θ(z) − ∇log p(z|x) = ∇U_post(z) − ∇U(z).
		_, priorScore := losses.EnergyGradient(prior, z)
		_, posteriorScore := losses.EnergyGradient(func(z *Node) *Node { return PosteriorEnergy(ctx, cfg, x, z) }, z)
		diff := Sub(priorScore, StopGradient(posteriorScore))
		return MulScalar(ReduceAllMean(ReduceSum(Square(diff), 1)), 0.5), nil
	case SMExact:
		return losses.ScoreMatching(prior, z), nil
	default:
		return losses.SlicedScoreMatching(ctx, prior, z, losses.SlicedSMConfig{Projections: cfg.SMProjections}), nil
	}
}

// Metric indices of the vector TrainStepGraph returns.
const (
	MetricGeneratorLoss = iota
	MetricPriorLoss
	MetricPosteriorEnergy
	MetricPriorEnergy
	MetricReconstructionMSE
	// NumMetrics is the number of metrics.
	NumMetrics
)

// Checks lists, in order, the quantities TrainStepGraph checks for
// NaN and ±Inf; its second output has one flag per entry.
var Checks = []string{
	"input batch x",
	"posterior samples z_post",
	"generator loss",
	"prior loss",
	"mean f(z_post)",
	"mean f(z_prior)",
	"updated model and optimizer variables",
}

// TrainStepGraph builds one complete training step on the images x: the
// losses (see Losses), both Adam updates (NewOptimizer) and the increment of
// the global step. It returns
//
//   - metrics, float64 [NumMetrics]: indexed by MetricGeneratorLoss, ...;
//     MetricPriorEnergy is 0 for methods without prior samples;
//   - finite, bool [len(Checks)]: whether each quantity of Checks is free of
//     NaN and ±Inf.
//
// When any check fails, every variable update of the step is discarded
// (the variables keep their values), except the random number generator's
// state, which advances.
func TrainStepGraph(ctx *context.Context, cfg Config, x *Node) (metrics, finite *Node) {
	l := Losses(ctx, cfg, x)
	g := x.Graph()
	priorEnergy := l.PriorEnergy
	if priorEnergy == nil {
		priorEnergy = ZerosLike(l.PosteriorEnergy)
	}
	checks := []*Node{x, l.PosteriorSamples, l.Generator, l.Prior, l.PosteriorEnergy, priorEnergy}
	flags := make([]*Node, len(checks), len(Checks))
	for i, c := range checks {
		flags[i] = allFinite(c)
	}
	NewOptimizer(cfg).UpdateGraph(ctx, g, Add(l.Generator, l.Prior))
	flags = append(flags, guardUpdates(ctx, g, LogicalAll(Stack(flags, 0))))

	values := []*Node{l.Generator, l.Prior, l.PosteriorEnergy, priorEnergy, l.ReconstructionMSE}
	for i, v := range values {
		values[i] = Reshape(ConvertDType(StopGradient(v), dtypes.Float64), 1)
	}
	return Concatenate(values, 0), Stack(flags, 0)
}

// guardUpdates makes every variable changed in g, except the random number
// generator's state, keep its old value unless ok and all new values are
// finite. It returns a boolean scalar: whether all new values are finite.
func guardUpdates(ctx *context.Context, g *Graph, ok *Node) *Node {
	type update struct {
		v        *context.Variable
		old, new *Node
	}
	var updates []update
	newFinite := Const(g, true)
	for v := range ctx.IterVariables() {
		if !v.ChangedInGraph(g) || v.Name() == context.RNGStateVariableName {
			continue
		}
		old := g.GetParameterByName(v.ParameterName())
		if old == nil {
			panic(fmt.Errorf("lebm: no graph parameter for variable %s", v.ScopeAndName()))
		}
		u := update{v, old, v.ValueGraph(g)}
		updates = append(updates, u)
		if u.new.DType().IsFloat() {
			newFinite = LogicalAnd(newFinite, allFinite(u.new))
		}
	}
	keep := LogicalAnd(ok, newFinite)
	for _, u := range updates {
		u.v.SetValueGraph(Where(keep, u.new, u.old))
	}
	return newFinite
}

// allFinite is a boolean scalar: whether every value of the float node n
// is finite.
func allFinite(n *Node) *Node {
	return LogicalAll(IsFinite(n))
}
