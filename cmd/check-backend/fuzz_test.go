package main

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadReference: a damaged reference.json gives a reference or an
// error, never a panic.
func FuzzReadReference(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"shape": "svhn", "method": "ed"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "reference.json")
		os.WriteFile(path, data, 0o644)
		readReference(path)
	})
}
