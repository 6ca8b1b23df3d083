package densityrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumedFile: a resumed run reads the file it recorded whether
// Options.Data names it relatively, absolutely or not at all; a file
// moved away is read from where Options.Data says; another file beside
// the recorded one is refused, naming both.
func TestResumedFile(t *testing.T) {
	dir := t.TempDir()
	recorded, other := filepath.Join(dir, "rows.csv"), filepath.Join(dir, "other.csv")
	for _, p := range []string{recorded, other} {
		if err := os.WriteFile(p, []byte("x\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	gone := filepath.Join(dir, "moved-away", "rows.csv")
	for _, tc := range []struct {
		given, recorded, want, wantErr string
	}{
		{"", recorded, recorded, ""},
		{"rows.csv", recorded, recorded, ""},
		{"./moved-away/../rows.csv", recorded, recorded, ""},
		{recorded, recorded, recorded, ""},
		{"rows.csv", gone, recorded, ""},
		{"other.csv", recorded, "", "Options.Data other.csv: the run in out trained on " + recorded},
	} {
		got, err := resumedFile(tc.given, tc.recorded, "out")
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("resumedFile(%q, %q) = %q, %v; want %q, %q", tc.given, tc.recorded, got, err, tc.want, tc.wantErr)
		}
	}
}
