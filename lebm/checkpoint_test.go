package lebm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	if step, _ := loaded.GlobalStep(); step != 3 {
		t.Errorf("loaded model is at step %d, want 3", step)
	}
}

func TestSaveRefusesAFolderOfOtherFiles(t *testing.T) {
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
