package density_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
)

// Training an energy-based density model with energy discrepancy on points
// of the plane, then reading its energies: after 200 steps on the eight
// Gaussians (centred on a circle of radius 2.83) the energy is lower on a
// mode than at the centre, where there is no data (after one step it is
// not).
func ExampleModel_TrainStep() {
	b, _, err := backend.Open("auto") // XLA on a GPU or the CPU, else SimpleGo
	if err != nil {
		panic(err)
	}
	defer b.Finalize()

	set, err := toy2d.New("8gaussians")
	if err != nil {
		panic(err)
	}
	// The paper's MLP, t = 1, M = 4, w = 1; energies read from an average
	// of the last steps (the paper's 0.999 is for long runs).
	cfg := density.DefaultConfig("ed")
	cfg.EMADecay = 0.9
	model, err := density.New(b, cfg, 1)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const batch, steps = 128, 200
	for range steps {
		x := tensors.FromFlatDataAndDimensions(set.Sample(rng, batch), batch, 2)
		if _, err := model.TrainStep(x); err != nil {
			panic(err)
		}
	}
	energies, err := model.Energies([]float32{2.83, 0, 0, 0}, 2) // a mode, the centre
	if err != nil {
		panic(err)
	}
	fmt.Printf("after %d steps: energy lower on a mode than at the centre: %v\n", model.Step(), energies[0] < energies[1])
	// Output:
	// after 200 steps: energy lower on a mode than at the centre: true
}
