package nets

import (
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// convTGather computes every product of an input pixel with a kernel tap
// once, as one matrix product (x [B·H·W, Cin] by the kernel [Cin, kH·kW·Cout]),
// then gathers and sums, for each output pixel, the products that land on
// it. Unlike an im2col of the zero-dilated input it multiplies no zeros.
// Output pixels with fewer taps than the widest gather row 0 and mask it
// out (a padding row would need Concatenate, whose second derivative needs
// Pad, missing in SimpleGo), so every op here has gradients of any order.
func convTGather(x, kernel *Node, stride, padding int) *Node {
	g := x.Graph()
	xd, kd := x.Shape().Dimensions, kernel.Shape().Dimensions
	b, h, w, cin := xd[0], xd[1], xd[2], xd[3]
	kh, kw, cout := kd[0], kd[1], kd[3]

	kmat := Reshape(TransposeAllAxes(kernel, 2, 0, 1, 3), cin, kh*kw*cout)
	products := Reshape(matMul(Reshape(x, b*h*w, cin), kmat), b*h*w*kh*kw, cout)

	tapsY, widthY := convTTaps(h, kh, stride, padding)
	tapsX, widthX := convTTaps(w, kw, stride, padding)
	ho, wo, width := len(tapsY), len(tapsX), widthY*widthX

	// The rows of products to sum for each output pixel of one image, in
	// [Ho, Wo, width] order; image n's rows are offset by n·H·W·kH·kW.
	imageRows := make([]int32, 0, ho*wo*width)
	mask := make([]float64, 0, ho*wo*width)
	for _, ty := range tapsY {
		for _, tx := range tapsX {
			for a := range widthY {
				for c := range widthX {
					row, valid := 0, a < len(ty) && c < len(tx)
					if valid {
						row = ((ty[a].in*w+tx[c].in)*kh+ty[a].k)*kw + tx[c].k
					}
					imageRows = append(imageRows, int32(row))
					mask = append(mask, boolTo01(valid))
				}
			}
		}
	}
	rows := make([]int32, 0, b*len(imageRows))
	for n := range b {
		offset := int32(n * h * w * kh * kw)
		for _, r := range imageRows {
			rows = append(rows, offset+r)
		}
	}

	gathered := Reshape(Gather(products, indexColumn(g, rows)), b, ho, wo, width, cout)
	if slices.Contains(mask, 0) {
		maskNode := Const(g, tensors.FromFlatDataAndDimensions(mask, 1, ho, wo, width, 1))
		gathered = Mul(gathered, ConvertDType(maskNode, x.DType()))
	}
	return ReduceSum(gathered, 3)
}

func boolTo01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// tap is one (input index, kernel index) pair of a 1-D transposed convolution.
type tap struct{ in, k int }

// convTTaps lists, for each output coordinate o of a 1-D transposed
// convolution, the taps with o = in·stride − padding + k, and the length of
// the longest list.
func convTTaps(size, kernel, stride, padding int) (taps [][]tap, width int) {
	taps = make([][]tap, ConvTransposeOutputSize(size, kernel, stride, padding))
	for i := range size {
		for k := range kernel {
			if o := i*stride - padding + k; o >= 0 && o < len(taps) {
				taps[o] = append(taps[o], tap{i, k})
				width = max(width, len(taps[o]))
			}
		}
	}
	return taps, max(width, 1)
}
