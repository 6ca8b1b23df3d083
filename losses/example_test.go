package losses_test

import (
	"fmt"
	"math/rand/v2"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/losses"
)

// Energy discrepancy scores an energy of your own against data, with no
// sampling from the model: here the quadratic energies E(x) = ‖x‖²/(2s²)
// against 2,000 points of the standard normal in the plane. The loss is
// lowest for s = 1, the energy of the distribution that made the points.
func ExampleEnergyDiscrepancyWithNoise() {
	b, _, err := backend.Open("auto") // XLA on a GPU or the CPU, else SimpleGo
	if err != nil {
		panic(err)
	}
	defer b.Finalize()

	const n, dim = 2000, 2
	cfg := losses.DefaultToyED // t = 1, M = 4, w = 1
	rng := rand.New(rand.NewPCG(1, 2))
	normals := func(dims ...int) *tensors.Tensor {
		values := make([]float32, 1)
		for _, d := range dims {
			values = make([]float32, len(values)*d)
		}
		for i := range values {
			values[i] = float32(rng.NormFloat64())
		}
		return tensors.FromFlatDataAndDimensions(values, dims...)
	}
	// The data, and the two noises of the perturbation: ξ like the data,
	// ξ′ with M draws per point.
	x, xi, xiPrime := normals(n, dim), normals(n, dim), normals(n, cfg.M, dim)

	for _, s := range []float64{0.5, 1, 2} {
		energy := func(x *Node) *Node { return DivScalar(ReduceSum(Square(x), -1), 2*s*s) }
		loss := MustExecOnce(b, func(x, xi, xiPrime *Node) *Node {
			return losses.EnergyDiscrepancyWithNoise(energy, x, xi, xiPrime, cfg)
		}, x, xi, xiPrime)
		fmt.Printf("s = %.1f: loss %.3f\n", s, loss.Value())
	}
	// Output:
	// s = 0.5: loss 0.461
	// s = 1.0: loss -0.257
	// s = 2.0: loss -0.055
}
