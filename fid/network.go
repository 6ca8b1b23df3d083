package fid

import (
	"fmt"
	"math"
	"strings"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/core/tensors/images"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// InputSize is the height and width the network sees: every image is
// resized to 299×299 first.
const InputSize = 299

// batchNormEpsilon is BasicConv2d's batch-norm epsilon (TF's 0.001).
const batchNormEpsilon = 0.001

// nhwcOIHW convolves NHWC activations with PyTorch's [out, in, kH, kW]
// kernels as stored, so weights are used without transposition.
var nhwcOIHW = ConvolveAxesConfig{
	InputBatch: 0, InputSpatial: []int{1, 2}, InputChannels: 3,
	KernelOutputChannels: 0, KernelInputChannels: 1, KernelSpatial: []int{2, 3},
	OutputBatch: 0, OutputSpatial: []int{1, 2}, OutputChannels: 3,
}

// Pool3 computes the FID Inception network's pool3 features [B, 2048/d] of
// images [B, H, W, C] (C = 1 or 3) with values in [−1, 1], the project's
// image convention, from the variables in ctx (see Network.Load). As the
// FID protocol does, images are first quantised to 8 bits (as if saved as
// PNG), resized bilinearly to 299×299 (PyTorch's align_corners=False) and
// given three channels when grayscale.
func Pool3(ctx *context.Context, d int, x *Node) *Node {
	return ops{native: x.Graph().Backend().Name() == xlaBackendName}.pool3(ctx, d, x)
}

// ops picks how convolutions and pools are computed: with XLA's native
// convolution and windowed reductions (cuDNN on GPU), or with gathered
// windows and matrix products, several times faster on SimpleGo. Both give
// the same values.
type ops struct{ native bool }

func (o ops) pool3(ctx *context.Context, d int, x *Node) *Node {
	if x.Rank() != 4 || (x.Shape().Dimensions[3] != 1 && x.Shape().Dimensions[3] != 3) {
		panic(fmt.Errorf("fid: images must be [batch, height, width, 1 or 3], got %s", x.Shape()))
	}
	x = quantize8(x)
	x = Resize(x, InputSize, InputSize)
	if x.Shape().Dimensions[3] == 1 {
		dims := x.Shape().Dimensions
		x = BroadcastToDims(x, dims[0], dims[1], dims[2], 3)
	}
	cs := stem(d)
	x = o.basicConv(ctx, cs[0], x)
	x = o.basicConv(ctx, cs[1], x)
	x = o.basicConv(ctx, cs[2], x)
	x = o.pool(maxPool3s2, x)
	x = o.basicConv(ctx, cs[3], x)
	x = o.basicConv(ctx, cs[4], x)
	x = o.pool(maxPool3s2, x)
	for _, b := range mixed(d) {
		x = o.inceptionBlock(ctx.In(b.name), b, x)
	}
	return ReduceMean(x, 1, 2)
}

// quantize8 rounds [−1, 1] values to the nearest of the 256 levels of an
// 8-bit image (u/127.5 − 1 for u = 0 … 255).
func quantize8(x *Node) *Node {
	u := Round(MulScalar(AddScalar(ClipScalar(x, -1, 1), 1), 127.5))
	return AddScalar(DivScalar(u, 127.5), -1)
}

// inceptionBlock concatenates the outputs of b's branches along channels.
func (o ops) inceptionBlock(ctx *context.Context, b block, x *Node) *Node {
	var outs []*Node
	for _, br := range b.branches {
		y := o.pool(br.pool, x)
		for _, c := range br.convs {
			y = o.basicConv(ctx, c, y)
		}
		if len(br.heads) == 0 {
			outs = append(outs, y)
			continue
		}
		for _, c := range br.heads {
			outs = append(outs, o.basicConv(ctx, c, y))
		}
	}
	return Concatenate(outs, 3)
}

// pool applies a branch's pooling to NHWC x.
func (o ops) pool(kind poolKind, x *Node) *Node {
	native := o.native
	var sum *Node // 3×3 window sums, padding 1
	switch kind {
	case noPool:
		return x
	case maxPool3s2:
		if native {
			return MaxPool(x).ChannelsAxis(images.ChannelsLast).Window(3).Strides(2).NoPadding().Done()
		}
		return poolGather(x, 2, 0, true)
	case maxPool3s1:
		if native {
			return MaxPool(x).ChannelsAxis(images.ChannelsLast).Window(3).Strides(1).PaddingPerDim([][2]int{{1, 1}, {1, 1}}).Done()
		}
		return poolGather(x, 1, 1, true)
	case avgPool3NoPad:
		if native {
			sum = SumPool(x).ChannelsAxis(images.ChannelsLast).Window(3).Strides(1).PaddingPerDim([][2]int{{1, 1}, {1, 1}}).Done()
		} else {
			sum = poolGather(x, 1, 1, false)
		}
		// The sum over the window's pixels inside the image, over their
		// count: TF's average pool, which does not count padding.
		dims := x.Shape().Dimensions
		count := windowCounts(dims[1], dims[2])
		return Div(sum, Reshape(ConstAsDType(x.Graph(), x.DType(), count), 1, dims[1], dims[2], 1))
	}
	panic(fmt.Errorf("fid: unknown pool kind %d", kind))
}

// windowCounts returns, for each pixel of an h×w image, how many pixels of
// the 3×3 window centred on it lie inside the image.
func windowCounts(h, w int) []float32 {
	inside := func(i, n int) int { return min(i+1, n-1) - max(i-1, 0) + 1 }
	out := make([]float32, h*w)
	for i := range h {
		for j := range w {
			out[i*w+j] = float32(inside(i, h) * inside(j, w))
		}
	}
	return out
}

// basicConv is PyTorch's BasicConv2d in inference: convolution without
// bias, batch norm with its running statistics, ReLU. Its variables live in
// ctx's sub-scopes c.name/conv and c.name/bn, named as in the state dict.
func (o ops) basicConv(ctx *context.Context, c conv, x *Node) *Node {
	g := x.Graph()
	kernel := variable(ctx.In(c.name).In("conv"), "weight", c.out, c.in, c.kh, c.kw).ValueGraph(g)
	var y *Node
	if c.kh == 1 && c.kw == 1 && c.stride == 1 {
		// Most of the network's convolutions: a matrix product, which
		// every backend runs faster than a general convolution.
		y = Einsum("bhwi,oi->bhwo", x, Reshape(kernel, c.out, c.in))
	} else if o.native {
		y = ConvGeneral(x, kernel, nhwcOIHW, []int{c.stride, c.stride},
			[][2]int{{c.padH, c.padH}, {c.padW, c.padW}}, []int{1, 1}, []int{1, 1}, 1, 1)
	} else {
		y = convGather(x, kernel, c)
	}
	bnCtx := ctx.In(c.name).In("bn")
	gamma := variable(bnCtx, "weight", c.out).ValueGraph(g)
	beta := variable(bnCtx, "bias", c.out).ValueGraph(g)
	mean := variable(bnCtx, "running_mean", c.out).ValueGraph(g)
	variance := variable(bnCtx, "running_var", c.out).ValueGraph(g)
	scale := Mul(gamma, Rsqrt(AddScalar(variance, batchNormEpsilon)))
	shift := Sub(beta, Mul(mean, scale))
	y = Add(Mul(y, Reshape(scale, 1, 1, 1, c.out)), Reshape(shift, 1, 1, 1, c.out))
	return Max(y, ZerosLike(y))
}

// xlaBackendName is the name GoMLX's XLA backend reports (backends/xla is
// not imported, so that this package does not need cgo).
const xlaBackendName = "xla"

// convGather convolves NHWC x with the [out, in, kH, kW] kernel as one
// gather of every output pixel's input window (im2col) and one matrix
// product.
func convGather(x, kernel *Node, c conv) *Node {
	b, cin := x.Shape().Dimensions[0], x.Shape().Dimensions[3]
	patches, ho, wo := gatherWindows(x, c.kh, c.kw, c.stride, c.padH, c.padW, 0)
	patches = Reshape(TransposeAllDims(patches, 2, 0, 1, 3), b*ho*wo, c.kh*c.kw*cin)
	k := Reshape(TransposeAllDims(kernel, 2, 3, 1, 0), c.kh*c.kw*cin, c.out)
	return Reshape(Dot(patches, k), b, ho, wo, c.out)
}

// poolGather is a 3×3 max or sum pool of NHWC x by gathering windows.
func poolGather(x *Node, stride, pad int, maximum bool) *Node {
	d := x.Shape().Dimensions
	fill := 0.0
	if maximum {
		fill = math.Inf(-1)
	}
	windows, ho, wo := gatherWindows(x, 3, 3, stride, pad, pad, fill)
	var pooled *Node
	if maximum {
		pooled = ReduceMax(windows, 1)
	} else {
		pooled = ReduceSum(windows, 1)
	}
	return Reshape(TransposeAllDims(pooled, 1, 0, 2), d[0], ho, wo, d[3])
}

// gatherWindows returns the kh×kw windows of NHWC x at the given stride and
// padding as [ho·wo, kh·kw, B, C], with fill where a window leaves the
// image, and the output size ho×wo. It gathers rows of the [H·W + 1, B·C]
// transposed input, whose last row is fill, so the index table does not
// grow with the batch.
func gatherWindows(x *Node, kh, kw, stride, padH, padW int, fill float64) (windows *Node, ho, wo int) {
	g := x.Graph()
	d := x.Shape().Dimensions
	b, h, w, c := d[0], d[1], d[2], d[3]
	ho, wo = (h+2*padH-kh)/stride+1, (w+2*padW-kw)/stride+1
	rows := Reshape(TransposeAllDims(x, 1, 2, 0, 3), h*w, b*c)
	rows = Concatenate([]*Node{rows, BroadcastToDims(Scalar(g, x.DType(), fill), 1, b*c)}, 0)
	index := make([]int32, 0, ho*wo*kh*kw)
	for i := range ho {
		for j := range wo {
			for p := range kh {
				for q := range kw {
					y, x := i*stride-padH+p, j*stride-padW+q
					at := h * w // the fill row
					if y >= 0 && y < h && x >= 0 && x < w {
						at = y*w + x
					}
					index = append(index, int32(at))
				}
			}
		}
	}
	// SimpleGo's Gather wants the indices as a [M, 1] column.
	windows = Gather(rows, Const(g, tensors.FromFlatDataAndDimensions(index, len(index), 1)))
	return Reshape(windows, ho*wo, kh*kw, b, c), ho, wo
}

// variable returns the variable name of ctx's scope, which must exist with
// the given dimensions: the network has no initialiser, its weights come
// from a file.
func variable(ctx *context.Context, name string, dims ...int) *context.Variable {
	v := ctx.GetVariable(name)
	if v == nil {
		panic(fmt.Errorf("fid: no weights for %s", stateDictKey(ctx.Scope(), name)))
	}
	if !v.Shape().Equal(shapes.Make(v.Shape().DType, dims...)) {
		panic(fmt.Errorf("fid: %s has shape %v, want %v", stateDictKey(ctx.Scope(), name), v.Shape().Dimensions, dims))
	}
	return v
}

// stateDictKey turns a context scope and variable name into the PyTorch
// state-dict key: "/Mixed_5b/branch1x1/conv", "weight" →
// "Mixed_5b.branch1x1.conv.weight".
func stateDictKey(scope, name string) string {
	scope = strings.TrimPrefix(scope, context.ScopeSeparator)
	if scope == "" {
		return name
	}
	return strings.ReplaceAll(scope, context.ScopeSeparator, ".") + "." + name
}

// Resize resizes NHWC images x to h×w bilinearly, exactly as PyTorch's
// F.interpolate(mode="bilinear", align_corners=False, antialias=False):
// one interpolation matrix per axis, applied as two matrix products.
func Resize(x *Node, h, w int) *Node {
	dims := x.Shape().Dimensions
	g := x.Graph()
	rows := ConstAsDType(g, x.DType(), resizeMatrix(dims[1], h))
	cols := ConstAsDType(g, x.DType(), resizeMatrix(dims[2], w))
	x = Einsum("oh,bhwc->bowc", rows, x)
	return Einsum("pw,bowc->bopc", cols, x)
}

// resizeMatrix is the [out][in] matrix of 1-D linear interpolation from in
// samples to out with half-pixel centres: output i reads the input at
// (i + 0.5)·in/out − 0.5, clamped below at 0 and blended between the two
// neighbouring samples (the last one repeated at the edge).
func resizeMatrix(in, out int) [][]float64 {
	m := make([][]float64, out)
	scale := float64(in) / float64(out)
	for i := range m {
		m[i] = make([]float64, in)
		src := math.Max((float64(i)+0.5)*scale-0.5, 0)
		lo := min(int(src), in-1)
		hi := min(lo+1, in-1)
		frac := src - float64(lo)
		m[i][lo] += 1 - frac
		m[i][hi] += frac
	}
	return m
}
