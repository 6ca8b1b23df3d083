package lebm

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/internal/scopes"
)

// EpochVariableName is the context variable (int64, in the scope of the
// context given to the graph functions) counting completed epochs, for the
// learning-rate decay.
const EpochVariableName = "epoch"

// EpochVar returns the epoch counter variable, creating it at 0 if needed.
func EpochVar(ctx *context.Context) *context.Variable {
	return ctx.Checked(false).VariableWithValue(EpochVariableName, int64(0)).SetTrainable(false)
}

// adamPart is one Adam optimizer restricted to the variables of one scope.
type adamPart struct {
	// scope is the model scope (GeneratorScope or PriorScope) whose
	// variables this optimizer trains; its state lives in "optimizer_<scope>"
	// and its moments under "/adam_<scope>".
	scope string
	lr    float64
}

// splitAdam trains the generator and the prior with two Adam optimizers,
// each with its own learning rate and moments, in one graph. It implements
// optimizers.Interface.
type splitAdam struct {
	cfg   Config
	parts []adamPart
}

// NewOptimizer returns the optimizer of the latent EBM: one Adam for the
// variables under GeneratorScope (learning rate cfg.GeneratorLR) and one for
// those under PriorScope (cfg.PriorLR), both with betas cfg.Beta1, cfg.Beta2
// and ε cfg.AdamEpsilon, and learning rates lr·cfg.LRDecay^epoch (see
// EpochVar). Variables outside both scopes are not trained.
//
// GoMLX optimizers update every trainable variable they find in the graph,
// so each Adam builds its update while the other model's variables are
// marked non-trainable. Give it the sum of the generator and the prior
// losses: they depend on disjoint sets of variables, so each Adam sees the
// gradient of its own model's loss.
//
// Each UpdateGraph increments the global step (optimizers.GetGlobalStepVar)
// once. It discards the whole update — variables, moments, global step;
// not the random stream — when the loss or an updated variable is NaN or
// ±Inf, or a check of the model function failed (StepModelFn), so that a
// diverging step leaves the model as it was.
func NewOptimizer(cfg Config) optimizers.Interface {
	mustValid(cfg)
	return &splitAdam{cfg: cfg, parts: []adamPart{
		{GeneratorScope, cfg.GeneratorLR},
		{PriorScope, cfg.PriorLR},
	}}
}

// UpdateGraph implements optimizers.Interface.
func (o *splitAdam) UpdateGraph(ctx *context.Context, g *Graph, loss *Node) {
	for _, part := range o.parts {
		o.updatePart(ctx, g, loss, part)
	}
	optimizers.IncrementGlobalStepGraph(ctx, g, dtypes.Int64)
	guardStep(ctx, g, loss)
}

// updatePart builds the Adam update of the variables under part.scope.
func (o *splitAdam) updatePart(ctx *context.Context, g *Graph, loss *Node, part adamPart) {
	prefix := ctx.In(part.scope).Scope()
	var frozen []*context.Variable
	for v := range ctx.IterVariables() {
		if v.Trainable && !scopes.Within(v.Scope(), prefix) {
			v.SetTrainable(false)
			frozen = append(frozen, v)
		}
	}
	defer func() {
		for _, v := range frozen {
			v.SetTrainable(true)
		}
	}()

	partCtx := ctx.In("optimizer_" + part.scope)
	// Adam reads its learning rate from this variable: set it to
	// lr·decay^epoch for this step.
	dtype := loss.DType()
	epoch := ConvertDType(EpochVar(ctx).ValueGraph(g), dtype)
	lr := MulScalar(Pow(Scalar(g, dtype, o.cfg.LRDecay), epoch), part.lr)
	optimizers.LearningRateVar(partCtx, dtype, part.lr).SetValueGraph(lr)

	optimizers.Adam().
		Scope("adam_"+part.scope).
		LearningRate(part.lr).
		Betas(o.cfg.Beta1, o.cfg.Beta2).
		Epsilon(o.cfg.AdamEpsilon).
		Done().
		UpdateGraph(partCtx, g, loss)
}

// Clear implements optimizers.Interface: it deletes both optimizers' moments
// and state.
func (o *splitAdam) Clear(ctx *context.Context) error {
	for _, part := range o.parts {
		if err := ctx.InAbsPath("/adam_" + part.scope).DeleteVariablesInScope(); err != nil {
			return err
		}
		if err := ctx.In("optimizer_" + part.scope).DeleteVariablesInScope(); err != nil {
			return err
		}
	}
	return nil
}
