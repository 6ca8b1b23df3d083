package lebmeval

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/training"
)

// TestEachSnapshotPutsTheCheckpointBack checks that the snapshots measured
// in the evaluation's model leave it as they found it: each snapshot is in
// the model while fn runs (the step-0 one with savedRun's shifted
// generator), and afterwards every variable — both networks, optimizers,
// step — holds the loaded checkpoint's bytes again and the random stream
// is where it was before, not the checkpoint's nor where fn left it.
func TestEachSnapshotPutsTheCheckpointBack(t *testing.T) {
	t.Parallel()
	runDir := savedRun(t, 1)
	home, err := lebm.LatestCheckpoint(filepath.Join(runDir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	model, err := lebm.LoadCheckpoint(testutil.Backend(), home)
	if err != nil {
		t.Fatal(err)
	}
	// The stream moved on since loading, as it has when the anomalies are
	// scored.
	if err := model.Seed(3); err != nil {
		t.Fatal(err)
	}
	loaded := variableBytes(t, model)
	paths, err := lebm.Checkpoints(filepath.Join(runDir, training.EpochsDir))
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: the last snapshot restored is not the checkpoint.
	slices.Reverse(paths)
	var steps []int64
	var generatorMoved []bool
	err = eachSnapshot(model, home, paths, func(string) error {
		steps = append(steps, model.Step())
		now, moved := variableBytes(t, model), false
		for name, b := range loaded {
			moved = moved || (strings.HasPrefix(name, "/"+lebm.GeneratorScope) && !bytes.Equal(now[name], b))
		}
		generatorMoved = append(generatorMoved, moved)
		return model.Seed(7)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(steps, []int64{1, 0}) || !slices.Equal(generatorMoved, []bool{false, true}) {
		t.Errorf("fn saw steps %v with the generator moved %v, want steps [1 0], the step-0 snapshot's generator shifted", steps, generatorMoved)
	}
	after := variableBytes(t, model)
	for name, b := range loaded {
		if !bytes.Equal(after[name], b) {
			t.Errorf("variable %s differs from the loaded checkpoint's after the snapshots", name)
		}
	}
}

// variableBytes returns the bytes of every variable of model by scope and
// name.
func variableBytes(t *testing.T, model *lebm.Model) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for v := range model.Context().IterVariables() {
		if err := v.MustValue().ConstBytes(func(data []byte) {
			out[v.Scope()+"/"+v.Name()] = bytes.Clone(data)
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
