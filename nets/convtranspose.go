package nets

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// ConvTImpl names an implementation of ConvTranspose2D. All give the same
// values and gradients; they differ in speed per backend.
type ConvTImpl string

const (
	// ConvTAuto picks, per layer, the implementation measured fastest on
	// the graph's backend (see autoConvTImpl): on XLA CPU ConvTShift,
	// ConvTPhase or ConvTNative by the layer's shape, on XLA with CUDA
	// ConvTNative, elsewhere (SimpleGo) ConvTShift.
	ConvTAuto ConvTImpl = "auto"
	// ConvTNative is one input-dilated convolution, which XLA maps to its
	// native (cuDNN on GPU) transposed convolution.
	ConvTNative ConvTImpl = "native"
	// ConvTGather is a matrix product followed by a gather that sums each
	// product into its output pixel. SimpleGo's convolution is slow, and this
	// is several times faster there (see BenchmarkConvTranspose2D).
	ConvTGather ConvTImpl = "gather"
	// ConvTShift is the same matrix product followed by shifted additions
	// (slices, concatenations with zeros, sums) instead of the gather and
	// mask, which SimpleGo runs element by element: 3–20 % faster than
	// ConvTGather there (docs/results/simplego-convt.md).
	ConvTShift ConvTImpl = "shift"
	// ConvTPhase is one ordinary convolution per output phase (the output
	// pixels whose coordinates have the same remainders modulo the
	// stride), each with the kernel taps that reach that phase, the
	// results interleaved: no multiplication by an inserted zero and no
	// scatter of products ("sub-pixel convolution"); its gradient is
	// ConvTNative's.
	ConvTPhase ConvTImpl = "phase"
)

// ConvTImpls lists the valid ConvTImpl values.
var ConvTImpls = []ConvTImpl{ConvTAuto, ConvTNative, ConvTGather, ConvTShift, ConvTPhase}

// xlaBackendName is the name GoMLX's XLA backend reports (backends/xla is
// not imported, so that this package does not need cgo).
const xlaBackendName = "xla"

// ConvTransposeOutputSize is the spatial output size of a transposed
// convolution of an input of size in, as in PyTorch's ConvTranspose2d
// without output padding or dilation.
func ConvTransposeOutputSize(in, kernel, stride, padding int) int {
	return (in-1)*stride - 2*padding + kernel
}

// ConvTranspose2D returns the transposed 2-D convolution of x, shaped
// [B, H, W, Cin] (NHWC), with kernel [kH, kW, Cin, Cout], plus bias [Cout]
// when bias is not nil. It equals PyTorch's ConvTranspose2d with the given
// stride and padding on both spatial axes, where the PyTorch weight
// [Cin, Cout, kH, kW] is this kernel with axes permuted (2, 3, 0, 1):
//
//	out[b, y, x, o] = bias[o] + Σ x[b, i, j, c]·kernel[p, q, c, o]
//	                  over y = i·stride − padding + p, x = j·stride − padding + q.
//
// The output is [B, Ho, Wo, Cout] with Ho = (H−1)·stride − 2·padding + kH.
// Gradients with respect to x, kernel and bias work on every backend;
// ConvTGather and ConvTShift can also be differentiated twice (or more),
// ConvTNative cannot on SimpleGo.
// It panics (GoMLX graph-building style) on inconsistent shapes or settings.
func ConvTranspose2D(x, kernel, bias *Node, stride, padding int, impl ConvTImpl) *Node {
	checkConvT(x, kernel, bias, stride, padding)
	if impl == ConvTAuto {
		impl = autoConvTImpl(x.Graph().Backend(), x.Shape().Dimensions, kernel.Shape().Dimensions, stride)
	}
	var out *Node
	switch impl {
	case ConvTNative:
		out = convTNative(x, kernel, stride, padding)
	case ConvTGather:
		out = convTGather(x, kernel, stride, padding)
	case ConvTShift:
		out = convTShift(x, kernel, stride, padding)
	case ConvTPhase:
		out = convTPhase(x, kernel, stride, padding)
	default:
		panic(fmt.Errorf("nets: unknown transposed-convolution implementation %q; valid: %v", impl, ConvTImpls))
	}
	if bias != nil {
		out = Add(out, Reshape(bias, 1, 1, 1, bias.Shape().Dimensions[0]))
	}
	return out
}

// autoConvTImpl is what ConvTAuto means for x [B,H,W,Cin] and kernel
// [kH,kW,Cin,Cout] on backend. On XLA CPU the three forms each win on some
// layer of the paper's generators (per-layer times in docs/xla.md): the
// shift form where the input is one pixel (a matrix product) or the output
// has at most 4 channels (an image: the native form's matrix product is
// then a few columns wide), the phase form for a stride above 1 that the
// kernel spans (every phase a convolution with no inserted zeros; measured
// on the mnist generator's kernel 3 too), the native one otherwise. On a
// GPU, cuDNN's transposed convolution (native).
func autoConvTImpl(backend backends.Backend, xd, kd []int, stride int) ConvTImpl {
	if backend.Name() != xlaBackendName {
		return ConvTShift
	}
	if strings.Contains(strings.ToLower(backend.Description()), "cuda") {
		return ConvTNative
	}
	switch {
	case xd[1] == 1 && xd[2] == 1 || kd[3] <= 4:
		return ConvTShift
	case stride > 1 && kd[0] >= stride && kd[1] >= stride:
		return ConvTPhase
	}
	return ConvTNative
}

// checkConvT panics with a description of the first inconsistent argument.
func checkConvT(x, kernel, bias *Node, stride, padding int) {
	fail := func(format string, args ...any) {
		panic(fmt.Errorf("nets: ConvTranspose2D: "+format, args...))
	}
	if x.Rank() != 4 || kernel.Rank() != 4 {
		fail("x %s and kernel %s must both have rank 4 ([B,H,W,Cin] and [kH,kW,Cin,Cout])", x.Shape(), kernel.Shape())
	}
	xd, kd := x.Shape().Dimensions, kernel.Shape().Dimensions
	if xd[3] != kd[2] {
		fail("x has %d channels (shape %s) but kernel %s expects %d", xd[3], x.Shape(), kernel.Shape(), kd[2])
	}
	if stride < 1 || padding < 0 {
		fail("stride %d must be ≥ 1 and padding %d ≥ 0", stride, padding)
	}
	for axis := range 2 {
		if n := ConvTransposeOutputSize(xd[1+axis], kd[axis], stride, padding); n < 1 {
			fail("input %s, kernel %s, stride %d, padding %d give output size %d on spatial axis %d",
				x.Shape(), kernel.Shape(), stride, padding, n, axis)
		}
	}
	if bias != nil && (bias.Rank() != 1 || bias.Shape().Dimensions[0] != kd[3]) {
		fail("bias %s must be [%d], one value per output channel", bias.Shape(), kd[3])
	}
}

// nhwc is the axes layout of x [B,H,W,C] and kernel [kH,kW,Cin,Cout].
var nhwc = ConvolveAxesConfig{
	InputBatch: 0, InputSpatial: []int{1, 2}, InputChannels: 3,
	KernelSpatial: []int{0, 1}, KernelInputChannels: 2, KernelOutputChannels: 3,
	OutputBatch: 0, OutputSpatial: []int{1, 2}, OutputChannels: 3,
}

// convTNative is the input-dilated convolution of x with the spatially
// flipped kernel, padded by k−1−padding. GoMLX cannot differentiate input
// dilation, so the node gets its own gradient (convTNativeVJP). Every
// argument is set explicitly, as SimpleGo requires.
func convTNative(x, kernel *Node, stride, padding int) *Node {
	kd := kernel.Shape().Dimensions
	out := ConvGeneral(x, flipSpatial(kernel), nhwc, []int{1, 1},
		[][2]int{{kd[0] - 1 - padding, kd[0] - 1 - padding}, {kd[1] - 1 - padding, kd[1] - 1 - padding}},
		[]int{stride, stride}, []int{1, 1}, 1, 1)
	return withVJP(out, convTNativeVJP(stride, padding))
}

// convTNativeVJP returns the gradient of a convTNative node, whose inputs
// are x and the flipped kernel (nativeGradients).
func convTNativeVJP(stride, padding int) func(node, v *Node) []*Node {
	return func(node, v *Node) []*Node {
		dx, dk := nativeGradients(node.Inputs()[0], flipSpatial(node.Inputs()[1]), v, stride, padding)
		return []*Node{dx, flipSpatial(dk)}
	}
}

// nativeGradients returns the gradients, given the adjoint v of its output,
// of the transposed convolution of x by kernel: with respect to x, the
// ordinary strided convolution that it transposes; with respect to the
// kernel, a convolution of v by x.
func nativeGradients(x, kernel, v *Node, stride, padding int) (dx, dk *Node) {
	ones, strides := []int{1, 1}, []int{stride, stride}
	same := [][2]int{{padding, padding}, {padding, padding}}
	// dx[b,i,j,c] = Σ v[b, i·s−p+p', j·s−p+q', o]·kernel[p',q',c,o]: the
	// kernel's channel axes swap roles.
	dxAxes := nhwc.Clone()
	dxAxes.KernelInputChannels, dxAxes.KernelOutputChannels = 3, 2
	dx = ConvGeneral(v, kernel, dxAxes, strides, same, ones, ones, 1, 1)

	// dK[p',q',c,o] = Σ_{b,i,j} v[b, i·s−p+p', j·s−p+q', o]·x[b,i,j,c]: x is
	// the kernel, dilated by the stride; the batch is contracted and the
	// output channels of v act as the batch.
	dkAxes := ConvolveAxesConfig{
		InputBatch: 3, InputSpatial: []int{1, 2}, InputChannels: 0,
		KernelSpatial: []int{1, 2}, KernelInputChannels: 0, KernelOutputChannels: 3,
		OutputBatch: 3, OutputSpatial: []int{0, 1}, OutputChannels: 2,
	}
	dk = ConvGeneral(v, x, dkAxes, ones, same, ones, strides, 1, 1)
	return dx, dk
}

// flipSpatial reverses both spatial axes of a [kH, kW, ...] kernel. Where
// the backend has Reverse (XLA) it is a Reverse node: XLA's GPU compiler
// recognises an input-dilated convolution of a reversed kernel as cuDNN's
// native transposed convolution (backward-input), and otherwise runs a
// forward convolution over the dilated input, three quarters zeros at
// stride 2. SimpleGo has no Reverse, so there it is a gather.
func flipSpatial(kernel *Node) *Node {
	if kernel.Graph().Backend().Capabilities().Operations[backends.OpTypeReverse] {
		// GoMLX defines no gradient for Reverse: the flip's adjoint is the
		// flip of the adjoint.
		return withVJP(Reverse(kernel, 0, 1), func(_, v *Node) []*Node { return []*Node{flipSpatial(v)} })
	}
	d := kernel.Shape().Dimensions
	taps := d[0] * d[1]
	rows := make([]int32, taps)
	for i := range rows {
		rows[i] = int32(taps - 1 - i) // reversing row-major (p, q) reverses both axes
	}
	flat := Reshape(kernel, taps, d[2]*d[3])
	return Reshape(Gather(flat, indexColumn(kernel.Graph(), rows)), d...)
}

// indexColumn is the constant [len(rows), 1] index tensor that Gather needs
// (SimpleGo's Gather only accepts indices of this shape).
func indexColumn(g *Graph, rows []int32) *Node {
	return Const(g, tensors.FromFlatDataAndDimensions(rows, len(rows), 1))
}
