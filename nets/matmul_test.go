package nets

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// unravel returns the multi-index of flat row-major index i in dims.
func unravel(i int, dims []int) []int {
	idx := make([]int, len(dims))
	for axis := len(dims) - 1; axis >= 0; axis-- {
		idx[axis], i = i%dims[axis], i/dims[axis]
	}
	return idx
}

// naiveDotAxes is dotAxes as a loop over every pair of entries of a and b
// whose contracted indices agree; the result has a's free axes, then b's.
func naiveDotAxes(a array, aAxes []int, b array, bAxes []int) array {
	var outDims, aFree, bFree []int
	for axis, d := range a.Dims {
		if !slices.Contains(aAxes, axis) {
			outDims, aFree = append(outDims, d), append(aFree, axis)
		}
	}
	for axis, d := range b.Dims {
		if !slices.Contains(bAxes, axis) {
			outDims, bFree = append(outDims, d), append(bFree, axis)
		}
	}
	n := 1
	for _, d := range outDims {
		n *= d
	}
	out := array{Data: make([]float64, n), Dims: outDims}
	for i, av := range a.Data {
		ai := unravel(i, a.Dims)
	pairs:
		for j, bv := range b.Data {
			bi := unravel(j, b.Dims)
			for c := range aAxes {
				if ai[aAxes[c]] != bi[bAxes[c]] {
					continue pairs
				}
			}
			flat := 0
			for k, axis := range aFree {
				flat = flat*outDims[k] + ai[axis]
			}
			for k, axis := range bFree {
				flat = flat*outDims[len(aFree)+k] + bi[axis]
			}
			out.Data[flat] += av * bv
		}
	}
	return out
}

// TestDotAxesGradients checks dotAxes on contractions whose gradients come
// out with their axes in another order than the input's (so they must be
// transposed back): the product against naiveDotAxes and the gradients of
// L = Σ r ⊙ dotAxes(a, b) against central differences of the naive loop,
// exact since L is linear in each input. All cases share one graph.
func TestDotAxesGradients(t *testing.T) {
	cases := []struct {
		aDims, aAxes, bDims, bAxes []int
	}{
		{[]int{3, 2}, []int{0}, []int{4, 3}, []int{1}},             // aᵀ·bᵀ
		{[]int{2, 3, 4}, []int{2, 0}, []int{4, 5, 2}, []int{0, 2}}, // two axes, paired out of order
		{[]int{2, 3, 4}, []int{1}, []int{2, 3}, []int{1}},          // a middle axis
	}
	rng := rand.New(rand.NewPCG(10, 10))
	var inputs []array
	var wants []array
	var wantGrads [][]float64
	for _, tc := range cases {
		a, b := testutil.RandomArray(rng, 1, tc.aDims...), testutil.RandomArray(rng, 1, tc.bDims...)
		want := naiveDotAxes(a, tc.aAxes, b, tc.bAxes)
		r := testutil.RandomArray(rng, 1, want.Dims...)
		loss := func() float64 { return dot(r.Data, naiveDotAxes(a, tc.aAxes, b, tc.bAxes).Data) }
		inputs = append(inputs, a, b, r)
		wants = append(wants, want)
		wantGrads = append(wantGrads, centralDiff(loss, a.Data, 1), centralDiff(loss, b.Data, 1))
	}
	got := run(t, func(in []*Node) []*Node {
		var outs []*Node
		for i, tc := range cases {
			a, b, r := in[3*i], in[3*i+1], in[3*i+2]
			out := dotAxes(a, tc.aAxes, b, tc.bAxes)
			outs = append(append(outs, out), Gradient(ReduceAllSum(Mul(r, out)), a, b)...)
		}
		return outs
	}, inputs...)
	for i, tc := range cases {
		name := fmt.Sprintf("dotAxes(a%v, %v, b%v, %v)", tc.aDims, tc.aAxes, tc.bDims, tc.bAxes)
		testutil.AssertAllClose(t, name, got[3*i], wants[i].Data, 1e-12)
		testutil.AssertAllClose(t, "dL/da of "+name, got[3*i+1], wantGrads[2*i], 1e-12)
		testutil.AssertAllClose(t, "dL/db of "+name, got[3*i+2], wantGrads[2*i+1], 1e-12)
	}
}
