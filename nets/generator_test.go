package nets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// presetSizes are the image sizes of the paper's table of LEBM
// architectures (appendix "Experimental Details of LEBMs"; its CelebA
// 128×128 run in "Image modelling"), with the latent sizes.
var presetSizes = []struct {
	name        string
	nz, h, w, c int
}{
	{"svhn", 100, 32, 32, 3},
	{"cifar10", 128, 32, 32, 3},
	{"celeba64", 100, 64, 64, 3},
	{"celeba128", 100, 128, 128, 3},
	{"mnist", 16, 28, 28, 1},
}

// TestGeneratorPresetShapes builds every preset's graph (batch 1, every
// implementation) and checks the image shape against the table.
func TestGeneratorPresetShapes(t *testing.T) {
	for _, tc := range presetSizes {
		for _, impl := range []ConvTImpl{ConvTGather, ConvTShift, ConvTNative} {
			t.Run(fmt.Sprintf("%s/%s", tc.name, impl), func(t *testing.T) {
				cfg, err := GeneratorPreset(tc.name)
				if err != nil {
					t.Fatal(err)
				}
				if err := cfg.Validate(); err != nil {
					t.Fatal(err)
				}
				if h, w, c := cfg.OutputShape(); h != tc.h || w != tc.w || c != tc.c || cfg.Nz != tc.nz {
					t.Errorf("nz %d OutputShape() = %d×%d×%d, want nz %d %d×%d×%d", cfg.Nz, h, w, c, tc.nz, tc.h, tc.w, tc.c)
				}
				ctx := context.New()
				ctx.SetParam(ParamConvTImpl, string(impl))
				g := NewGraph(testBackend(), "shape")
				defer g.Finalize()
				img := Generator(ctx, Parameter(g, "z", shapes.Make(dtypes.Float32, 1, tc.nz)), cfg)
				if want := shapes.Make(dtypes.Float32, 1, tc.h, tc.w, tc.c); !img.Shape().Equal(want) {
					t.Errorf("Generator output %s, want %s", img.Shape(), want)
				}
			})
		}
	}
}

// naiveLeaky is LeakyReLU in place.
func naiveLeaky(a array, slope float64) array {
	for i, v := range a.Data {
		if v < 0 {
			a.Data[i] = slope * v
		}
	}
	return a
}

// naiveGenerator runs cfg's layers in plain loops with the variables that
// Generator created in ctx.
func naiveGenerator(t *testing.T, ctx *context.Context, cfg GeneratorConfig, z array) array {
	x := array{Data: z.Data, Dims: []int{z.Dims[0], 1, 1, cfg.Nz}}
	for i, l := range cfg.Layers {
		if i > 0 {
			x = naiveLeaky(x, 0.2)
		}
		scope := ctx.In(fmt.Sprintf("layer_%d", i)).Scope()
		kernel := array{Data: variableData(t, ctx, scope, "weights"), Dims: []int{l.Kernel, l.Kernel, x.Dims[3], l.Out}}
		x = naiveConvT(x, kernel, variableData(t, ctx, scope, "biases"), l.Stride, l.Padding)
	}
	for i := range x.Data {
		x.Data[i] = math.Tanh(x.Data[i])
	}
	return x
}

// TestGeneratorForward checks a small generator against naive loops over
// the variables it created, that the images lie in (−1, 1), and the
// gradient the posterior Langevin needs, ∇_z ‖x − G(z)‖², against central
// differences of the naive generator.
func TestGeneratorForward(t *testing.T) {
	cfg := GeneratorConfig{Nz: 3, Layers: []ConvTLayer{{4, 4, 1, 0}, {3, 3, 2, 1}, {2, 4, 2, 1}}}
	for _, impl := range []ConvTImpl{ConvTGather, ConvTShift, ConvTNative} {
		t.Run(string(impl), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(6, 6))
			z := testutil.RandomArray(rng, 1, 2, cfg.Nz)
			h, w, c := cfg.OutputShape()
			target := testutil.RandomArray(rng, 0.5, 2, h, w, c)
			ctx := context.New()
			ctx.SetParam(ParamConvTImpl, string(impl))
			got := runCtx(t, ctx, func(ctx *context.Context, in []*Node) []*Node {
				img := Generator(ctx, in[0], cfg)
				sqErr := ReduceAllSum(Square(Sub(in[1], img)))
				return []*Node{img, Gradient(sqErr, in[0])[0]}
			}, z, target)

			want := naiveGenerator(t, ctx, cfg, z)
			if want.Dims[1] != h || want.Dims[2] != w || want.Dims[3] != c {
				t.Errorf("OutputShape() = %d×%d×%d, naive loops give %v", h, w, c, want.Dims)
			}
			testutil.AssertAllClose(t, "image", got[0], want.Data, 1e-12)
			for i, v := range got[0] {
				if !(v > -1 && v < 1) {
					t.Fatalf("pixel %d = %v, outside (−1, 1)", i, v)
				}
			}
			sqErr := func() float64 {
				var s float64
				for i, v := range naiveGenerator(t, ctx, cfg, z).Data {
					s += (target.Data[i] - v) * (target.Data[i] - v)
				}
				return s
			}
			testutil.AssertAllClose(t, "∇_z‖x − G(z)‖²", got[1], centralDiff(sqErr, z.Data, 1e-5), 1e-7)
		})
	}
}

// TestGeneratorInit checks the initial variables of the SVHN generator:
// Xavier-normal kernels with std √(2/((Cin+Cout)·k²)) and biases uniform in
// ±1/√(Cout·k²) (within the bound, mean 0, std bound/√3), as PyTorch would
// initialise them.
func TestGeneratorInit(t *testing.T) {
	cfg, err := GeneratorPreset("svhn")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(7); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	runCtx(t, ctx, func(ctx *context.Context, in []*Node) []*Node {
		return []*Node{Generator(ctx, in[0], cfg)}
	}, testutil.RandomArray(rng, 1, 1, cfg.Nz))

	cin := cfg.Nz
	for i, l := range cfg.Layers {
		scope := ctx.In(fmt.Sprintf("layer_%d", i)).Scope()
		t.Run(scope, func(t *testing.T) {
			w := variableData(t, ctx, scope, "weights")
			var sumSq float64
			for _, v := range w {
				sumSq += v * v
			}
			std, want := math.Sqrt(sumSq/float64(len(w))), math.Sqrt(2/float64((cin+l.Out)*l.Kernel*l.Kernel))
			// The relative standard error of a sample std is 1/√(2n); allow 5 of them.
			if tol := 5 / math.Sqrt(2*float64(len(w))); math.Abs(std/want-1) > tol {
				t.Errorf("weights std %.5g, want %.5g (relative tolerance %.2g)", std, want, tol)
			}
			bound := 1 / math.Sqrt(float64(l.Out*l.Kernel*l.Kernel))
			biases := variableData(t, ctx, scope, "biases")
			var sum, sq float64
			for j, v := range biases {
				if math.Abs(v) > bound {
					t.Fatalf("bias %d = %v outside ±%v", j, v, bound)
				}
				sum, sq = sum+v, sq+v*v
			}
			// Uniform in ±bound: mean 0 and std bound/√3, each with standard
			// error at most (bound/√3)/√n; allow 5 of them.
			n, std := float64(len(biases)), bound/math.Sqrt(3)
			if mean, tol := sum/n, 5*std/math.Sqrt(n); math.Abs(mean) > tol {
				t.Errorf("biases mean %.5g, want 0 ± %.2g", mean, tol)
			}
			if got, tol := math.Sqrt(sq/n), 5*std/math.Sqrt(n); math.Abs(got-std) > tol {
				t.Errorf("biases std %.5g, want %.5g ± %.2g", got, std, tol)
			}
		})
		cin = l.Out
	}
}

func TestGeneratorConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     GeneratorConfig
		wantErr string // "" for a valid config
	}{
		{"one layer", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{1, 4, 1, 0}}}, ""},
		{"nz 1", GeneratorConfig{Nz: 1, Layers: []ConvTLayer{{1, 4, 1, 0}}}, ""},
		{"1×1 output", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{1, 3, 1, 1}}}, ""},
		{"zero nz", GeneratorConfig{Nz: 0, Layers: []ConvTLayer{{1, 4, 1, 0}}}, "nz = 0"},
		{"no layers", GeneratorConfig{Nz: 2}, "no layers"},
		{"zero channels", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{8, 4, 1, 0}, {0, 4, 2, 1}}}, "layer 1"},
		{"zero kernel", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{8, 0, 1, 0}}}, "layer 0"},
		{"zero stride", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{8, 4, 0, 0}}}, "layer 0"},
		{"negative padding", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{8, 4, 1, -1}}}, "layer 0"},
		{"empty output", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{8, 4, 1, 0}, {3, 3, 1, 3}}}, "turns a 4×4 input into 0×0"},
		{"empty first layer", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{8, 1, 1, 1}}}, "turns a 1×1 input into -1×-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertValidate(t, tc.cfg.Validate(), tc.wantErr)
		})
	}
}

// TestGeneratorOutputShape checks OutputShape against sizes worked out by
// hand with Ho = (H−1)·stride − 2·padding + k, and that a config without
// layers (which Validate rejects) gives the 1×1 latent input with no
// channels instead of panicking.
func TestGeneratorOutputShape(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      GeneratorConfig
		h, w, ch int
	}{
		{"no layers", GeneratorConfig{Nz: 2}, 1, 1, 0},
		// 1 → 4 → (4−1)·2 − 2 + 3 = 7.
		{"two layers", GeneratorConfig{Nz: 2, Layers: []ConvTLayer{{5, 4, 1, 0}, {3, 3, 2, 1}}}, 7, 7, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if h, w, ch := tc.cfg.OutputShape(); h != tc.h || w != tc.w || ch != tc.ch {
				t.Errorf("OutputShape() = %d×%d×%d, want %d×%d×%d", h, w, ch, tc.h, tc.w, tc.ch)
			}
		})
	}
}

// TestGeneratorPanics checks that Generator and GeneratorIn reject an
// invalid config, a z that is not [batch, Nz] and an integer compute type
// with a panic naming the culprit (graph building only, nothing compiled).
func TestGeneratorPanics(t *testing.T) {
	cfg := GeneratorConfig{Nz: 3, Layers: []ConvTLayer{{2, 4, 1, 0}}}
	for _, tc := range []struct {
		name    string
		cfg     GeneratorConfig
		z       shapes.Shape
		compute dtypes.DType
		want    string
	}{
		{"invalid config", GeneratorConfig{Nz: 0, Layers: cfg.Layers}, shapes.Make(dtypes.Float32, 2, 3), dtypes.Float32, "nz = 0"},
		{"z width", cfg, shapes.Make(dtypes.Float32, 2, 5), dtypes.Float32, "(Float32)[2 5]; want [batch, 3]"},
		{"z rank", cfg, shapes.Make(dtypes.Float32, 2, 3, 1), dtypes.Float32, "(Float32)[2 3 1]; want [batch, 3]"},
		{"integer compute", cfg, shapes.Make(dtypes.Float32, 2, 3), dtypes.Int32, "compute dtype Int32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGraph(testBackend(), tc.name)
			defer g.Finalize()
			z := Parameter(g, "z", tc.z)
			defer func() {
				r := recover()
				if err, ok := r.(error); !ok || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("panic %v, want an error containing %q", r, tc.want)
				}
			}()
			GeneratorIn(context.New(), z, tc.cfg, tc.compute)
		})
	}
}

func TestGeneratorPresetUnknown(t *testing.T) {
	_, err := GeneratorPreset("imagenet")
	if err == nil {
		t.Fatal(`GeneratorPreset("imagenet") returned no error`)
	}
	for _, want := range append([]string{`"imagenet"`}, GeneratorPresetNames()...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if got := len(GeneratorPresetNames()); got != len(presetSizes) {
		t.Errorf("%d preset names, want %d", got, len(presetSizes))
	}
}

// TestGeneratorMixedPrecision runs a float32 generator with its layers in
// bfloat16 and checks images and ∇_z‖x − G(z)‖² against the naive float64
// loops over the same (float32) variables: within bfloat16's few digits,
// yet not equal to the float32 result, so the layers did run in bfloat16.
// The tolerances are about twice the worst seen over 40 random networks of
// this shape (images 0.016 off, gradients 12 % in norm: bfloat16 keeps 8
// bits, and the gradient's terms cancel).
func TestGeneratorMixedPrecision(t *testing.T) {
	cfg := GeneratorConfig{Nz: 3, Layers: []ConvTLayer{{4, 4, 1, 0}, {3, 3, 2, 1}, {2, 4, 2, 1}}}
	for _, impl := range []ConvTImpl{ConvTGather, ConvTShift, ConvTNative} {
		t.Run(string(impl), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(6, 7))
			z := testutil.RandomArray(rng, 1, 2, cfg.Nz)
			h, w, c := cfg.OutputShape()
			target := testutil.RandomArray(rng, 0.5, 2, h, w, c)
			ctx := context.New()
			if err := ctx.SetRNGStateFromSeed(11); err != nil {
				t.Fatal(err)
			}
			ctx.SetParam(ParamConvTImpl, string(impl))
			got := runCtx(t, ctx, func(ctx *context.Context, in []*Node) []*Node {
				z32, target32 := ConvertDType(in[0], dtypes.Float32), ConvertDType(in[1], dtypes.Float32)
				var outs []*Node
				for i, compute := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
					if i > 0 {
						ctx = ctx.Reuse()
					}
					img := GeneratorIn(ctx, z32, cfg, compute)
					if img.DType() != dtypes.Float32 {
						t.Fatalf("%s layers: images of %s, want float32", compute, img.DType())
					}
					grad := Gradient(ReduceAllSum(Square(Sub(target32, img))), z32)[0]
					outs = append(outs, ConvertDType(img, dtypes.Float64), ConvertDType(grad, dtypes.Float64))
				}
				return outs
			}, z, target)
			for v := range ctx.IterVariables() {
				if strings.Contains(v.Scope(), "layer_") && v.Shape().DType != dtypes.Float32 {
					t.Errorf("variable %s is %s, want float32", v.ScopeAndName(), v.Shape().DType)
				}
			}

			want := naiveGenerator(t, ctx, cfg, z)
			sqErr := func() float64 {
				var s float64
				for i, v := range naiveGenerator(t, ctx, cfg, z).Data {
					s += (target.Data[i] - v) * (target.Data[i] - v)
				}
				return s
			}
			wantGrad := centralDiff(sqErr, z.Data, 1e-5)
			// TF32 products (emulated): images up to 1.0e-4 off, the first
			// gradient element 4.7e-4.
			testutil.AssertAllClose(t, "float32 image", got[0], want.Data, testutil.ProductTol(1e-5, 5e-4))
			testutil.AssertAllClose(t, "float32 gradient", got[1], wantGrad, testutil.ProductTol(1e-4, 2e-3))
			testutil.AssertAllClose(t, "bfloat16 image", got[2], want.Data, 3e-2)
			if e := relativeL2(got[3], wantGrad); e > 0.25 {
				t.Errorf("bfloat16 gradient %v: relative L2 error %.3g against %v, want ≤ 0.25", got[3], e, wantGrad)
			}
			differ := 0.0
			for i := range got[0] {
				differ = math.Max(differ, math.Abs(got[2][i]-got[0][i]))
			}
			if differ < 1e-5 {
				t.Errorf("bfloat16 images within %.2g of float32's: the layers did not run in bfloat16", differ)
			}
		})
	}
}

// relativeL2 is ‖got − want‖ / ‖want‖.
func relativeL2(got, want []float64) float64 {
	var d, n float64
	for i := range want {
		d += (got[i] - want[i]) * (got[i] - want[i])
		n += want[i] * want[i]
	}
	return math.Sqrt(d / n)
}
