package lebm

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/internal/scopes"
	"github.com/edlebm/edlebm/losses"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestSaveKeepsTwoCompleteCheckpointsAndALatestPointer(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	m := newModel(t, cfg)
	x := imagesTensor(cfg, structuredImages())
	dir := filepath.Join(t.TempDir(), "ckpt")
	// A leftover of a save that crashed half-way must not matter.
	if err := os.MkdirAll(filepath.Join(dir, ".tmp-crashed"), 0o755); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		trainStep(t, m, x)
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"LATEST", "step-000000002", "step-000000003"}
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("checkpoint folder holds %v, want %v", got, want)
	}
	latest, err := LatestCheckpoint(dir)
	if err != nil || filepath.Base(latest) != "step-000000003" {
		t.Errorf("LatestCheckpoint = %q, %v; want step-000000003", latest, err)
	}
	loaded, err := Load(testBackend(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if step := loaded.Step(); step != 3 {
		t.Errorf("loaded model is at step %d, want 3", step)
	}
}

func TestSaveRefusesAFolderOfOtherFiles(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := newModel(t, cfg).Save(dir)
	if err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("Save into a folder with notes.txt: error %v, want a refusal naming the file", err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"notes.txt"}) {
		t.Errorf("folder now holds %v; nothing should have been written", got)
	}
}

func TestLoadReportsBadCheckpoints(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	save := func(t *testing.T) (dir, ckpt string) {
		dir = t.TempDir()
		if err := newModel(t, cfg).Save(dir); err != nil {
			t.Fatal(err)
		}
		ckpt, err := LatestCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		return dir, ckpt
	}
	cases := []struct {
		name    string
		damage  func(t *testing.T, dir, ckpt string)
		mention string
	}{
		{"no checkpoint at all", func(t *testing.T, dir, _ string) { os.Remove(filepath.Join(dir, "LATEST")) }, "no checkpoint"},
		{"pointer names garbage", func(t *testing.T, dir, _ string) {
			os.WriteFile(filepath.Join(dir, "LATEST"), []byte("../../etc"), 0o644)
		}, "is corrupt"},
		{"pointer names a missing folder", func(t *testing.T, _, ckpt string) { os.RemoveAll(ckpt) }, "missing"},
		{"truncated variables file", func(t *testing.T, _, ckpt string) {
			bins, _ := filepath.Glob(filepath.Join(ckpt, "*.bin"))
			if len(bins) != 1 {
				t.Fatalf("want one .bin in %s, found %v", ckpt, bins)
			}
			os.Truncate(bins[0], 10)
		}, "corrupt"},
		{"garbled metadata", func(t *testing.T, _, ckpt string) {
			jsons, _ := filepath.Glob(filepath.Join(ckpt, "*.json"))
			os.WriteFile(jsons[0], []byte("{not json"), 0o644)
		}, "corrupt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, ckpt := save(t)
			c.damage(t, dir, ckpt)
			before := dirNames(t, dir)
			_, err := Load(testBackend(), dir)
			if err == nil || !strings.Contains(err.Error(), c.mention) || !strings.Contains(err.Error(), dir) {
				t.Errorf("Load: error %v, want one mentioning %q and the folder", err, c.mention)
			}
			if after := dirNames(t, dir); !slices.Equal(before, after) {
				t.Errorf("Load changed the folder from %v to %v", before, after)
			}
		})
	}
}

func TestLoadOptionsChangeTheSamplers(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t) // 5 test-posterior and 5 generation steps of 0.1 and 0.2
	dir := t.TempDir()
	if err := newModel(t, cfg).Save(dir); err != nil {
		t.Fatal(err)
	}
	load := func(opts ...LoadOption) *Model {
		t.Helper()
		m, err := Load(testBackend(), dir, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// Settings: a zero argument keeps the checkpoint's value.
	for _, c := range []struct {
		opts      []LoadOption
		post, gen losses.LangevinConfig
		name      string
	}{
		{nil, cfg.TestPosteriorLangevin, cfg.GenerationLangevin, "none"},
		{[]LoadOption{WithTestPosterior(100, 0.1)}, losses.LangevinConfig{Steps: 100, StepSize: 0.1}, cfg.GenerationLangevin, "posterior"},
		{[]LoadOption{WithGeneration(0, 0.3)}, cfg.TestPosteriorLangevin, losses.LangevinConfig{Steps: 5, StepSize: 0.3}, "generation step size"},
		{[]LoadOption{WithTestPosterior(7, 0), WithGeneration(500, 0)}, losses.LangevinConfig{Steps: 7, StepSize: cfg.TestPosteriorLangevin.StepSize},
			losses.LangevinConfig{Steps: 500, StepSize: cfg.GenerationLangevin.StepSize}, "both step counts"},
	} {
		got := load(c.opts...).Config()
		if got.TestPosteriorLangevin != c.post || got.GenerationLangevin != c.gen {
			t.Errorf("%s: test posterior %+v, generation %+v; want %+v, %+v", c.name, got.TestPosteriorLangevin, got.GenerationLangevin, c.post, c.gen)
		}
	}
	if got := load(WithGenerationSampler(SamplerMALA)).Config().GenerationSampler; got != SamplerMALA {
		t.Errorf("WithGenerationSampler(mala): %q", got)
	}
	if got := load(WithGenerationSampler("")).Config().GenerationSampler; got != SamplerLangevin {
		t.Errorf("WithGenerationSampler(\"\"): %q, want the checkpoint's langevin", got)
	}
	// Behaviour: z ← z − (s²/2)∇U(z) + s·ξ barely moves the shared first
	// draw z0 when s = 1e-9, however many steps; the checkpoint's 0.2 does.
	sample := func(m *Model) []float64 {
		z, err := m.PriorSample(16)
		if err != nil {
			t.Fatal(err)
		}
		return flatFloat64s(z)
	}
	one, four, trained := sample(load(WithGeneration(1, 1e-9))), sample(load(WithGeneration(4, 1e-9))), sample(load())
	worst, moved := 0.0, 0.0
	for i := range one {
		worst = math.Max(worst, math.Abs(one[i]-four[i]))
		moved = math.Max(moved, math.Abs(one[i]-trained[i]))
	}
	if worst > 1e-7 || moved < 1e-2 {
		t.Errorf("tiny steps: samples differ by %.3g between 1 and 4 steps (want ≤ 1e-7) and by %.3g from the checkpoint's sampler (want ≥ 0.01)", worst, moved)
	}

	if _, err := Load(testBackend(), dir, WithTestPosterior(-3, 0)); err == nil || !strings.Contains(err.Error(), "TestPosteriorLangevin") {
		t.Errorf("negative steps: error %v, want one naming TestPosteriorLangevin", err)
	}
}

// WithDataNamed names the data set of a checkpoint that does not name
// one, and the model saves the name from then on; a checkpoint that names
// its data set keeps it.
func TestWithDataNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ saved, want string }{{"", "svhn"}, {"mnist", "mnist"}} {
		cfg := tinyConfig(t)
		cfg.Data = tc.saved
		dir := t.TempDir()
		if err := newModel(t, cfg).Save(dir); err != nil {
			t.Fatal(err)
		}
		m, err := Load(testBackend(), dir, WithDataNamed("svhn"))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Config().Data; got != tc.want {
			t.Errorf("checkpoint naming %q loaded with WithDataNamed(svhn): data %q, want %q", tc.saved, got, tc.want)
		}
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
		again, err := Load(testBackend(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := again.Config().Data; got != tc.want {
			t.Errorf("saved again and loaded: data %q, want %q", got, tc.want)
		}
	}
}

// TestSaveBeforeTrainingHoldsTheVariables saves a model before its first
// step: the checkpoint must hold every generator and prior variable with
// its value. GoMLX creates variables only when a graph uses them, and such
// a checkpoint once held only the random state; a backend whose random
// stream differs (XLA against SimpleGo) then drew another model on load.
func TestSaveBeforeTrainingHoldsTheVariables(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	m := newModel(t, cfg)
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	path, err := LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := context.New()
	if err := checkpoint.LoadPath(onDisk, path); err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{"/" + GeneratorScope, "/" + PriorScope} {
		want := variableValues(t, m.Context(), scope)
		got := variableValues(t, onDisk, scope)
		if len(got) != len(want) {
			t.Errorf("checkpoint holds %d variables under %s, the model %d", len(got), scope, len(want))
		}
		for name, w := range want {
			if !slices.Equal(got[name], w) {
				t.Errorf("checkpoint's %s differs from the model's", name)
			}
		}
	}
}

// TestScopeValuesOrderSurvivesLoading checks that ScopeValues lists a loaded
// model's variables by scope and name, as for a new model: per-variable
// gradients of two models are compared position by position
// (cmd/check-backend), and a checkpoint's variables come back in map order.
func TestScopeValuesOrderSurvivesLoading(t *testing.T) {
	t.Parallel()
	m := newModel(t, tinyConfig(t))
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{GeneratorScope, PriorScope} {
		var want []string
		for v := range m.Context().IterVariables() {
			if scopes.Within(v.Scope(), "/"+scope) {
				want = append(want, v.ScopeAndName())
			}
		}
		slices.Sort(want)
		for range 5 {
			loaded, err := Load(testBackend(), dir)
			if err != nil {
				t.Fatal(err)
			}
			g := NewGraph(testBackend(), "order")
			byNode := map[*Node]string{}
			for v := range loaded.Context().IterVariables() {
				byNode[v.ValueGraph(g)] = v.ScopeAndName()
			}
			var got []string
			for _, node := range ScopeValues(loaded.Context(), scope, g) {
				got = append(got, byNode[node])
			}
			g.Finalize()
			if !slices.Equal(got, want) {
				t.Fatalf("ScopeValues(%s) of a loaded model lists %v, want %v", scope, got, want)
			}
		}
	}
}

// Restoring a snapshot (the newest of a folder, Restore) into a model
// whose graphs are compiled and whose state has moved on gives it the
// snapshot's state: the variables of the
// snapshot loaded afresh, its global step, and the same reconstructions
// from the same seed through the graphs compiled before.
func TestRestoreSwapsInASnapshot(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	m := newModel(t, cfg)
	x := imagesTensor(cfg, structuredImages())
	dir := filepath.Join(t.TempDir(), "epochs")
	trainStep(t, m, x) // so that the snapshot holds the optimizers' state
	if err := m.SaveKeeping(dir, 5); err != nil {
		t.Fatal(err)
	}
	snapshot, err := LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	trainStep(t, m, x)
	trainStep(t, m, x)
	reconstruct := func(model *Model) []float64 {
		t.Helper()
		if err := model.Seed(3); err != nil {
			t.Fatal(err)
		}
		r, err := model.Reconstruct(x)
		if err != nil {
			t.Fatal(err)
		}
		return flatFloat64(t, r)
	}
	trained := reconstruct(m)
	if err := m.Restore(dir); err != nil { // the folder's newest: snapshot
		t.Fatal(err)
	}
	fresh, err := LoadCheckpoint(testBackend(), snapshot)
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{"/" + GeneratorScope, "/" + PriorScope} {
		want, got := variableValues(t, fresh.Context(), scope), variableValues(t, m.Context(), scope)
		for name, w := range want {
			if !slices.Equal(got[name], w) {
				t.Errorf("after Restore, %s differs from the snapshot's", name)
			}
		}
	}
	if step := m.Step(); step != 1 {
		t.Errorf("step after restoring the step-1 snapshot: %d, want 1", step)
	}
	restored, want := reconstruct(m), reconstruct(fresh)
	if !slices.Equal(restored, want) {
		t.Error("reconstructions of the restored model differ from the snapshot's loaded afresh")
	}
	if slices.Equal(restored, trained) {
		t.Error("reconstructions did not change with Restore: the compiled graphs kept the trained values")
	}

	other := tinyConfig(t)
	other.Prior.Hidden = []int{16, 8}
	otherDir := filepath.Join(t.TempDir(), "other")
	if err := newModel(t, other).Save(otherDir); err != nil {
		t.Fatal(err)
	}
	otherPath, err := LatestCheckpoint(otherDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RestorePath(otherPath); err == nil || !strings.Contains(err.Error(), "another model") {
		t.Errorf("restoring a checkpoint of another prior architecture: error %v, want one saying so", err)
	}
}
