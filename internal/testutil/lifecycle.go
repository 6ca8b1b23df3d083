package testutil

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Lifecycle is what CheckLifecycle needs of a model type M whose training
// steps report an S: how to make a model, train it one step, count its
// steps, save it into a folder and load it back. Every model of the
// project (lebm, density, classifier) is held to the same check.
type Lifecycle[M any, S comparable] struct {
	// New makes a freshly initialised model.
	New func(t testing.TB) M
	// Step trains one step on the same data every call and returns what
	// the step reports (its loss or metrics).
	Step func(t testing.TB, m M) S
	// Steps is the model's count of training steps.
	Steps func(m M) int64
	// Save saves m into dir; Load loads the model saved in dir.
	Save func(m M, dir string) error
	Load func(t testing.TB, dir string) M
}

// CheckLifecycle checks that a model saved after some training and loaded
// again goes on exactly as the model that saved it: a model trains 2
// steps and is saved; the loaded model starts at step 2, and the next 3
// steps of both report exactly the same values (random streams included).
func CheckLifecycle[M any, S comparable](t *testing.T, lc Lifecycle[M, S]) {
	t.Helper()
	const before, after = 2, 3
	saved := lc.New(t)
	for range before {
		lc.Step(t, saved)
	}
	dir := filepath.Join(t.TempDir(), "checkpoint")
	if err := lc.Save(saved, dir); err != nil {
		t.Fatalf("saving after %d steps: %v", before, err)
	}
	loaded := lc.Load(t, dir)
	if got := lc.Steps(loaded); got != before {
		t.Errorf("the loaded model is at step %d, want %d", got, before)
	}
	for i := range after {
		want := lc.Step(t, saved)
		if got := lc.Step(t, loaded); got != want {
			t.Errorf("step %d of the loaded model: %+v, of the model that saved it: %+v", before+i+1, got, want)
		}
	}
	if got := lc.Steps(loaded); got != before+after {
		t.Errorf("the loaded model is at step %d after %d more, want %d", got, after, before+after)
	}
}

// StopThenResume runs a training command twice in the same folder: first
// with a stop (SIGTERM) already received, which must end it after its
// first step with the error stopped (training.ErrStopped, which this
// package cannot import), then without one, to its end.
func StopThenResume(t *testing.T, stopped error, run func(stop chan os.Signal) error) {
	t.Helper()
	stop := make(chan os.Signal, 1)
	stop <- syscall.SIGTERM
	if err := run(stop); !errors.Is(err, stopped) {
		t.Fatalf("stopped run ended with %v, want %v", err, stopped)
	}
	if err := run(nil); err != nil {
		t.Fatalf("resumed run: %v", err)
	}
}
