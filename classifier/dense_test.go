package classifier

import (
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"

	"github.com/edlebm/edlebm/internal/testutil"
)

// dense is GoMLX's layers.Dense with another product: on the same
// variables (dense creates them, layers.Dense reuses them by name, so a
// checkpoint of either is read by the other) both give the same outputs
// and the same gradients with respect to the weights, biases and input.
func TestDenseMatchesGoMLXDense(t *testing.T) {
	ctx := context.New()
	x := make([]float64, 5*7)
	for i := range x {
		x[i] = float64(i%11)/5 - 1
	}
	exec, err := context.NewExec(testutil.Backend(), ctx, func(ctx *context.Context, x *Node) []*Node {
		ours := dense(ctx.In("l"), x, 3)
		theirs := layers.Dense(ctx.In("l").Reuse(), x, true, 3)
		scope := ctx.In("l").In("dense")
		w, b := scope.GetVariable("weights").ValueGraph(x.Graph()), scope.GetVariable("biases").ValueGraph(x.Graph())
		out := []*Node{ours, theirs}
		for _, y := range []*Node{ours, theirs} {
			// A loss whose gradient reaches every entry differently.
			loss := ReduceAllSum(Mul(Square(y), AddScalar(Iota(x.Graph(), y.Shape(), 0), 1)))
			out = append(out, Gradient(loss, w, b, x)...)
		}
		return out
	})
	if err != nil {
		t.Fatal(err)
	}
	got := testutil.ExecTensors(t, exec, tensors.FromFlatDataAndDimensions(x, 5, 7))
	names := []string{"output", "∂/∂weights", "∂/∂biases", "∂/∂x"}
	pairs := [][2]int{{0, 1}, {2, 5}, {3, 6}, {4, 7}}
	for i, p := range pairs {
		testutil.AssertAllClose(t, "dense "+names[i]+" against layers.Dense's", got[p[0]], got[p[1]], 1e-12)
	}
}
