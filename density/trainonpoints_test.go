package density

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/nets"
)

// TrainOnPoints on 2-D points equals training step by step on batches
// assembled here, point by point, from the same permutations: every step's
// loss and the final energies agree exactly, so each batch holds the
// intended whole points and each epoch takes ⌊n/batch⌋ batches.
func TestTrainOnPointsAssemblesWholePointBatches(t *testing.T) {
	const n, dim, batch, epochs, seed = 10, 2, 5, 2, 7
	rng := rand.New(rand.NewPCG(1, 1))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	grid := []float32{0, 0, 1, -1, 2, 0.5}
	cfg := DefaultConfig("ed")
	cfg.MLP = nets.MLPConfig{Hidden: []int{8}, Activation: "swish"}
	history, energies, err := TrainOnPoints(testBackend(), cfg, seed, data, dim, batch, epochs, grid)
	if err != nil {
		t.Fatal(err)
	}

	model, err := New(testBackend(), cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	perms := rand.New(rand.NewPCG(seed, 3))
	var want []float64
	for range epochs {
		perm := perms.Perm(n)
		for b := 0; b < n/batch; b++ {
			var points []float32
			for _, p := range perm[b*batch : (b+1)*batch] {
				points = append(points, data[p*dim], data[p*dim+1])
			}
			loss, err := model.TrainStep(tensors.FromFlatDataAndDimensions(points, batch, dim))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, loss)
		}
	}
	if len(history) != len(want) {
		t.Fatalf("%d steps, want %d (%d epochs of %d batches)", len(history), len(want), epochs, n/batch)
	}
	for i := range want {
		if history[i] != want[i] {
			t.Errorf("step %d: loss %v, step by step %v", i+1, history[i], want[i])
		}
	}
	wantEnergies, err := model.Energies(grid, dim)
	if err != nil {
		t.Fatal(err)
	}
	if len(energies) != 3 {
		t.Fatalf("%d energies for 3 grid points", len(energies))
	}
	for i := range energies {
		if energies[i] != wantEnergies[i] {
			t.Errorf("energy at grid point %d: %v, step by step %v", i, energies[i], wantEnergies[i])
		}
	}
}

// Bad shapes and batch sizes are errors naming the values.
func TestTrainOnPointsAndEnergiesRejectBadShapes(t *testing.T) {
	cfg := DefaultConfig("ed")
	cfg.MLP = nets.MLPConfig{Hidden: []int{4}, Activation: "swish"}
	data := make([]float32, 12)
	for _, tc := range []struct {
		name       string
		data       []float32
		dim, batch int
		want       string
	}{
		{"dimension 0", data, 0, 2, "dimension 0"},
		{"not whole points", data[:11], 2, 2, "11 values, dimension 2"},
		{"batch 0", data, 2, 0, "batch 0"},
		{"batch over the points", data, 2, 7, "batch 7"},
	} {
		if _, _, err := TrainOnPoints(testBackend(), cfg, 1, tc.data, tc.dim, tc.batch, 1, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// The whole data as one batch is allowed.
	if _, _, err := TrainOnPoints(testBackend(), cfg, 1, data, 2, 6, 1, data); err != nil {
		t.Errorf("batch = points: %v", err)
	}

	model, err := New(testBackend(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Energies(data, 2); err == nil || !strings.Contains(err.Error(), "not been trained") {
		t.Errorf("energies of an untrained model: error %v", err)
	}
	if _, err := model.TrainStep(tensors.FromFlatDataAndDimensions(data, 6, 2)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		points []float32
		dim    int
	}{{data, 0}, {data, -2}, {data[:5], 2}} {
		if _, err := model.Energies(tc.points, tc.dim); err == nil || !strings.Contains(err.Error(), "not a whole number") {
			t.Errorf("%d values of dimension %d: error %v", len(tc.points), tc.dim, err)
		}
	}
}

// TestTrainOnPointsStopsAtTheFirstNonFiniteLoss trains with an absurd
// learning rate, so that the first Adam update throws the parameters to
// ±1e30 and the energies overflow float32, in batches of 1 (the smallest
// allowed): as documented, training stops at the first NaN or infinite loss
// with an error wrapping ErrNonFinite that names that step, every earlier
// loss finite, and no energies.
func TestTrainOnPointsStopsAtTheFirstNonFiniteLoss(t *testing.T) {
	const n = 8
	cfg := DefaultConfig("ed")
	cfg.MLP = nets.MLPConfig{Hidden: []int{8}, Activation: "swish"}
	cfg.LearningRate = 1e30
	data := []float32{-2, -1.5, -1, -0.5, 0.5, 1, 1.5, 2}
	history, energies, err := TrainOnPoints(testBackend(), cfg, 1, data, 1, 1, 1, data)
	if !errors.Is(err, ErrNonFinite) {
		t.Fatalf("error %v, want one wrapping ErrNonFinite (losses %v)", err, history)
	}
	k := len(history)
	if k == 0 || k == n {
		t.Fatalf("%d losses %v, want training stopped after 1 to %d of the %d steps", k, history, n-1, n)
	}
	if last := history[k-1]; !math.IsNaN(last) && !math.IsInf(last, 0) {
		t.Errorf("the last loss, of step %d, is %v: want NaN or infinite", k, last)
	}
	for i, loss := range history[:k-1] {
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			t.Errorf("step %d: loss %v, yet training went on", i+1, loss)
		}
	}
	if step := fmt.Sprintf("step %d:", k); !strings.Contains(err.Error(), step) {
		t.Errorf("error %q does not name %q, the step of the last loss", err, step)
	}
	if energies != nil {
		t.Errorf("energies %v after divergence, want nil", energies)
	}
}
