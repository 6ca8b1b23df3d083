// Package ema keeps exponential moving averages of a model's parameters
// inside a GoMLX context, for evaluating a smoothed copy of a model that is
// being trained (the "parameter EMA" of the density experiments).
//
// The averages are ordinary non-trainable context variables under the scope
// Prefix + the model's scope, so they are saved in checkpoints with the model
// and a model function built with AveragedContext reads them unchanged.
package ema

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"

	"github.com/edlebm/edlebm/internal/scopes"
)

// Prefix is the root scope under which the averages are kept.
const Prefix = "/ema"

// countName counts the updates; the first one copies the parameters.
const countName = "ema_updates"

// UpdateGraph adds to g the update a ← decay·a + (1−decay)·v for every
// trainable variable v under scope (an absolute scope such as "/energy"),
// where a is v's average. The first update sets a = v, so the average never
// mixes in an arbitrary initial value. Call it once per training-step graph,
// after the optimizer's update (e.g. from train.AddPerStepUpdateGraphFn).
func UpdateGraph(ctx *context.Context, g *Graph, scope string, decay float64) {
	var params []*context.Variable
	ctx.EnumerateVariables(func(v *context.Variable) {
		if v.Trainable && scopes.Within(v.Scope(), scope) {
			params = append(params, v)
		}
	})
	avgRoot := ctx.InAbsPath(Prefix + scope).Checked(false).WithInitializer(initializers.Zero)
	count := avgRoot.VariableWithShape(countName, shapes.Make(dtypes.Int64)).SetTrainable(false)
	first := Equal(count.ValueGraph(g), ScalarZero(g, dtypes.Int64))
	for _, v := range params {
		avg := avgRoot.InAbsPath(Prefix+v.Scope()).VariableWithShape(v.Name(), v.Shape()).SetTrainable(false)
		value := v.ValueGraph(g)
		mixed := Add(MulScalar(avg.ValueGraph(g), decay), MulScalar(value, 1-decay))
		avg.SetValueGraph(Where(first, value, mixed))
	}
	count.SetValueGraph(AddScalar(count.ValueGraph(g), 1))
}

// AveragedContext returns a context that, used in place of ctx.InAbsPath(scope)
// when building the model, reads the averages instead of the parameters.
func AveragedContext(ctx *context.Context, scope string) *context.Context {
	return ctx.InAbsPath(Prefix + scope).Reuse()
}
