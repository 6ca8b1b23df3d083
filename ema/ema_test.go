package ema

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
)

// Each step sets the parameter to a known value and updates the average;
// the average must follow a = v on the first update, then
// a ← d·a + (1−d)·v, and reading through AveragedContext must return it.
func TestAverageFollowsTheRecursion(t *testing.T) {
	b := testutil.Backend()
	const decay = 0.9
	ctx := context.New()
	step := context.MustNewExec(b, ctx, func(ctx *context.Context, value *Node) *Node {
		v := ctx.InAbsPath("/model").VariableWithShape("w", value.Shape())
		v.SetValueGraph(value)
		UpdateGraph(ctx, value.Graph(), "/model", decay)
		return value
	})
	read := context.MustNewExec(b, ctx, func(ctx *context.Context, g *Graph) *Node {
		return AveragedContext(ctx, "/model").VariableWithShape("w", step.Context().InAbsPath("/model").GetVariableByScopeAndName("/model", "w").Shape()).ValueGraph(g)
	})
	values := []float64{2, -1, 4, 0.5}
	want := math.NaN()
	for i, v := range values {
		step.MustExec([]float64{v})
		if i == 0 {
			want = v
		} else {
			want = decay*want + (1-decay)*v
		}
		got := tensors.MustCopyFlatData[float64](read.MustExec()[0])[0]
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("after update %d: average %g, want %g", i+1, got, want)
		}
	}
	ctx.EnumerateVariables(func(v *context.Variable) {
		if v.Scope() != "/model" && v.Trainable {
			t.Errorf("average variable %s is trainable: an optimizer would update it", v.ScopeAndName())
		}
	})
}
