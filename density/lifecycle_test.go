package density

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
)

// TestLifecycle holds density models of points (ED, and CD, whose Langevin
// chains draw from the random stream), of binary data (Bernoulli ED) and
// of mixed rows (both mixed methods, mcd's chains from the data and
// persistent) to the project's shared
// save-and-resume check.
func TestLifecycle(t *testing.T) {
	for _, tc := range []struct {
		method string
		dim    int
		chains string // of mcd
	}{{"ed", 2, ""}, {"cd", 2, ""}, {"bed", 6, ""}, {"med", 4, ""}, {"mcd", 4, "data"}, {"mcd", 4, "persistent"}} {
		t.Run(tc.method+tc.chains, func(t *testing.T) {
			cfg := DefaultConfig(tc.method)
			if tc.chains != "" {
				cfg.Mixed.Chains = tc.chains
			}
			cfg.MLP.Hidden = []int{8, 8}
			cfg.Mixed.Columns = MixedColumns{{Categories: 3, Structure: losses.Ordinal}} // rows of a number and 3 categories
			rng := rand.New(rand.NewPCG(4, 5))
			values := make([]float32, 16*tc.dim)
			for i := range values {
				switch {
				case tc.dim == 2:
					values[i] = float32(rng.NormFloat64())
				case tc.dim == 4 && i%4 == 0:
					values[i], values[i+1+rng.IntN(3)] = float32(rng.NormFloat64()), 1
				case tc.dim == 6 && rng.IntN(2) == 1:
					values[i] = 1 // binary data, as the Bernoulli methods need
				}
			}
			x := tensors.FromFlatDataAndDimensions(values, 16, tc.dim)
			testutil.CheckLifecycle(t, testutil.Lifecycle[*Model, float64]{
				New: func(t testing.TB) *Model {
					m, err := New(testutil.Backend(), cfg, 7)
					if err != nil {
						t.Fatal(err)
					}
					return m
				},
				Step: func(t testing.TB, m *Model) float64 {
					loss, err := m.TrainStep(x)
					if err != nil {
						t.Fatal(err)
					}
					return loss
				},
				Steps: (*Model).Step,
				Save:  (*Model).Save,
				Load: func(t testing.TB, dir string) *Model {
					m, err := New(testutil.Backend(), cfg, 99) // another seed: the checkpoint's state must win
					if err != nil {
						t.Fatal(err)
					}
					if err := m.Restore(dir); err != nil {
						t.Fatal(err)
					}
					return m
				},
			})
		})
	}
}
