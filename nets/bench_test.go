package nets

import (
	"fmt"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
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
	for _, impl := range []ConvTImpl{ConvTGather, ConvTShift, ConvTNative} {
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
