package losses

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// One Gibbs sweep from a fixed state of 3 interacting bits lands in each
// of the 8 states with the probability the scan's conditionals give,
// computed here by enumerating the energy: bit 0 given the start's bits 1
// and 2, bit 1 given the new bit 0 and the start's bit 2, then bit 2.
func TestGibbsSweepMatchesEnumeration(t *testing.T) {
	w := [3][3]float64{{0, 1.5, -1}, {1.5, 0, 0.5}, {-1, 0.5, 0}}
	b := [3]float64{-0.5, 0.3, 0.8}
	energyNaive := func(x [3]float64) float64 {
		e := 0.0
		for i := range 3 {
			e += b[i] * x[i]
			for j := i + 1; j < 3; j++ {
				e += w[i][j] * x[i] * x[j]
			}
		}
		return e
	}
	start := [3]float64{1, 0, 1}
	want := make([]float64, 8)
	for s := range 8 {
		next := [3]float64{float64(s >> 2 & 1), float64(s >> 1 & 1), float64(s & 1)}
		x, p := start, 1.0
		for i := range 3 {
			off, on := x, x
			off[i], on[i] = 0, 1
			pOn := 1 / (1 + math.Exp(energyNaive(on)-energyNaive(off)))
			if next[i] == 1 {
				p *= pOn
			} else {
				p *= 1 - pOn
			}
			x[i] = next[i]
		}
		want[s] = p
	}

	const n = 40000
	starts := make([]float64, 0, 3*n)
	for range n {
		starts = append(starts, start[:]...)
	}
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(9); err != nil {
		t.Fatal(err)
	}
	exec := context.MustNewExec(testBackend(), ctx, func(ctx *context.Context, x *Node) *Node {
		g := x.Graph()
		wNode := Const(g, [][]float64{w[0][:], w[1][:], w[2][:]})
		bNode := Const(g, b[:])
		energy := func(x *Node) *Node {
			pairs := MulScalar(ReduceSum(Mul(MatMul(x, wNode), x), 1), 0.5)
			return Add(pairs, ReduceSum(Mul(x, InsertAxes(bNode, 0)), 1))
		}
		return GibbsSweep(ctx, energy, x)
	})
	out := exec.MustExec(tensors.FromFlatDataAndDimensions(starts, n, 3))[0]
	flat := tensors.MustCopyFlatData[float64](out)
	counts := make([]float64, 8)
	for k := range n {
		counts[int(flat[3*k])<<2|int(flat[3*k+1])<<1|int(flat[3*k+2])]++
	}
	for s := range 8 {
		got := counts[s] / n
		sigma := math.Sqrt(want[s] * (1 - want[s]) / n)
		if math.Abs(got-want[s]) > 4*sigma+1e-4 {
			t.Errorf("state %03b: frequency %.4f after one sweep, want %.4f ± %.4f (4σ)", s, got, want[s], 4*sigma)
		}
	}
}
