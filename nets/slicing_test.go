package nets

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// TestSliceAxes checks sliceAxes on a [3, 4] input, cut on both axes, on
// one, or not at all: the slice against index loops, and the gradient of
// Σ r ⊙ slice with respect to x against r scattered into zeros at the
// slice's positions. All cases share one graph.
func TestSliceAxes(t *testing.T) {
	const rowsX, colsX = 3, 4
	cases := []struct{ starts, limits []int }{
		{[]int{0, 0}, []int{2, 3}}, // cut at the end of every axis
		{[]int{1, 2}, []int{3, 4}}, // cut at the start of every axis
		{[]int{1, 0}, []int{2, 4}}, // one axis, both ends
		{[]int{0, 0}, []int{rowsX, colsX}},
	}
	rng := rand.New(rand.NewPCG(8, 8))
	x := testutil.RandomArray(rng, 1, rowsX, colsX)
	rs := make([]array, len(cases))
	for i, tc := range cases {
		rs[i] = testutil.RandomArray(rng, 1, tc.limits[0]-tc.starts[0], tc.limits[1]-tc.starts[1])
	}
	got := run(t, func(in []*Node) []*Node {
		var outs []*Node
		for i, tc := range cases {
			s := sliceAxes(in[0], tc.starts, tc.limits)
			r := Const(in[0].Graph(), rs[i].Tensor())
			outs = append(outs, s, Gradient(ReduceAllSum(Mul(r, s)), in[0])[0])
		}
		return outs
	}, x)
	for i, tc := range cases {
		var want []float64
		grad := make([]float64, len(x.Data))
		for row := tc.starts[0]; row < tc.limits[0]; row++ {
			for col := tc.starts[1]; col < tc.limits[1]; col++ {
				grad[row*colsX+col] = rs[i].Data[len(want)]
				want = append(want, x.Data[row*colsX+col])
			}
		}
		name := fmt.Sprintf("x[%d:%d, %d:%d]", tc.starts[0], tc.limits[0], tc.starts[1], tc.limits[1])
		testutil.AssertAllClose(t, name, got[2*i], want, 0)
		testutil.AssertAllClose(t, "∂Σ r⊙"+name+"/∂x", got[2*i+1], grad, 0)
	}
}
