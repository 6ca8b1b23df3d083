package lebm

import (
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
)

// TestLifecycle holds the latent EBM with the score-matching prior update
// to the project's shared save-and-resume check (ED and CD have their own,
// more detailed TestResumeEqualsUninterruptedTraining).
func TestLifecycle(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	cfg.Method = MethodSM
	x := imagesTensor(cfg, structuredImages())
	testutil.CheckLifecycle(t, testutil.Lifecycle[*Model, StepMetrics]{
		New: func(t testing.TB) *Model {
			m, err := New(testBackend(), nativeConvTOnXLA(testBackend(), cfg))
			if err != nil {
				t.Fatal(err)
			}
			m.block = testChainBlock // as the other tests' models
			return m
		},
		Step: func(t testing.TB, m *Model) StepMetrics {
			metrics, err := m.TrainStep(x)
			if err != nil {
				t.Fatal(err)
			}
			return metrics
		},
		Steps: (*Model).Step,
		Save:  (*Model).Save,
		Load: func(t testing.TB, dir string) *Model {
			m, err := Load(testBackend(), dir)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
	})
}
