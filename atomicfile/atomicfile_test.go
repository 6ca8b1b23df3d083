package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/atomicfile"

	"github.com/edlebm/edlebm/internal/testutil"
)

func TestWrite(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name     string
		existing string // previous content of the target, "" for none
		write    func(io.Writer) error
		wantErr  error
		want     string // content afterwards
	}{
		{
			name:  "new file",
			write: func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err },
			want:  "hello",
		},
		{
			name:     "replaces existing file",
			existing: "old",
			write:    func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err },
			want:     "new",
		},
		{
			name:     "failed write keeps existing file",
			existing: "old",
			write: func(w io.Writer) error {
				if _, err := io.WriteString(w, "partial"); err != nil {
					return err
				}
				return errBoom
			},
			wantErr: errBoom,
			want:    "old",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.txt")
			if tc.existing != "" {
				if err := os.WriteFile(path, []byte(tc.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := atomicfile.Write(path, tc.write)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("WriteFileAtomic error = %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			got, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if string(got) != tc.want {
				t.Errorf("content = %q, want %q", got, tc.want)
			}
			testutil.AssertOnlyFile(t, dir, "out.txt")
			if info, err := os.Stat(path); err == nil && tc.wantErr == nil && info.Mode().Perm() != 0o644 {
				t.Errorf("mode = %v, want 0644", info.Mode().Perm())
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.json")
	if err := atomicfile.WriteJSON(path, map[string]float64{"b": 2, "a": 0.5}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": 0.5,\n  \"b\": 2\n}\n"; string(got) != want {
		t.Errorf("WriteJSON wrote %q, want %q", got, want)
	}
	// A value JSON cannot encode leaves no file behind.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := atomicfile.WriteJSON(bad, func() {}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("WriteJSON(func) error = %v, want one naming %s", err, bad)
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed WriteJSON left %s behind (stat: %v)", bad, err)
	}
}
