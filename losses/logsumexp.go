package losses

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// logSumExp reduces axis of x as log Σ exp(x), shifting by the maximum for
// stability. Entries equal to −∞ contribute nothing; the shift is taken
// without gradient because the result does not depend on it.
func logSumExp(x *Node, axis int) *Node {
	shift := StopGradient(ReduceAndKeep(x, ReduceMax, axis))
	// A row of only −∞ would give −∞ − (−∞) = NaN: shift by 0 there.
	shift = Where(IsFinite(shift), shift, ZerosLike(shift))
	sum := ReduceSum(Exp(Sub(x, shift)), axis)
	return Add(Log(sum), Squeeze(shift, axis))
}
