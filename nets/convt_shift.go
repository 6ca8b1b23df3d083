package nets

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// convTShift computes, like convTGather, every product of an input pixel
// with a kernel tap once (x [B,H,W,Cin] by the kernel over Cin, giving
// [B,H,W,kH,kW,Cout]), then sums the products into the output with shifted
// additions instead of a gather: foldTaps along H, then along W. Every op
// is a matrix product, a slice, a concatenation with zeros, an addition or
// a reshape, all with gradients of any order on SimpleGo (see sliceAxes);
// none is a gather or a scatter, which SimpleGo runs element by element,
// and the forward pass does not transpose the kernel.
func convTShift(x, kernel *Node, stride, padding int) *Node {
	xd, kd := x.Shape().Dimensions, kernel.Shape().Dimensions
	b, h, w := xd[0], xd[1], xd[2]
	kh, kw, cout := kd[0], kd[1], kd[3]
	products := dotAxes(x, []int{3}, kernel, []int{2}) // [B, H, W, kH, kW, Cout]
	rows := foldTaps(Reshape(products, b, h, w, kh, kw*cout), stride, padding)
	ho := rows.Shape().Dimensions[1]
	out := foldTaps(Reshape(rows, b*ho, w, 1, kw, cout), stride, padding)
	return Reshape(out, b, ho, out.Shape().Dimensions[1], cout)
}

// foldTaps is a 1-D transposed convolution along axis 1 of the products t
// [A, H, M, K, F] of its inputs with its K kernel taps (M and F ride
// along): the result [A, Ho, M, F], Ho = (H−1)·stride − 2·padding + K, is
//
//	out[a, y, m, f] = Σ t[a, i, m, p, f] over y = i·stride − padding + p.
//
// Output row y = stride·n + r (phase r) takes tap p ≡ r + padding (mod
// stride) from input row i = n + δ, δ = (r + padding − p)/stride: each
// phase is a sum of tap slices shifted by δ rows (zeros shifted in), and
// the phases interleave by stacking them on a new axis after n.
func foldTaps(t *Node, stride, padding int) *Node {
	d := t.Shape().Dimensions
	a, h, m, k, f := d[0], d[1], d[2], d[3], d[4]
	ho := ConvTransposeOutputSize(h, k, stride, padding)
	if h == 1 && m == 1 {
		// One input row: output row y is tap y + padding.
		return Reshape(sliceAxes(t, []int{0, 0, 0, padding, 0}, []int{a, 1, 1, padding + ho, f}), a, ho, 1, f)
	}
	n := (ho + stride - 1) / stride // rows per phase; the last phases may run one past Ho
	phases := make([]*Node, stride)
	for r := range stride {
		var sum *Node
		for p := range k {
			if (r+padding-p)%stride != 0 {
				continue
			}
			delta := (r + padding - p) / stride
			n0, n1 := max(0, -delta), min(n, h-delta) // phase rows that this tap reaches
			if n0 >= n1 {
				continue
			}
			term := sliceAxes(t, []int{0, n0 + delta, 0, p, 0}, []int{a, n1 + delta, m, p + 1, f})
			term = padZeros(Reshape(term, a, n1-n0, m, f), []int{0, n0, 0, 0}, []int{0, n - n1, 0, 0})
			if sum == nil {
				sum = term
			} else {
				sum = Add(sum, term)
			}
		}
		if sum == nil { // a stride wider than the kernel leaves rows no tap reaches
			sum = Zeros(t.Graph(), shapes.Make(t.DType(), a, n, m, f))
		}
		phases[r] = Reshape(sum, a, n, 1, m, f)
	}
	constant := make([]bool, stride) // every phase gets a gradient
	out := Reshape(concatAxis(phases, 2, constant), a, n*stride, m, f)
	if n*stride > ho {
		out = sliceAxes(out, []int{0, 0, 0, 0}, []int{a, ho, m, f})
	}
	return out
}
