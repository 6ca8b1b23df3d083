package nets

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// phase1D is one stride phase of a 1-D transposed convolution written as
// an ordinary correlation: its output rows y = stride·n + r (n < rows) are
//
//	y = Σ_m xp[n + m]·kernel[taps[m]],
//
// where xp is the input with low zero rows in front and high behind (a
// negative count crops instead). No tap (a stride wider than the kernel)
// leaves the phase zero.
type phase1D struct {
	taps      []int
	low, high int
	rows      int
}

// convTPhases splits the transposed convolution of an input of size in
// into its stride phases. Output row o = i·stride − padding + t takes, in
// phase r = o mod stride, the taps t ≡ r + padding (mod stride), each from
// input row i = n + (r + padding − t)/stride: consecutive rows for the
// taps in decreasing order, which makes the phase a correlation. It also
// returns the most rows a phase has.
func convTPhases(in, kernel, stride, padding int) (phases []phase1D, rows int) {
	out := ConvTransposeOutputSize(in, kernel, stride, padding)
	for r := range stride {
		p := phase1D{rows: (out - r + stride - 1) / stride}
		for t := kernel - 1; t >= 0; t-- {
			if (r+padding-t)%stride == 0 {
				p.taps = append(p.taps, t)
			}
		}
		if len(p.taps) > 0 {
			first := (r + padding - p.taps[0]) / stride // input row of n = 0, m = 0
			p.low = -first
			p.high = p.rows - 1 + first + len(p.taps) - 1 - (in - 1)
		}
		phases = append(phases, p)
		rows = max(rows, p.rows)
	}
	return phases, rows
}

// convTPhase computes the transposed convolution as stride² ordinary
// (stride-1) convolutions of x, one per output phase with that phase's
// kernel taps, interleaved into the output ("sub-pixel convolution"). Every
// multiplication is one the transposed convolution needs, none by an
// inserted zero, and nothing is scattered: on XLA CPU that is faster than
// the native form's matrix product and col2im where the kernel is a
// multiple of the stride (docs/xla.md). Its gradient is the native form's
// (nativeGradients: one strided convolution for x, where the phases would
// take stride² convolutions of slices of the adjoint), which XLA CPU runs
// faster (withNativeGradient).
func convTPhase(x, kernel *Node, stride, padding int) *Node {
	// Stopped at its output, so that no adjoint reaches the phases' nodes.
	out := StopGradient(convTPhases2D(x, kernel, stride, padding))
	return withNativeGradient(out, x, kernel, stride, padding)
}

// withNativeGradient returns out, the transposed convolution of x by kernel
// computed with no gradient, as a node whose gradient with respect to x and
// the kernel is nativeGradients'. GoMLX gives custom gradients to nodes of
// one input, so the node is a Slice of out, x and the kernel flattened and
// concatenated: its gradient reaches both through the concatenation, and
// XLA simplifies the slice of a concatenation to out itself.
func withNativeGradient(out, x, kernel *Node, stride, padding int) *Node {
	dims, n := out.Shape().Dimensions, out.Shape().Size()
	flat := func(t *Node) *Node { return Reshape(t, t.Shape().Size()) }
	carrier := Concatenate([]*Node{flat(out), flat(x), flat(kernel)}, 0)
	sliced := withVJP(Slice(carrier, AxisRange(0, n)), func(node, v *Node) []*Node {
		parts := node.Inputs()[0].Inputs() // out, x and the kernel, flattened
		x, kernel := parts[1].Inputs()[0], parts[2].Inputs()[0]
		dx, dk := nativeGradients(x, kernel, Reshape(v, dims...), stride, padding)
		zeros := Zeros(v.Graph(), shapes.Make(v.DType(), n)) // out has no gradient
		return []*Node{Concatenate([]*Node{zeros, flat(dx), flat(dk)}, 0)}
	})
	return Reshape(sliced, dims...)
}

// convTPhases2D is convTPhase's value: the phases' convolutions,
// interleaved.
func convTPhases2D(x, kernel *Node, stride, padding int) *Node {
	xd, kd := x.Shape().Dimensions, kernel.Shape().Dimensions
	b, cout := xd[0], kd[3]
	rowPhases, rows := convTPhases(xd[1], kd[0], stride, padding)
	colPhases, cols := convTPhases(xd[2], kd[1], stride, padding)
	constant := make([]bool, stride)
	byRow := make([]*Node, stride)
	for r, pr := range rowPhases {
		byCol := make([]*Node, stride)
		for c, pc := range colPhases {
			var y *Node
			if len(pr.taps) == 0 || len(pc.taps) == 0 {
				y = Zeros(x.Graph(), shapes.Make(x.DType(), b, rows, cols, cout))
			} else {
				y = phaseConv(x, phaseKernel(kernel, pr.taps, pc.taps), pr, pc)
				y = padZeros(y, []int{0, 0, 0, 0}, []int{0, rows - pr.rows, cols - pc.rows, 0})
			}
			byCol[c] = Reshape(y, b, rows, cols, 1, cout)
		}
		byRow[r] = Reshape(concatAxis(byCol, 3, constant), b, rows, 1, cols*stride, cout)
	}
	out := Reshape(concatAxis(byRow, 2, constant), b, rows*stride, cols*stride, cout)
	ho := ConvTransposeOutputSize(xd[1], kd[0], stride, padding)
	wo := ConvTransposeOutputSize(xd[2], kd[1], stride, padding)
	return sliceAxes(out, []int{0, 0, 0, 0}, []int{b, ho, wo, cout})
}

// phaseKernel gathers kernel [kH,kW,Cin,Cout] at the rows × cols taps into
// one phase's [len(rows), len(cols), Cin, Cout] kernel.
func phaseKernel(kernel *Node, rows, cols []int) *Node {
	d := kernel.Shape().Dimensions
	taps := make([]int32, 0, len(rows)*len(cols))
	for _, r := range rows {
		for _, c := range cols {
			taps = append(taps, int32(r*d[1]+c))
		}
	}
	flat := Reshape(kernel, d[0]*d[1], d[2]*d[3])
	return Reshape(Gather(flat, indexColumn(kernel.Graph(), taps)), len(rows), len(cols), d[2], d[3])
}

// phaseConv is the correlation of x [B,H,W,Cin], cropped or padded with
// zeros as the row and column phases say, with the phase kernel k. It is
// never differentiated: convTPhase's gradient is the native form's.
func phaseConv(x, k *Node, rows, cols phase1D) *Node {
	xd := x.Shape().Dimensions
	// Cropping (a negative padding) is a slice; what remains pads.
	x = sliceAxes(x, []int{0, max(0, -rows.low), max(0, -cols.low), 0},
		[]int{xd[0], xd[1] - max(0, -rows.high), xd[2] - max(0, -cols.high), xd[3]})
	pads := [][2]int{{max(0, rows.low), max(0, rows.high)}, {max(0, cols.low), max(0, cols.high)}}
	ones := []int{1, 1}
	return ConvGeneral(x, k, nhwc, ones, pads, ones, ones, 1, 1)
}
