package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

func TestSaveLoadRoundTripAndLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	if _, err := Latest(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Latest of an empty folder: %v, want os.ErrNotExist", err)
	}
	ctx := context.New()
	ctx.SetParam("answer", 42)
	w := ctx.In("model").VariableWithValue("w", []float32{1, 2, 3})
	for step := int64(1); step <= 3; step++ {
		w.MustSetValue(tensors.FromValue([]float32{float32(step), 2, 3}))
		if err := Save(ctx, dir, step); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"LATEST", "step-000000002", "step-000000003"}; !slices.Equal(names, want) {
		t.Errorf("folder holds %v, want %v", names, want)
	}
	loaded := context.New()
	if err := Load(loaded, dir); err != nil {
		t.Fatal(err)
	}
	got := tensors.MustCopyFlatData[float32](loaded.In("model").GetVariableByScopeAndName("/model", "w").MustValue())
	if !slices.Equal(got, []float32{3, 2, 3}) {
		t.Errorf("loaded w = %v, want the step-3 value [3 2 3]", got)
	}
	if v, ok := loaded.GetParam("answer"); !ok || v != 42 {
		t.Errorf("loaded param answer = %v (%v), want 42", v, ok)
	}
}

// GoMLX's trainer keeps its progress bar's moving averages under
// "/metrics", in scopes named afresh per process: a checkpoint leaves them
// out (and a "/metricsx" scope, which is not under "/metrics", in; GoMLX
// adds its global step).
func TestSaveLeavesOutTheTrainersMovingAverages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	ctx := context.New()
	ctx.In("model").VariableWithValue("w", []float32{1})
	ctx.In("metricsx").VariableWithValue("kept", []float32{2})
	ctx.In("metrics").In("Moving Average Loss_uuid_1234").VariableWithValue("mean", []float32{3})
	if err := Save(ctx, dir, 1); err != nil {
		t.Fatal(err)
	}
	loaded := context.New()
	if err := Load(loaded, dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	for v := range loaded.IterVariables() {
		names = append(names, v.ScopeAndName())
	}
	slices.Sort(names)
	if want := []string{"/global_step", "/metricsx/kept", "/model/w"}; !slices.Equal(names, want) {
		t.Errorf("loaded variables %v, want %v", names, want)
	}
}

func TestSaveRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "thesis.tex"), nil, 0o644)
	ctx := context.New()
	ctx.VariableWithValue("w", []float32{1})
	if err := Save(ctx, dir, 1); err == nil || !strings.Contains(err.Error(), "thesis.tex") {
		t.Errorf("Save into a folder with thesis.tex: %v, want a refusal naming it", err)
	}
}

func TestSaveKeepingListAndLoadPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snapshots")
	ctx := context.New()
	w := ctx.VariableWithValue("w", []float32{0})
	for step := int64(10); step <= 60; step += 10 {
		w.MustSetValue(tensors.FromValue([]float32{float32(step)}))
		if err := SaveKeeping(ctx, dir, step, 4); err != nil {
			t.Fatal(err)
		}
	}
	// A folder newer than LATEST (a save cut short before LATEST moved) is
	// not a complete checkpoint.
	if err := os.Mkdir(filepath.Join(dir, "step-000000070"), 0o755); err != nil {
		t.Fatal(err)
	}
	paths, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	if want := []string{"step-000000030", "step-000000040", "step-000000050", "step-000000060"}; !slices.Equal(names, want) {
		t.Fatalf("List = %v, want %v", names, want)
	}
	for i, p := range paths {
		loaded := context.New()
		if err := LoadPath(loaded, p); err != nil {
			t.Fatal(err)
		}
		got := tensors.MustCopyFlatData[float32](loaded.GetVariableByScopeAndName("/", "w").MustValue())
		if want := float32(30 + 10*i); got[0] != want {
			t.Errorf("LoadPath(%s): w = %v, want %v", names[i], got[0], want)
		}
	}
	if err := SaveKeeping(ctx, dir, 80, 0); err == nil || !strings.Contains(err.Error(), "keep 0") {
		t.Errorf("SaveKeeping(keep 0) error = %v, want one naming keep 0", err)
	}
	if _, err := List(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("List(missing folder) error = %v, want os.ErrNotExist", err)
	}
}
