package sampling

import (
	"fmt"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/edlebm/edlebm/losses"
)

// Box is a region of mixed rows: Lo[j] ≤ x[j] ≤ Hi[j] for each numeric
// value j, except in a row whose value at FreeAt[j] is 1 (a category that
// makes the number not count, as a table's spike does; FreeAt[j] < 0:
// none); and a 1 at each place of Pinned (a category a condition fixes,
// in its one-hot block).
type Box struct {
	Lo, Hi []float64
	FreeAt []int
	Pinned []int
}

// OutsideEnergy is what Confine adds to the energy of a row outside its
// box: exp(−OutsideEnergy) is 0 in float32 and float64 alike, and it
// stays far from float32's limit.
const OutsideEnergy = 1e4

// Confine returns the energy of the law p(x) ∝ exp(−E(x)) restricted to
// box: a row outside it has its energy raised by OutsideEnergy, so that
// MALA rejects every proposal that leaves the box and a Gibbs update never
// picks a category that would leave the row outside it, while inside the
// energy and its gradient are E's. A sampler started inside the box stays
// there and samples the restricted law exactly; an energy whose law
// reaches past the data's range (a basin beyond the rows) then cannot
// draw its chains away. With Pinned categories it samples the law given
// them (a Gibbs update of a pinned column keeps its category; a chain
// started elsewhere moves to each pin at its first sweep: the raises add
// up, so each column's update sees its own).
func Confine(energy losses.EnergyFn, box Box) losses.EnergyFn {
	n := len(box.Lo)
	if len(box.Hi) != n || len(box.FreeAt) != n {
		panic(fmt.Errorf("sampling: a box of %d lower, %d upper bounds and %d free-at places", n, len(box.Hi), len(box.FreeAt)))
	}
	if n == 0 && len(box.Pinned) == 0 {
		return energy // rows without numbers nor pins: nothing to confine
	}
	return func(x *Node) *Node {
		if x.Rank() != 2 || x.Shape().Dimensions[1] < n || slices.ContainsFunc(box.Pinned, func(at int) bool { return at < n || at >= x.Shape().Dimensions[1] }) {
			panic(fmt.Errorf("sampling: confining rows of shape %s to a box of %d numbers and categories pinned at %v", x.Shape(), n, box.Pinned))
		}
		// Violations add up: a Gibbs update of one pinned column must still
		// prefer its pin while another column misses its own.
		violated := pinsMissed(x, box.Pinned)
		if n > 0 {
			violated = Add(violated, outsideBox(x, box))
		}
		return Add(energy(x), MulScalar(StopGradient(violated), OutsideEnergy))
	}
}

// pinsMissed is, for each row of x, how many of the places pinned do not
// hold a 1 ([B]).
func pinsMissed(x *Node, pinned []int) *Node {
	missed := ZerosLike(SliceAxis(x, 1, AxisElem(0)))
	for _, at := range pinned {
		missed = Add(missed, OneMinus(SliceAxis(x, 1, AxisElem(at))))
	}
	return Reshape(missed, -1)
}

// outsideBox is 1 for each row of x whose numbers leave box (a number at a
// FreeAt category free), else 0 ([B]).
func outsideBox(x *Node, box Box) *Node {
	n := len(box.Lo)
	g, dt := x.Graph(), x.DType()
	numbers := SliceAxis(x, 1, AxisRange(0, n))
	lo := Reshape(ConvertDType(Const(g, box.Lo), dt), 1, n)
	hi := Reshape(ConvertDType(Const(g, box.Hi), dt), 1, n)
	outside := ConvertDType(Or(LessThan(numbers, lo), GreaterThan(numbers, hi)), dt) // [B, n]: 1 outside
	bound := make([]*Node, n)                                                        // [B, 1] each: 1 where the number counts
	for j, at := range box.FreeAt {
		bound[j] = OnesLike(SliceAxis(numbers, 1, AxisElem(j)))
		if at >= 0 {
			bound[j] = OneMinus(SliceAxis(x, 1, AxisElem(at)))
		}
	}
	return ReduceMax(Mul(outside, Concatenate(bound, 1)), 1)
}
