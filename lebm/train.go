package lebm

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/losses"
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
// authors' code, not the negative log-likelihood ‖x − G(z)‖²/(2σ²)
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
	// zPost stops any gradient flowing back into the chain; the losses'
	// gradients with respect to z go through losses.EnergyGradient, which
	// differentiates gradient-stopped inputs too.
	z := zPost
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

// Metric indices: the order of the scalar predictions of StepModelFn and
// of the vector TrainStepGraph returns.
const (
	MetricGeneratorLoss = iota
	MetricPriorLoss
	MetricPosteriorEnergy
	MetricPriorEnergy
	MetricReconstructionMSE
	// NumMetrics is the number of metrics.
	NumMetrics
)

// Checks lists, in order, the quantities a training step checks for NaN
// and ±Inf: bit i of its failed-checks mask (see FailedChecks) is set when
// Checks[i] is not finite.
var Checks = []string{
	"input batch x",
	"posterior samples z_post",
	"generator loss",
	"prior loss",
	"mean f(z_post)",
	"mean f(z_prior)",
	"updated model and optimizer variables",
}

// checkUpdates is the index in Checks of the updated variables' check,
// which the optimizer makes (the others are the model function's).
const checkUpdates = 6

// Graph parameters through which the model function and the optimizer of
// one training graph share its checks.
const (
	checksOKParam      = "lebm_step_checks_ok"
	updatesFailedParam = "lebm_step_updates_failed"
)

// StepModelFn returns the model function of a training step for GoMLX's
// train.Trainer (as Model.Trainer uses it): on the images inputs[0] it
// builds the losses (see Losses), registers their sum with train.AddLoss
// for the optimizer (NewOptimizer), and returns NumMetrics float64
// scalars, indexed by MetricGeneratorLoss, ... (MetricPriorEnergy is 0 for
// methods without prior samples), followed by an int32 scalar: the mask of
// the checks of Checks that failed before the update.
func StepModelFn(cfg Config) func(ctx *context.Context, spec any, inputs []*Node) []*Node {
	mustValid(cfg)
	return func(ctx *context.Context, _ any, inputs []*Node) []*Node {
		x := inputs[0]
		l := Losses(ctx, cfg, x)
		g := x.Graph()
		priorEnergy := l.PriorEnergy
		if priorEnergy == nil {
			priorEnergy = ZerosLike(l.PosteriorEnergy)
		}
		checks := []*Node{x, l.PosteriorSamples, l.Generator, l.Prior, l.PosteriorEnergy, priorEnergy}
		flags := make([]*Node, len(checks))
		failed := Scalar(g, dtypes.Int32, 0)
		for i, c := range checks {
			flags[i] = allFinite(c)
			failed = BitwiseOr(failed, Where(flags[i], Scalar(g, dtypes.Int32, 0), Scalar(g, dtypes.Int32, 1<<i)))
		}
		ctx.InAbsPath(context.RootScope).SetGraphParam(g, checksOKParam, LogicalAll(Stack(flags, 0)))
		train.AddLoss(ctx, Add(l.Generator, l.Prior))
		out := []*Node{l.Generator, l.Prior, l.PosteriorEnergy, priorEnergy, l.ReconstructionMSE}
		for i, v := range out {
			out[i] = ConvertDType(StopGradient(v), dtypes.Float64)
		}
		return append(out, failed)
	}
}

// FailedChecks returns the int32 mask of the checks of Checks that failed
// in a training step's graph: predictions are StepModelFn's, and the graph
// holds the optimizer's update (NewOptimizer), which adds its own check.
func FailedChecks(ctx *context.Context, predictions []*Node) *Node {
	failed := predictions[NumMetrics]
	if updatesFailed, ok := ctx.InAbsPath(context.RootScope).GetGraphParam(failed.Graph(), updatesFailedParam); ok {
		failed = BitwiseOr(failed, updatesFailed.(*Node))
	}
	return failed
}

// TrainStepGraph builds one complete training step on the images x, as
// GoMLX's trainer does with StepModelFn and NewOptimizer: the losses, both
// Adam updates and the increment of the global step. It returns
//
//   - metrics, float64 [NumMetrics]: indexed by MetricGeneratorLoss, ...;
//   - failed, an int32 scalar: the mask of the checks of Checks that
//     failed (bit i for Checks[i]).
//
// When any check fails, every variable update of the step is discarded
// (the variables keep their values), except the random number generator's
// state, which advances.
func TrainStepGraph(ctx *context.Context, cfg Config, x *Node) (metrics, failed *Node) {
	predictions := StepModelFn(cfg)(ctx, nil, []*Node{x})
	NewOptimizer(cfg).UpdateGraph(ctx, x.Graph(), train.GetLosses(ctx, x.Graph()))
	values := make([]*Node, NumMetrics)
	for i := range values {
		values[i] = Reshape(predictions[i], 1)
	}
	return Concatenate(values, 0), FailedChecks(ctx, predictions)
}

// guardStep discards the step's updates (see guardUpdates) unless the
// model function's checks (if it made any) passed and the loss is finite,
// and records whether the updated values were finite for FailedChecks.
func guardStep(ctx *context.Context, g *Graph, loss *Node) {
	root := ctx.InAbsPath(context.RootScope)
	ok := allFinite(loss)
	if checksOK, found := root.GetGraphParam(g, checksOKParam); found {
		ok = LogicalAnd(ok, checksOK.(*Node))
	}
	newFinite := guardUpdates(ctx, g, ok)
	root.SetGraphParam(g, updatesFailedParam, Where(newFinite, Scalar(g, dtypes.Int32, 0), Scalar(g, dtypes.Int32, 1<<checkUpdates)))
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
