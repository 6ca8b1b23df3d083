package densityrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadCurve: a damaged mse.csv of a toy run written before the
// metrics log, being resumed, gives its points
// up to the step or an error naming it, never a panic.
func FuzzReadCurve(f *testing.F) {
	f.Add([]byte("step,log_density_mse\n1000,0.5\n2000,0.25\n"), int64(1500))
	f.Add([]byte("step,log_density_mse\n1000\n"), int64(5000))
	f.Fuzz(func(t *testing.T, data []byte, upTo int64) {
		path := filepath.Join(t.TempDir(), "mse.csv")
		os.WriteFile(path, data, 0o644)
		points, err := readCurve(path, upTo)
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
		for _, p := range points {
			if p.Step > upTo {
				t.Errorf("step %d kept, beyond %d", p.Step, upTo)
			}
		}
	})
}
