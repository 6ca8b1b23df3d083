package density

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TrainOnPoints trains a model for the given epochs over the flat
// dim-dimensional data points (reshuffled every epoch), and returns the loss
// of every step and the averaged energies at the flat points eval. Training
// stops at the first non-finite loss, returning the history so far and an
// error wrapping ErrNonFinite (the energies are then nil).
func TrainOnPoints(b backends.Backend, cfg Config, seed int64, data []float32, dim, batch, epochs int, eval []float32) (history, energies []float64, err error) {
	n := 0
	if dim > 0 { // checked before dividing by it
		n = len(data) / dim
	}
	if dim <= 0 || n*dim != len(data) || batch < 1 || batch > n {
		return nil, nil, fmt.Errorf("density: %d values, dimension %d, batch %d: want whole points and 1 ≤ batch ≤ points", len(data), dim, batch)
	}
	model, err := New(b, cfg, seed)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	buf := make([]float32, batch*dim)
	for range epochs {
		perm := rng.Perm(n)
		for start := 0; start+batch <= n; start += batch {
			for i, p := range perm[start : start+batch] {
				copy(buf[i*dim:(i+1)*dim], data[p*dim:(p+1)*dim])
			}
			loss, err := model.TrainStep(tensors.FromFlatDataAndDimensions(buf, batch, dim))
			history = append(history, loss)
			if err != nil {
				return history, nil, err
			}
		}
	}
	energies, err = model.Energies(eval, dim)
	return history, energies, err
}
