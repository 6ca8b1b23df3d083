package density

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets/toy2d"
)

// BenchmarkTrainStep measures one optimisation step of each method on
// 25gaussians with the paper's sizes (batch 128, the 2→128⁴→1 softplus MLP),
// including drawing the batch and the EMA update, as baselines/toy_bench.py
// does for PyTorch. scripts/bench-toy.sh runs both side by side.
func BenchmarkTrainStep(b *testing.B) {
	set, err := toy2d.New("25gaussians")
	if err != nil {
		b.Fatal(err)
	}
	for _, method := range Methods {
		b.Run(method, func(b *testing.B) {
			model, err := New(testBackend(), DefaultConfig(method), 1)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			step := func() {
				x := tensors.FromFlatDataAndDimensions(set.Sample(rng, 128), 128, 2)
				if _, err := model.TrainStep(x); err != nil {
					b.Fatal(err)
				}
			}
			for range 20 { // compile and warm up
				step()
			}
			b.ResetTimer()
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
