package densityrun

import (
	"os"
	"path/filepath"
	"slices"
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

// TestPointBatchesAugmentByStep: the augment sees each batch with its
// step (counted across epochs), alters a copy (the points stay as they
// were), and a stream sought to a step serves what an uninterrupted one
// does there.
func TestPointBatchesAugmentByStep(t *testing.T) {
	points := make([]float32, 10*2)
	for i := range points {
		points[i] = float32(i)
	}
	original := slices.Clone(points)
	shift := func(batch []float32, step int) {
		for i := range batch {
			batch[i] += 1000 * float32(step+1)
		}
	}
	yield := func(p *pointBatches) []float32 {
		_, inputs, _, err := p.Yield()
		if err != nil {
			t.Fatal(err)
		}
		return inputs[0].Value().([][]float32)[0]
	}
	whole, err := newPointBatches(points, 2, 3, 7) // 3 batches an epoch
	if err != nil {
		t.Fatal(err)
	}
	whole.augment = shift
	var served [][]float32
	for step := range 7 {
		row := yield(whole)
		if want := 1000 * float32(step+1); row[0] < want || row[0] >= want+20 {
			t.Errorf("step %d: first value %v, want %v plus a point's", step, row[0], want)
		}
		served = append(served, row)
	}
	if !slices.Equal(points, original) {
		t.Error("the augment altered the points themselves")
	}
	resumed, _ := newPointBatches(points, 2, 3, 7)
	resumed.augment = shift
	resumed.seek(4)
	if got := yield(resumed); !slices.Equal(got, served[4]) {
		t.Errorf("sought to step 4: %v, want %v", got, served[4])
	}
}
