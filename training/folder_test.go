package training

import (
	"path/filepath"
	"testing"
)

func TestTags(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{EpochTag(1), "epoch001"},
		{EpochTag(200), "epoch200"},
		{StepTag(0), "step000000000"},
		{StepTag(123), "step000000123"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestPicturesMatchTheirPatterns checks that every tagged picture is found
// by the pattern the report looks for, and only by its own.
func TestPicturesMatchTheirPatterns(t *testing.T) {
	f := Folder{Dir: filepath.Join("runs", "x")}
	for _, tag := range []string{EpochTag(3), StepTag(45)} {
		for _, tc := range []struct {
			path, pattern, other string
		}{
			{f.Samples(tag), SamplesPattern, ReconstructionsPattern},
			{f.Reconstructions(tag), ReconstructionsPattern, SamplesPattern},
		} {
			if filepath.Dir(tc.path) != f.Dir {
				t.Errorf("%s is not in %s", tc.path, f.Dir)
			}
			base := filepath.Base(tc.path)
			if ok, _ := filepath.Match(tc.pattern, base); !ok {
				t.Errorf("%s does not match %s", base, tc.pattern)
			}
			if ok, _ := filepath.Match(tc.other, base); ok {
				t.Errorf("%s also matches %s", base, tc.other)
			}
		}
	}
	if got, want := f.Checkpoints(), filepath.Join("runs", "x", "checkpoint"); got != want {
		t.Errorf("Checkpoints() = %s, want %s", got, want)
	}
}
