// Package checkpoint saves and restores a GoMLX context (variables, with
// optimizer and random-number-generator state, and parameters) atomically:
// a crash at any moment leaves the newest complete checkpoint readable.
package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
	"github.com/gomlx/gomlx/pkg/ml/train/metrics"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/internal/scopes"
)

// Checkpoint layout: dir/step-NNNNNNNNN/ holds one complete GoMLX checkpoint
// and dir/LATEST names the newest one. A save writes into a temporary
// folder, renames it into place and only then replaces LATEST (itself
// written to a temporary file and renamed), so a crash at any moment leaves
// LATEST naming a complete checkpoint.
const (
	latestFile  = "LATEST"
	stepPrefix  = "step-"
	defaultKeep = 2
	tmpPrefix   = ".tmp-"
	stepPattern = stepPrefix + "%09d"
)

// Save writes a checkpoint of ctx — its variables and parameters — for the
// given step into dir (created if needed), atomically, keeping the newest
// two. A dir holding files that are not checkpoints is refused, so nothing
// else is overwritten.
func Save(ctx *context.Context, dir string, step int64) error {
	return SaveKeeping(ctx, dir, step, defaultKeep)
}

// SaveKeeping is Save keeping the newest keep (≥ 1) checkpoints, for
// snapshots that are evaluated later (see List and LoadPath).
func SaveKeeping(ctx *context.Context, dir string, step int64, keep int) error {
	if keep < 1 {
		return fmt.Errorf("checkpoint: saving to %s: keep %d checkpoints, want ≥ 1", dir, keep)
	}
	if err := checkDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: saving: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, tmpPrefix)
	if err != nil {
		return fmt.Errorf("checkpoint: saving: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	h, err := checkpoints.Build(ctx).Dir(tmp).ExcludeVars(displayVariables(ctx)...).Done()
	if err != nil {
		return fmt.Errorf("checkpoint: saving to %s: %w", tmp, err)
	}
	if err := h.Save(); err != nil {
		return fmt.Errorf("checkpoint: saving to %s: %w", tmp, err)
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	name := fmt.Sprintf(stepPattern, step)
	final := filepath.Join(dir, name)
	if err := os.RemoveAll(final); err != nil { // a leftover of an interrupted save of this step
		return fmt.Errorf("checkpoint: saving: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("checkpoint: saving: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, latestFile), func(w io.Writer) error {
		_, err := io.WriteString(w, name+"\n")
		return err
	}); err != nil {
		return fmt.Errorf("checkpoint: saving: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return prune(dir, name, keep)
}

// Holds reports whether checkpoints hold v: every variable but those
// under GoMLX's metrics scope, the moving averages GoMLX's trainer keeps
// for its progress bar. Those are not saved: GoMLX names their scopes
// afresh in every process, so a resumed run would never read them, and
// each resume would add a set.
func Holds(v *context.Variable) bool {
	return !scopes.Within(v.Scope(), context.RootScope+metrics.Scope)
}

// displayVariables are the variables of ctx that checkpoints do not hold.
func displayVariables(ctx *context.Context) []*context.Variable {
	var vars []*context.Variable
	for v := range ctx.IterVariables() {
		if !Holds(v) {
			vars = append(vars, v)
		}
	}
	return vars
}

// Load reads the checkpoint dir/LATEST names into ctx: variables (created
// where missing) and parameters.
func Load(ctx *context.Context, dir string) error {
	path, err := Latest(dir)
	if err != nil {
		return err
	}
	return LoadPath(ctx, path)
}

// LoadPath reads one checkpoint folder (as returned by Latest or List) into
// ctx. The files are checked first (see validate), so that a damaged or
// hostile checkpoint is an error naming the file and field, never a panic
// or an allocation of what its metadata merely claims.
func LoadPath(ctx *context.Context, path string) (err error) {
	if err := validate(path); err != nil {
		return fmt.Errorf("checkpoint %s is unreadable or corrupt: %w", path, err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("checkpoint %s is unreadable or corrupt: %v", path, r)
		}
	}()
	if _, err := checkpoints.Load(ctx).Dir(path).Immediate().Done(); err != nil {
		return fmt.Errorf("checkpoint %s is unreadable or corrupt: %w", path, err)
	}
	return nil
}

// Latest returns the folder of the newest complete checkpoint in
// dir, or an error saying why there is none.
func Latest(dir string) (string, error) {
	pointer := filepath.Join(dir, latestFile)
	data, err := readSmall(pointer, maxLatestSize)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("checkpoint: no checkpoint in %s (no %s file): %w", dir, latestFile, os.ErrNotExist)
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: reading checkpoint pointer: %w", err)
	}
	name := strings.TrimSpace(string(data))
	if len(data) > maxLatestSize || !strings.HasPrefix(name, stepPrefix) || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("checkpoint: %s is corrupt: it should name a %sN checkpoint folder, and starts %s", pointer, stepPrefix, quoteStart(data, 40))
	}
	path := filepath.Join(dir, name)
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("checkpoint: %s names %s, which does not exist", pointer, path)
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: %s names a folder that cannot be read: %w", pointer, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("checkpoint: %s names %s, which is a file, not a checkpoint folder", pointer, path)
	}
	return path, nil
}

// maxLatestSize bounds the LATEST file read: it holds one folder name.
const maxLatestSize = 256

// readSmall reads up to limit+1 bytes of path: a longer file shows as
// more than limit bytes without being read whole.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// quoteStart quotes at most n bytes of data, Go-escaped, with "…" when
// cut, so that a file's bad bytes never fill an error message.
func quoteStart(data []byte, n int) string {
	if len(data) <= n {
		return fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("%q…", data[:n])
}

// List returns the complete checkpoints in dir, oldest first, up to the
// one LATEST names (a newer folder is the leftover of a save cut short).
func List(dir string) ([]string, error) {
	latest, err := Latest(dir)
	if err != nil {
		return nil, err
	}
	newest := filepath.Base(latest)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: listing: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if n := e.Name(); e.IsDir() && strings.HasPrefix(n, stepPrefix) && n <= newest {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	slices.Sort(paths)
	return paths, nil
}

// checkDir refuses a folder with anything but checkpoints in it.
func checkDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: saving: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		if n != latestFile && !strings.HasPrefix(n, stepPrefix) && !strings.HasPrefix(n, tmpPrefix) && !strings.HasPrefix(n, "."+latestFile) {
			return fmt.Errorf("checkpoint: saving to %s: it holds %q, which is not a checkpoint; save into an empty or new folder", dir, n)
		}
	}
	return nil
}

// prune removes all but the newest keep checkpoints and any
// temporary leftovers of interrupted saves.
func prune(dir, newest string, keep int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: saving: %w", err)
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
	for _, n := range steps[:max(0, len(steps)-keep)] {
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			return fmt.Errorf("checkpoint: removing old checkpoint: %w", err)
		}
	}
	return nil
}

// syncDir flushes a folder's entries (new files, renames) to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: syncing %s: %w", dir, err)
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
		return fmt.Errorf("checkpoint: syncing %s: %w", dir, err)
	}
	return nil
}

func mustReadDir(dir string) []os.DirEntry {
	entries, _ := os.ReadDir(dir)
	return entries
}
