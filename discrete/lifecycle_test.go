package discrete

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/internal/testutil"
)

// TestIsingLifecycle holds Ising models (ED, and CD, whose persistent
// chains and their Gibbs draws are state to resume) to the project's
// shared save-and-resume check; a model with other settings refuses the
// checkpoint, naming them.
func TestIsingLifecycle(t *testing.T) {
	const d = 9
	rng := rand.New(rand.NewPCG(4, 5))
	bits := make([]float32, 16*d)
	for i := range bits {
		bits[i] = float32(rng.IntN(2))
	}
	x := tensors.FromFlatDataAndDimensions(bits, 16, d)
	for _, method := range Methods {
		t.Run(method, func(t *testing.T) {
			cfg := DefaultIsingConfig(method)
			newModel := func(t testing.TB, cfg IsingConfig, seed int64) *IsingModel {
				m, err := NewIsingModel(testutil.Backend(), d, cfg, seed)
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			var dir string
			testutil.CheckLifecycle(t, testutil.Lifecycle[*IsingModel, float64]{
				New: func(t testing.TB) *IsingModel { return newModel(t, cfg, 7) },
				Step: func(t testing.TB, m *IsingModel) float64 {
					loss, err := m.TrainStep(x)
					if err != nil {
						t.Fatal(err)
					}
					return loss
				},
				Steps: (*IsingModel).Step,
				Save:  func(m *IsingModel, to string) error { dir = to; return m.Save(to) },
				Load: func(t testing.TB, dir string) *IsingModel {
					m := newModel(t, cfg, 99) // another seed: the checkpoint's state must win
					if err := m.Restore(dir); err != nil {
						t.Fatal(err)
					}
					return m
				},
			})
			other := cfg
			other.L1 = 0.5
			err := newModel(t, other, 7).Restore(dir)
			if err == nil || !strings.Contains(err.Error(), "ising_l1=0.5") {
				t.Errorf("restoring into a model with L1 0.5: %v, want a refusal naming ising_l1=0.5", err)
			}
		})
	}
}
