package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadHistory: a damaged metrics.jsonl of a run being resumed gives
// its steps up to the checkpoint or an error naming it, never a panic.
func FuzzLoadHistory(f *testing.F) {
	f.Add([]byte(`{"step":1,"epoch":0,"generator_loss":3.5}`+"\n"+`{"step":2,"epoch":0}`+"\n"), int64(1))
	f.Add([]byte(`{"step":1}`+"\n"+`{"step":`), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, upTo int64) {
		path := filepath.Join(t.TempDir(), "metrics.jsonl")
		os.WriteFile(path, data, 0o644)
		recs, err := loadHistory(path, upTo)
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
		for _, r := range recs {
			if r.Step > upTo {
				t.Errorf("step %d kept, beyond %d", r.Step, upTo)
			}
		}
	})
}
