package plots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
)

// TestWritersAtomic runs every writer into a fresh directory (only the
// target must remain) and into unusable directories (the error must name the
// path).
func TestWritersAtomic(t *testing.T) {
	writers := []struct {
		name  string
		write func(path string) error
	}{
		{"WriteImageGrid", func(p string) error { return WriteImageGrid(p, filled(4, 0), 1, 2, 2, 1, 1) }},
		{"WriteImagePairs", func(p string) error { return WriteImagePairs(p, filled(4, 0), filled(4, 1), 1, 2, 2, 1, 1) }},
		{"WriteHeatmap", func(p string) error { return WriteHeatmap(p, []float64{1, 2}, 1, 2, HeatmapOptions{}) }},
		{"WriteScatterDensity", func(p string) error { return WriteScatterDensity(p, []float32{0, 0}, [4]float64{-1, 1, -1, 1}, 4, 2) }},
		{"WriteLinePlot", func(p string) error {
			return WriteLinePlot(p, LinePlot{Series: []Series{{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}}})
		}},
		{"WriteCSV", func(p string) error { return WriteCSV(p, []string{"a"}, [][]float64{{1}}) }},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := w.write(filepath.Join(dir, "out")); err != nil {
				t.Fatalf("writing into a fresh directory: %v", err)
			}
			testutil.AssertOnlyFile(t, dir, "out")

			blocker := filepath.Join(dir, "file")
			if err := os.WriteFile(blocker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{
				filepath.Join(dir, "missing", "out"), // directory does not exist
				filepath.Join(blocker, "out"),        // parent is a regular file
			} {
				err := w.write(bad)
				if err == nil || !strings.Contains(err.Error(), bad) {
					t.Errorf("writing %s: error = %v, want one naming the path", bad, err)
				}
			}
		})
	}
}
