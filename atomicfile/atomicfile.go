// Package atomicfile writes files so that a reader never sees a partial one:
// the data goes to a temporary file beside the target, is synced, and is
// renamed over it. Checkpoint pointers, metrics, pictures and CSVs use it.
package atomicfile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write creates or replaces the file at path with whatever write
// produces. The data goes to a temporary file in the same directory (so the
// final rename stays on one file system and is atomic), is flushed and synced,
// and only then renamed over path. On any failure the temporary file is
// removed and path is left untouched. The returned error names path.
func Write(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			// Best effort: the original error is what matters to the caller.
			_ = f.Close()
			_ = os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()

	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	// CreateTemp uses mode 0600; give the result the usual mode of a new file.
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WriteJSON writes v as indented JSON, with Write's guarantees.
func WriteJSON(path string, v any) error {
	return Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}
