package lebm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"

	"github.com/edlebm/edlebm/atomicfile"
)

// Checkpoint layout: dir/step-NNNNNNNNN/ holds one complete GoMLX checkpoint
// and dir/LATEST names the newest one. A save writes into a temporary
// folder, renames it into place and only then replaces LATEST (itself
// written to a temporary file and renamed), so a crash at any moment leaves
// LATEST naming a complete checkpoint.
const (
	latestFile  = "LATEST"
	stepPrefix  = "step-"
	keepSaved   = 2
	tmpPrefix   = ".tmp-"
	stepPattern = stepPrefix + "%09d"
)

// Save writes a checkpoint of the whole model state — Config parameters,
// both models' variables, both optimizers' state, epoch, global step and the
// random number generator state — into dir (created if needed), atomically,
// keeping the previous one too. A dir holding files that are not this
// package's checkpoints is refused, so nothing else is overwritten.
func (m *Model) Save(dir string) (err error) {
	defer recoverError(&err, "saving to "+dir)
	if err := checkCheckpointDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lebm: saving: %w", err)
	}
	step, err := m.GlobalStep()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, tmpPrefix)
	if err != nil {
		return fmt.Errorf("lebm: saving: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	h, err := checkpoints.Build(m.ctx).Dir(tmp).Done()
	if err != nil {
		return fmt.Errorf("lebm: saving to %s: %w", tmp, err)
	}
	if err := h.Save(); err != nil {
		return fmt.Errorf("lebm: saving to %s: %w", tmp, err)
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	name := fmt.Sprintf(stepPattern, step)
	final := filepath.Join(dir, name)
	if err := os.RemoveAll(final); err != nil { // a leftover of an interrupted save of this step
		return fmt.Errorf("lebm: saving: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("lebm: saving: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, latestFile), func(w io.Writer) error {
		_, err := io.WriteString(w, name+"\n")
		return err
	}); err != nil {
		return fmt.Errorf("lebm: saving: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return pruneCheckpoints(dir, name)
}

// Load creates a model from the checkpoint dir/LATEST names, written by
// Save: its Config comes from the checkpoint, and training resumes where it
// stopped (optimizer moments, epoch, global step and random number
// generator state included).
func Load(backend backends.Backend, dir string) (m *Model, err error) {
	defer recoverError(&err, "loading from "+dir)
	path, err := LatestCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	ctx := context.New()
	if _, err := checkpoints.Load(ctx).Dir(path).Immediate().Done(); err != nil {
		return nil, fmt.Errorf("lebm: checkpoint %s is unreadable or corrupt: %w", path, err)
	}
	if m, err = NewFromContext(backend, ctx); err != nil {
		return nil, fmt.Errorf("lebm: checkpoint %s: %w", path, err)
	}
	// Loaded variables come back trainable; only the two models' are.
	for v := range ctx.IterVariables() {
		v.SetTrainable(inScope(v.Scope(), ctx.In(GeneratorScope).Scope()) || inScope(v.Scope(), ctx.In(PriorScope).Scope()))
	}
	return m, nil
}

// LatestCheckpoint returns the folder of the newest complete checkpoint in
// dir, or an error saying why there is none.
func LatestCheckpoint(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, latestFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("lebm: no checkpoint in %s (no %s file): %w", dir, latestFile, os.ErrNotExist)
	}
	if err != nil {
		return "", fmt.Errorf("lebm: reading checkpoint pointer: %w", err)
	}
	name := strings.TrimSpace(string(data))
	if !strings.HasPrefix(name, stepPrefix) || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("lebm: %s is corrupt: it names %q, not a %sN checkpoint folder", filepath.Join(dir, latestFile), name, stepPrefix)
	}
	path := filepath.Join(dir, name)
	if info, err := os.Stat(path); err != nil || !info.IsDir() {
		return "", fmt.Errorf("lebm: %s names %s, which is missing: %v", filepath.Join(dir, latestFile), path, err)
	}
	return path, nil
}

// checkCheckpointDir refuses a folder with anything but checkpoints in it.
func checkCheckpointDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lebm: saving: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		if n != latestFile && !strings.HasPrefix(n, stepPrefix) && !strings.HasPrefix(n, tmpPrefix) && !strings.HasPrefix(n, "."+latestFile) {
			return fmt.Errorf("lebm: saving to %s: it holds %q, which is not a checkpoint of this package; save into an empty or new folder", dir, n)
		}
	}
	return nil
}

// pruneCheckpoints removes all but the newest keepSaved checkpoints and any
// temporary leftovers of interrupted saves.
func pruneCheckpoints(dir, newest string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("lebm: saving: %w", err)
	}
	var steps []string
	for _, e := range entries {
		switch n := e.Name(); {
		case strings.HasPrefix(n, stepPrefix) && n <= newest:
			steps = append(steps, n)
		case strings.HasPrefix(n, tmpPrefix):
			_ = os.RemoveAll(filepath.Join(dir, n))
		}
	}
	slices.Sort(steps)
	for _, n := range steps[:max(0, len(steps)-keepSaved)] {
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			return fmt.Errorf("lebm: removing old checkpoint: %w", err)
		}
	}
	return nil
}

// syncDir flushes a folder's entries (new files, renames) to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("lebm: syncing %s: %w", dir, err)
	}
	defer d.Close()
	for _, e := range mustReadDir(dir) {
		if !e.IsDir() {
			if f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDWR, 0); err == nil {
				_ = f.Sync()
				f.Close()
			}
		}
	}
	if err := d.Sync(); err != nil {
		return fmt.Errorf("lebm: syncing %s: %w", dir, err)
	}
	return nil
}

func mustReadDir(dir string) []os.DirEntry {
	entries, _ := os.ReadDir(dir)
	return entries
}
