package nets

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// matMul returns a·b for matrices a [M, K] and b [K, N].
func matMul(a, b *Node) *Node { return contract(a, 1, b, 0) }

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
