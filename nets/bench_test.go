package nets

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// BenchmarkConvTranspose2D times the SVHN generator (four transposed
// convolutions, batch 16) and the MNIST one (batch 64, the Fashion-MNIST
// runs' size), float32, with each implementation: the forward pass alone,
// and with the gradients a training step and the posterior Langevin need
// (every variable and z). Besides the wall time it reports the process's
// CPU time per operation (cpu-ns/op, where the system tells it).
//
//	go test ./nets -run '^$' -bench ConvTranspose2D -benchtime 3x
func BenchmarkConvTranspose2D(b *testing.B) {
	for _, bc := range []struct {
		preset string
		batch  int
	}{{"svhn", 16}, {"mnist", 64}} {
		benchmarkGenerator(b, bc.preset, bc.batch)
	}
}

// benchmarkGenerator runs BenchmarkConvTranspose2D's cases for one preset.
func benchmarkGenerator(b *testing.B, preset string, batch int) {
	cfg, err := GeneratorPreset(preset)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	zData := make([]float32, batch*cfg.Nz)
	for i := range zData {
		zData[i] = float32(rng.NormFloat64())
	}
	z := tensors.FromFlatDataAndDimensions(zData, batch, cfg.Nz)
	for _, impl := range []ConvTImpl{ConvTGather, ConvTShift, ConvTNative, ConvTPhase, ConvTAuto} {
		for _, withGrad := range []bool{false, true} {
			name := fmt.Sprintf("%s_b%d/%s/forward", preset, batch, impl)
			if withGrad {
				name += "+backward"
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.New()
				ctx.SetParam(ParamConvTImpl, string(impl))
				exec, err := context.NewExec(testBackend(), ctx, func(ctx *context.Context, z *Node) []*Node {
					img := Generator(ctx, z, cfg)
					if !withGrad {
						return []*Node{img}
					}
					loss := ReduceAllSum(Square(img))
					return append(ctx.BuildTrainableVariablesGradientsGraph(loss), Gradient(loss, z)...)
				})
				if err != nil {
					b.Fatal(err)
				}
				step := func() {
					outs, err := exec.Exec(z)
					if err != nil {
						b.Fatalf("%+v", err)
					}
					for _, o := range outs {
						o.FinalizeAll()
					}
				}
				step() // compiles and initialises the variables
				cpu := processCPUTime()
				for b.Loop() {
					step()
				}
				// CPU time (all threads) is steadier than wall time on a
				// machine shared with other work.
				if cpu >= 0 {
					b.ReportMetric(float64(processCPUTime()-cpu)/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// BenchmarkConvTransposeLayers times each layer of the MNIST generator
// (batch 128, the main job's) and of the SVHN one (batch 16) alone, with
// each implementation, as the posterior Langevin chain uses it: the layer
// and its gradient with respect to its input. It reports the rate in
// GFLOP/s (forward and input-gradient passes, nets.PassFLOPs's count),
// the figures behind ConvTAuto's choice on XLA CPU (docs/xla.md):
//
//	EDLEBM_TEST_BACKEND=cpu go test ./nets -run '^$' -bench ConvTransposeLayers -benchtime 30x -count 3
func BenchmarkConvTransposeLayers(b *testing.B) {
	for _, bc := range []struct {
		preset string
		batch  int
	}{{"mnist", 128}, {"svhn", 16}} {
		cfg, err := GeneratorPreset(bc.preset)
		if err != nil {
			b.Fatal(err)
		}
		size, channels := 1, cfg.Nz
		for i, l := range cfg.Layers {
			flops := PassFLOPs(cfg.LayerFLOPs()[i:i+1], true, false) * float64(bc.batch)
			for _, impl := range []ConvTImpl{ConvTNative, ConvTShift, ConvTPhase, ConvTAuto} {
				name := fmt.Sprintf("%s_b%d/layer%d_%dx%dx%d_to_%d/%s", bc.preset, bc.batch, i+1, size, size, channels, l.Out, impl)
				b.Run(name, func(b *testing.B) {
					benchmarkLayer(b, []int{bc.batch, size, size, channels}, l, impl, flops)
				})
			}
			size, channels = ConvTransposeOutputSize(size, l.Kernel, l.Stride, l.Padding), l.Out
		}
	}
}

// benchmarkLayer times one transposed convolution of x (dims xd) by the
// layer's kernel and its gradient with respect to x. The loss is returned
// too: the gradient of Σ r⊙convT(x) alone does not need the forward pass,
// and XLA would drop it.
func benchmarkLayer(b *testing.B, xd []int, l ConvTLayer, impl ConvTImpl, flops float64) {
	exec, err := NewExec(testBackend(), func(x, kernel, r *Node) []*Node {
		loss := ReduceAllSum(Mul(r, ConvTranspose2D(x, kernel, nil, l.Stride, l.Padding, impl)))
		return []*Node{loss, Gradient(loss, x)[0]}
	})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	random := func(dims ...int) *tensors.Tensor {
		data := make([]float32, shapes.Make(dtypes.Float32, dims...).Size())
		for i := range data {
			data[i] = float32(rng.NormFloat64())
		}
		return tensors.FromFlatDataAndDimensions(data, dims...)
	}
	out := ConvTransposeOutputSize(xd[1], l.Kernel, l.Stride, l.Padding)
	x, kernel, r := random(xd...), random(l.Kernel, l.Kernel, xd[3], l.Out), random(xd[0], out, out, l.Out)
	step := func() {
		outs, err := exec.Exec(x, kernel, r)
		if err != nil {
			b.Fatalf("%+v", err)
		}
		for _, o := range outs {
			o.FinalizeAll()
		}
	}
	step() // compiles
	for b.Loop() {
		step()
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSoftplus times the energy MLP's softplus against GoMLX's
// Softplus (LogAddExp(x, 0), whose Log1p XLA CPU evaluates by a libm call
// per element) and the single functions they use, on the toy step's
// hidden activations eight times over ([5120, 128] float32), forward
// only (docs/xla.md, "The toy step after the softplus fix"):
//
//	EDLEBM_TEST_BACKEND=cpu taskset -c 0 go test ./nets -run '^$' -bench Softplus
func BenchmarkSoftplus(b *testing.B) {
	for _, f := range []struct {
		name string
		fn   func(x *Node) *Node
	}{
		{"nets", softplus},
		{"gomlx", Softplus},
		{"log1p", func(x *Node) *Node { return Log1p(Abs(x)) }},
		{"log", func(x *Node) *Node { return Log(Abs(x)) }},
		{"exp", func(x *Node) *Node { return Exp(Neg(Abs(x))) }},
	} {
		b.Run(f.name, func(b *testing.B) {
			exec, err := NewExec(testBackend(), f.fn)
			if err != nil {
				b.Fatal(err)
			}
			data := make([]float32, 5120*128)
			for i := range data {
				data[i] = float32(i%97)/10 - 4.8
			}
			x := tensors.FromFlatDataAndDimensions(data, 5120, 128)
			run := func() {
				out, err := exec.Exec(x)
				if err != nil {
					b.Fatal(err)
				}
				out[0].FinalizeAll()
			}
			run() // compiles
			for b.Loop() {
				run()
			}
		})
	}
}
