package nets

import (
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// matMul returns a·b for matrices a [M, K] and b [K, N].
func matMul(a, b *Node) *Node { return contract(a, 1, b, 0) }

// MatrixProduct returns a·b for matrices a [M, K] and b [K, N], with a
// gradient of two matrix products that can itself be differentiated. Use it
// for the trained products of any model: GoMLX v0.26's graph.MatMul
// differentiates through the broadcast product a⊗b, [M, K, N] values, many
// times slower (BenchmarkProductGradient; the numbers are in docs/gomlx.md).
func MatrixProduct(a, b *Node) *Node { return matMul(a, b) }

// contract returns out[i, j] = Σ_c a(i, c)·b(c, j) for rank-2 a and b, where
// c is axis aAxis of a and axis bAxis of b, and i, j are their other axes.
// Its gradient is two more contractions (GoMLX's own materialises the
// broadcast product a⊗b, 10–20× slower on SimpleGo), so it can be
// differentiated to any order.
func contract(a *Node, aAxis int, b *Node, bAxis int) *Node {
	return withVJP(DotGeneral(a, []int{aAxis}, nil, b, []int{bAxis}, nil), contractVJP(aAxis, bAxis))
}

// contractVJP returns the gradient of a contract node; v[i, j] is the
// adjoint of its output, i running over a's free axis and j over b's.
func contractVJP(aAxis, bAxis int) func(node, v *Node) []*Node {
	return func(node, v *Node) []*Node {
		a, b := node.Inputs()[0], node.Inputs()[1]
		var da, db *Node
		if aAxis == 1 { // a is [i, c]
			da = contract(v, 1, b, 1-bAxis)
		} else { // a is [c, i]
			da = contract(b, 1-bAxis, v, 1)
		}
		if bAxis == 0 { // b is [c, j]
			db = contract(a, 1-aAxis, v, 0)
		} else { // b is [j, c]
			db = contract(v, 0, a, 1-aAxis)
		}
		return []*Node{da, db}
	}
}

// dotAxes contracts axes aAxes of a with axes bAxes of b (paired in order), as
// DotGeneral without batch axes: the result has a's free axes, then b's.
// Like contract, it carries its own gradient (two more dotAxes, transposed
// where the axes come out in another order), so it can be differentiated
// to any order.
func dotAxes(a *Node, aAxes []int, b *Node, bAxes []int) *Node {
	aAxes, bAxes = slices.Clone(aAxes), slices.Clone(bAxes)
	return withVJP(DotGeneral(a, aAxes, nil, b, bAxes, nil), dotVJP(aAxes, bAxes))
}

// dotVJP returns the gradient of a dotAxes node; v, the adjoint of its output,
// has a's free axes and then b's.
func dotVJP(aAxes, bAxes []int) func(node, v *Node) []*Node {
	return func(node, v *Node) []*Node {
		a, b := node.Inputs()[0], node.Inputs()[1]
		aFree, bFree := freeAxes(a.Rank(), aAxes), freeAxes(b.Rank(), bAxes)
		vA, vB := axesRange(0, len(aFree)), axesRange(len(aFree), len(aFree)+len(bFree))

		// da[aFree, aAxes] = Σ_bFree v[aFree, bFree]·b[bAxes, bFree]: the
		// contraction leaves b's contracted axes in b's order.
		da := dotAxes(v, vB, b, bFree)
		daPerm := make([]int, a.Rank())
		for i, axis := range aFree {
			daPerm[axis] = i
		}
		sortedB := slices.Sorted(slices.Values(bAxes))
		for j, axis := range aAxes {
			daPerm[axis] = len(aFree) + slices.Index(sortedB, bAxes[j])
		}

		// db[bAxes, bFree] = Σ_aFree a[aFree, aAxes]·v[aFree, bFree]: a's
		// contracted axes come out first, in a's order.
		db := dotAxes(a, aFree, v, vA)
		dbPerm := make([]int, b.Rank())
		for i, axis := range bFree {
			dbPerm[axis] = len(aAxes) + i
		}
		sortedA := slices.Sorted(slices.Values(aAxes))
		for j, axis := range bAxes {
			dbPerm[axis] = slices.Index(sortedA, aAxes[j])
		}
		return []*Node{transposeUnlessIdentity(da, daPerm), transposeUnlessIdentity(db, dbPerm)}
	}
}

// freeAxes lists, in order, the axes below rank that are not in contracted.
func freeAxes(rank int, contracted []int) []int {
	var free []int
	for axis := range rank {
		if !slices.Contains(contracted, axis) {
			free = append(free, axis)
		}
	}
	return free
}

// axesRange is [from, from+1, …, to−1].
func axesRange(from, to int) []int {
	axes := make([]int, 0, to-from)
	for axis := from; axis < to; axis++ {
		axes = append(axes, axis)
	}
	return axes
}

// transposeUnlessIdentity is TransposeAllAxes(x, perm...), or x when perm
// keeps every axis in place (SimpleGo would copy it element by element).
func transposeUnlessIdentity(x *Node, perm []int) *Node {
	for i, axis := range perm {
		if i != axis {
			return TransposeAllAxes(x, perm...)
		}
	}
	return x
}
