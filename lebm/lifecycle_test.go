package lebm

import (
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
)

// TestLifecycle holds the latent EBM with the score-matching prior update
// to the project's shared save-and-resume check (ED and CD have their own,
// more detailed TestResumeEqualsUninterruptedTraining).
func TestLifecycle(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Method = MethodSM
	x := imagesTensor(cfg, structuredImages())
	testutil.CheckLifecycle(t, testutil.Lifecycle[*Model, StepMetrics]{
		New: func(t testing.TB) *Model {
			m, err := New(testBackend(), cfg)
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
	// Restore, as density's and discrete's models do it, into a model of
	// another seed that has trained: the checkpoint's state wins.
	other := cfg
	other.Seed = cfg.Seed + 1
	dir := t.TempDir()
	saved, err := New(testBackend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := New(testBackend(), other)
	if err != nil {
		t.Fatal(err)
	}
	saved.block, restored.block = testChainBlock, testChainBlock
	for _, m := range []*Model{saved, restored} {
		if _, err := m.TrainStep(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := saved.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := restored.Restore(dir); err != nil {
		t.Fatal(err)
	}
	want, err := saved.TrainStep(x)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := restored.TrainStep(x); err != nil || got != want {
		t.Errorf("after Restore: step %+v (%v), want the saving model's %+v", got, err, want)
	}
}
