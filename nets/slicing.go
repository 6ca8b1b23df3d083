package nets

import (
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// sliceAxes returns x restricted to [starts[i], limits[i]) on every axis i.
// GoMLX differentiates a Slice with Pad, which SimpleGo lacks; this one's
// gradient pads the adjoint with zeros by concatenation instead, and that
// concatenation's gradient is a sliceAxes again, so the pair can be
// differentiated to any order.
func sliceAxes(x *Node, starts, limits []int) *Node {
	dims := x.Shape().Dimensions
	specs := make([]SliceAxisSpec, len(dims))
	before, after := make([]int, len(dims)), make([]int, len(dims))
	whole := true
	for axis, dim := range dims {
		specs[axis] = AxisRange(starts[axis], limits[axis])
		before[axis], after[axis] = starts[axis], dim-limits[axis]
		whole = whole && before[axis] == 0 && after[axis] == 0
	}
	if whole {
		return x
	}
	return withVJP(Slice(x, specs...), func(_, v *Node) []*Node {
		return []*Node{padZeros(v, before, after)}
	})
}

// padZeros returns x with before[i] zeros in front of it and after[i]
// behind it on every axis i, by concatenation (SimpleGo has no Pad).
func padZeros(x *Node, before, after []int) *Node {
	for axis := range before {
		zeros := func(n int) *Node {
			dims := slices.Clone(x.Shape().Dimensions)
			dims[axis] = n
			return Zeros(x.Graph(), shapes.Make(x.DType(), dims...))
		}
		var parts []*Node
		var constant []bool
		if before[axis] > 0 {
			parts, constant = append(parts, zeros(before[axis])), append(constant, true)
		}
		parts, constant = append(parts, x), append(constant, false)
		if after[axis] > 0 {
			parts, constant = append(parts, zeros(after[axis])), append(constant, true)
		}
		x = concatAxis(parts, axis, constant)
	}
	return x
}

// concatAxis concatenates parts along axis. Its gradient slices the
// adjoint with sliceAxes (so it can be differentiated to any order), and
// gives none to the parts marked constant.
func concatAxis(parts []*Node, axis int, constant []bool) *Node {
	if len(parts) == 1 {
		return parts[0]
	}
	constant = slices.Clone(constant)
	return withVJP(Concatenate(parts, axis), func(node, v *Node) []*Node {
		dims := v.Shape().Dimensions
		starts, limits := make([]int, len(dims)), slices.Clone(dims)
		grads := make([]*Node, len(constant))
		offset := 0
		for i, part := range node.Inputs() {
			n := part.Shape().Dimensions[axis]
			if !constant[i] {
				starts[axis], limits[axis] = offset, offset+n
				grads[i] = sliceAxes(v, starts, limits)
			}
			offset += n
		}
		return grads
	})
}
