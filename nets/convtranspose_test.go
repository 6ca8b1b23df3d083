package nets

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// naiveConvT is PyTorch's ConvTranspose2d written as a scatter loop: every
// input pixel adds kernel-weighted copies of itself to the outputs it
// reaches. x is [B,H,W,Cin], kernel [kH,kW,Cin,Cout], bias [Cout] or nil.
func naiveConvT(x, kernel array, bias []float64, stride, padding int) array {
	b, h, w, cin := x.Dims[0], x.Dims[1], x.Dims[2], x.Dims[3]
	kh, kw, cout := kernel.Dims[0], kernel.Dims[1], kernel.Dims[3]
	ho, wo := (h-1)*stride-2*padding+kh, (w-1)*stride-2*padding+kw
	out := array{Data: make([]float64, b*ho*wo*cout), Dims: []int{b, ho, wo, cout}}
	for n := range b {
		for i := range h {
			for j := range w {
				for p := range kh {
					for q := range kw {
						y, xx := i*stride-padding+p, j*stride-padding+q
						if y < 0 || y >= ho || xx < 0 || xx >= wo {
							continue
						}
						for c := range cin {
							v := x.Data[((n*h+i)*w+j)*cin+c]
							for o := range cout {
								out.Data[((n*ho+y)*wo+xx)*cout+o] += v * kernel.Data[((p*kw+q)*cin+c)*cout+o]
							}
						}
					}
				}
			}
		}
	}
	if bias != nil {
		for i := range out.Data {
			out.Data[i] += bias[i%cout]
		}
	}
	return out
}

// convTCases are the (kernel, stride, padding) settings the generators use,
// on small inputs; the last has a non-square kernel.
var convTCases = []struct {
	k, kw, stride, padding int
	h, w                   int
}{
	{k: 4, stride: 1, padding: 0, h: 1, w: 1},
	{k: 4, stride: 1, padding: 0, h: 2, w: 3},
	{k: 4, stride: 2, padding: 1, h: 3, w: 4},
	{k: 3, stride: 2, padding: 1, h: 4, w: 3},
	{k: 8, stride: 1, padding: 0, h: 1, w: 2},
	{k: 3, stride: 1, padding: 1, h: 5, w: 4},
	{k: 3, kw: 4, stride: 2, padding: 1, h: 3, w: 2},
}

var convTImplsUnderTest = []ConvTImpl{ConvTNative, ConvTGather, ConvTShift, ConvTPhase, ConvTAuto}

// convTSecondOrderImpls are the implementations that can be differentiated
// twice on every backend.
var convTSecondOrderImpls = []ConvTImpl{ConvTGather, ConvTShift}

// generatorLayerCases are the distinct (kernel, stride, padding, input
// size) settings of the mnist, svhn, cifar10 and celeba64 generators'
// layers, at their real spatial sizes (the channels are the tests' own).
func generatorLayerCases(t *testing.T) []struct{ k, stride, padding, size int } {
	t.Helper()
	type layerCase = struct{ k, stride, padding, size int }
	var cases []layerCase
	for _, name := range []string{"mnist", "svhn", "cifar10", "celeba64"} {
		cfg, err := GeneratorPreset(name)
		if err != nil {
			t.Fatal(err)
		}
		size := 1
		for _, l := range cfg.Layers {
			if c := (layerCase{l.Kernel, l.Stride, l.Padding, size}); !slices.Contains(cases, c) {
				cases = append(cases, c)
			}
			size = ConvTransposeOutputSize(size, l.Kernel, l.Stride, l.Padding)
		}
	}
	return cases
}

// TestConvTranspose2DGeneratorLayers checks every implementation on every
// generator layer's shape (batch 1, two channels in and out) with
// checkConvTImpls.
func TestConvTranspose2DGeneratorLayers(t *testing.T) {
	for _, tc := range generatorLayerCases(t) {
		t.Run(fmt.Sprintf("k%d_s%d_p%d_in%d", tc.k, tc.stride, tc.padding, tc.size), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(tc.k*1000+tc.size)))
			checkConvTImpls(t, rng, tc.size, tc.size, tc.k, tc.k, tc.stride, tc.padding)
		})
	}
}

// TestConvTranspose2DEdgeSettings runs checkConvTImpls on settings no
// generator uses: a stride of 3, where the phases of the shift
// implementation take taps other than those of strides 1 and 2 (2·padding
// and 2·tap are no multiples of it), a one-row input padded down to a
// one-row output, where some taps reach no output row, a stride wider than
// the kernel, which leaves phases no tap reaches, and a padding wider than
// the stride, where the phase form crops its input.
func TestConvTranspose2DEdgeSettings(t *testing.T) {
	for _, tc := range []struct{ h, w, k, kw, stride, padding int }{
		{h: 3, w: 2, k: 4, kw: 5, stride: 3, padding: 1},
		{h: 1, w: 3, k: 3, kw: 3, stride: 1, padding: 1},
		{h: 2, w: 3, k: 2, kw: 2, stride: 3, padding: 0},
		{h: 5, w: 4, k: 6, kw: 7, stride: 2, padding: 3},
		{h: 5, w: 6, k: 2, kw: 3, stride: 2, padding: 2},
	} {
		t.Run(fmt.Sprintf("k%dx%d_s%d_p%d_in%dx%d", tc.k, tc.kw, tc.stride, tc.padding, tc.h, tc.w), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, uint64(tc.k*100+tc.h)))
			checkConvTImpls(t, rng, tc.h, tc.w, tc.k, tc.kw, tc.stride, tc.padding)
		})
	}
}

// checkConvTImpls checks the native, gather, shift and phase implementations on
// random x [1, h, w, 2], kernel [k, kw, 2, 2] and bias: the output against
// naiveConvT, and the gradients of L = Σ r ⊙ (convT(x, K) + b) against
// central differences of it, exact here since L is linear. The
// implementations share one graph, which XLA compiles once.
func checkConvTImpls(t *testing.T, rng *rand.Rand, h, w, k, kw, stride, padding int) {
	t.Helper()
	impls := []ConvTImpl{ConvTNative, ConvTGather, ConvTShift, ConvTPhase} // ConvTAuto is one of them
	x := testutil.RandomArray(rng, 1, 1, h, w, 2)
	kernel := testutil.RandomArray(rng, 1, k, kw, 2, 2)
	bias := testutil.RandomArray(rng, 1, 2)
	want := naiveConvT(x, kernel, bias.Data, stride, padding)
	r := testutil.RandomArray(rng, 1, want.Dims...)
	loss := func() float64 { return dot(r.Data, naiveConvT(x, kernel, bias.Data, stride, padding).Data) }
	wantGrads := [][]float64{centralDiff(loss, x.Data, 1), centralDiff(loss, kernel.Data, 1), centralDiff(loss, bias.Data, 1)}

	got := run(t, func(in []*Node) []*Node {
		var outs []*Node
		for _, impl := range impls {
			out := ConvTranspose2D(in[0], in[1], in[2], stride, padding, impl)
			outs = append(append(outs, out), Gradient(ReduceAllSum(Mul(in[3], out)), in[0], in[1], in[2])...)
		}
		return outs
	}, x, kernel, bias, r)
	for i, impl := range impls {
		testutil.AssertAllClose(t, string(impl)+" output", got[4*i], want.Data, 1e-12)
		for j, name := range []string{"dL/dx", "dL/dkernel", "dL/dbias"} {
			testutil.AssertAllClose(t, string(impl)+" "+name, got[4*i+1+j], wantGrads[j], 1e-9)
		}
	}
}

// TestConvTranspose2DGradients checks the gradients of L = Σ r ⊙ convT(x, K) + b
// (r random, so every output pixel has its own adjoint) against central
// differences of the naive loop.
func TestConvTranspose2DGradients(t *testing.T) {
	for _, tc := range convTCases {
		for _, impl := range convTImplsUnderTest {
			kw := max(tc.kw, tc.k)
			name := fmt.Sprintf("k%dx%d_s%d_p%d_in%dx%d/%s", tc.k, kw, tc.stride, tc.padding, tc.h, tc.w, impl)
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(2, uint64(tc.k*100+tc.h)))
				x := testutil.RandomArray(rng, 1, 2, tc.h, tc.w, 3)
				kernel := testutil.RandomArray(rng, 1, tc.k, kw, 3, 2)
				bias := testutil.RandomArray(rng, 1, 2)
				dims := naiveConvT(x, kernel, nil, tc.stride, tc.padding).Dims
				r := testutil.RandomArray(rng, 1, dims...)

				got := run(t, func(in []*Node) []*Node {
					loss := ReduceAllSum(Mul(in[3], ConvTranspose2D(in[0], in[1], in[2], tc.stride, tc.padding, impl)))
					return Gradient(loss, in[0], in[1], in[2])
				}, x, kernel, bias, r)

				loss := func() float64 { return dot(r.Data, naiveConvT(x, kernel, bias.Data, tc.stride, tc.padding).Data) }
				for i, wrt := range []array{x, kernel, bias} {
					want := centralDiff(loss, wrt.Data, 1e-3)
					testutil.AssertAllClose(t, []string{"dL/dx", "dL/dkernel", "dL/dbias"}[i], got[i], want, 1e-8)
				}
			})
		}
	}
}

// TestConvTranspose2DSecondOrder checks a gradient of a gradient, which
// the gather and shift implementations support: with L = Σ r ⊙ convT(x, K)
// and g = ∂L/∂x, the gradient of Σ s ⊙ g² with respect to K, against
// nested central differences of the naive loop.
func TestConvTranspose2DSecondOrder(t *testing.T) {
	for _, tc := range convTCases {
		kw := max(tc.kw, tc.k)
		t.Run(fmt.Sprintf("k%dx%d_s%d_p%d_in%dx%d", tc.k, kw, tc.stride, tc.padding, tc.h, tc.w), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, uint64(tc.k*100+tc.h)))
			x := testutil.RandomArray(rng, 1, 1, tc.h, tc.w, 2)
			kernel := testutil.RandomArray(rng, 1, tc.k, kw, 2, 2)
			r := testutil.RandomArray(rng, 1, naiveConvT(x, kernel, nil, tc.stride, tc.padding).Dims...)
			s := testutil.RandomArray(rng, 1, x.Dims...)
			outer := func() float64 {
				// L is linear in x, so its central differences are exact.
				gx := centralDiff(func() float64 { return dot(r.Data, naiveConvT(x, kernel, nil, tc.stride, tc.padding).Data) }, x.Data, 1)
				var sum float64
				for i, v := range gx {
					sum += s.Data[i] * v * v
				}
				return sum
			}
			want := centralDiff(outer, kernel.Data, 1e-3)

			for _, impl := range convTSecondOrderImpls {
				t.Run(string(impl), func(t *testing.T) {
					got := run(t, func(in []*Node) []*Node {
						loss := ReduceAllSum(Mul(in[2], ConvTranspose2D(in[0], in[1], nil, tc.stride, tc.padding, impl)))
						gx := Gradient(loss, in[0])[0]
						return Gradient(ReduceAllSum(Mul(in[3], Square(gx))), in[1])
					}, x, kernel, r, s)[0]
					testutil.AssertAllClose(t, "∂(Σ s⊙g²)/∂K", got, want, 1e-7)
				})
			}
		})
	}
}

// describedBackend is a backend that answers Name and Description as told
// (and nothing else): what autoConvTImpl looks at.
type describedBackend struct {
	backends.Backend
	name, description string
}

func (b describedBackend) Name() string        { return b.name }
func (b describedBackend) Description() string { return b.description }

// TestAutoConvTImpl checks ConvTAuto's choice per backend and layer shape:
// on XLA CPU the form measured fastest for that kind of layer
// (docs/xla.md), on a CUDA plugin cuDNN's (native), elsewhere shift.
func TestAutoConvTImpl(t *testing.T) {
	cpu := describedBackend{name: xlaBackendName, description: "xla:cpu - PJRT \"cpu\" plugin [2 device(s)]"}
	cuda := describedBackend{name: xlaBackendName, description: "xla:/usr/local/lib/go-xla/pjrt_c_api_cuda_plugin.so - PJRT [1 device(s)]"}
	simpleGo := describedBackend{name: "go", description: "Simple Go Portable Backend"}
	for _, tc := range []struct {
		name    string
		backend describedBackend
		x, k    []int
		stride  int
		want    ConvTImpl
	}{
		{"cpu projection from one pixel", cpu, []int{128, 1, 1, 16}, []int{4, 4, 16, 128}, 1, ConvTShift},
		{"cpu image layer, one channel", cpu, []int{128, 14, 14, 32}, []int{4, 4, 32, 1}, 2, ConvTShift},
		{"cpu image layer, RGB", cpu, []int{16, 16, 16, 128}, []int{4, 4, 128, 3}, 2, ConvTShift},
		{"cpu kernel 4, stride 2", cpu, []int{128, 7, 7, 64}, []int{4, 4, 64, 32}, 2, ConvTPhase},
		{"cpu kernel 3, stride 2", cpu, []int{128, 4, 4, 128}, []int{3, 3, 128, 64}, 2, ConvTPhase},
		{"cpu kernel 4 by 3, stride 2", cpu, []int{8, 4, 4, 16}, []int{4, 3, 16, 8}, 2, ConvTPhase},
		{"cpu stride wider than the kernel", cpu, []int{8, 4, 4, 16}, []int{2, 3, 16, 8}, 3, ConvTNative},
		{"cpu stride 1", cpu, []int{8, 4, 4, 16}, []int{3, 3, 16, 8}, 1, ConvTNative},
		{"cuda kernel 4, stride 2", cuda, []int{128, 7, 7, 64}, []int{4, 4, 64, 32}, 2, ConvTNative},
		{"cuda projection", cuda, []int{128, 1, 1, 16}, []int{4, 4, 16, 128}, 1, ConvTNative},
		{"simplego kernel 4, stride 2", simpleGo, []int{128, 7, 7, 64}, []int{4, 4, 64, 32}, 2, ConvTShift},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := autoConvTImpl(tc.backend, tc.x, tc.k, tc.stride); got != tc.want {
				t.Errorf("autoConvTImpl(%s, x %v, kernel %v, stride %d) = %s, want %s", tc.backend.name, tc.x, tc.k, tc.stride, got, tc.want)
			}
		})
	}
}

// TestConvTImplGraphs checks what each implementation builds on the tests'
// backend: the native form flips its kernel with Reverse on XLA (only that
// form is compiled to cuDNN's transposed convolution on GPUs: flipSpatial),
// the phase form convolves without a matrix product or Reverse, the shift
// form multiplies and adds with no convolution and no gather.
func TestConvTImplGraphs(t *testing.T) {
	onXLA := testBackend().Name() == xlaBackendName
	for _, tc := range []struct {
		impl ConvTImpl
		want map[NodeType]bool
	}{
		{ConvTNative, map[NodeType]bool{NodeTypeConvGeneral: true, NodeTypeReverse: onXLA, NodeTypeDotGeneral: false}},
		{ConvTPhase, map[NodeType]bool{NodeTypeConvGeneral: true, NodeTypeReverse: false, NodeTypeDotGeneral: false}},
		{ConvTShift, map[NodeType]bool{NodeTypeGather: false, NodeTypeConvGeneral: false, NodeTypeDotGeneral: true, NodeTypeSlice: true, NodeTypeConcatenate: true}},
	} {
		t.Run(string(tc.impl), func(t *testing.T) {
			g := NewGraph(testBackend(), string(tc.impl))
			defer g.Finalize()
			x := Parameter(g, "x", shapes.Make(dtypes.Float32, 2, 4, 4, 3))
			kernel := Parameter(g, "kernel", shapes.Make(dtypes.Float32, 4, 4, 3, 8))
			before := len(g.Nodes())
			ConvTranspose2D(x, kernel, nil, 2, 1, tc.impl)
			count := map[NodeType]int{}
			for _, n := range g.Nodes()[before:] {
				count[n.Type()]++
			}
			for nodeType, present := range tc.want {
				if (count[nodeType] > 0) != present {
					t.Errorf("%s on %s built %d %s nodes, want them present: %v", tc.impl, testBackend().Name(), count[nodeType], nodeType, present)
				}
			}
		})
	}
}

// TestConvTranspose2DPanics checks that inconsistent arguments panic with a
// message naming the culprit.
func TestConvTranspose2DPanics(t *testing.T) {
	f32 := func(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }
	for _, tc := range []struct {
		name            string
		x, kernel, bias shapes.Shape
		stride, padding int
		impl            ConvTImpl
		want            string
	}{
		{"rank", f32(2, 3, 3), f32(4, 4, 3, 2), shapes.Shape{}, 1, 0, ConvTAuto, "rank 4"},
		{"channels", f32(1, 2, 2, 5), f32(4, 4, 3, 2), shapes.Shape{}, 1, 0, ConvTAuto, "x has 5 channels"},
		{"stride", f32(1, 2, 2, 3), f32(4, 4, 3, 2), shapes.Shape{}, 0, 0, ConvTAuto, "stride 0"},
		{"empty output", f32(1, 1, 1, 3), f32(2, 2, 3, 2), shapes.Shape{}, 1, 1, ConvTAuto, "output size 0"},
		{"empty width", f32(3, 3, 1, 3), f32(2, 2, 3, 2), shapes.Shape{}, 1, 1, ConvTAuto, "output size 0 on spatial axis 1"},
		{"bias", f32(1, 2, 2, 3), f32(4, 4, 3, 2), f32(3), 2, 1, ConvTAuto, "bias (Float32)[3] must be [2]"},
		{"impl", f32(1, 2, 2, 3), f32(4, 4, 3, 2), shapes.Shape{}, 2, 1, "fft", `"fft"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGraph(testBackend(), tc.name)
			defer g.Finalize()
			var bias *Node
			if tc.bias.Ok() {
				bias = Parameter(g, "bias", tc.bias)
			}
			x, kernel := Parameter(g, "x", tc.x), Parameter(g, "kernel", tc.kernel)
			defer func() {
				r := recover()
				if err, ok := r.(error); !ok || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("panic %v, want an error containing %q", r, tc.want)
				}
			}()
			ConvTranspose2D(x, kernel, bias, tc.stride, tc.padding, tc.impl)
		})
	}
}
