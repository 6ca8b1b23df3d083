package evalfile

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The readers of files users hand eval-lebm and compare-evals, fuzzed:
// any bytes give a value or an error naming the file, never a panic, and
// what a reader accepts survives a round trip through its writer. Seeds
// come from the writers; `go test` runs them, `go test -fuzz` fuzzes.

// fuzzFile writes data to a file in a fresh folder and returns its path.
func fuzzFile(t *testing.T, name string, data []byte) string {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func checkNamesFile(t *testing.T, err error, path string) {
	t.Helper()
	if err != nil && !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file %s", err, path)
	}
}

func FuzzReadReport(f *testing.F) {
	seed, err := json.Marshal(Report{Checkpoint: "runs/x/checkpoint", Data: "fashion-mnist", Method: "ed", Step: 5616,
		ReconstructionMSE: 0.02, AnomalyHeldOut: 1, AnomalyAUPRCs: []float64{0.4, 0.5}, AnomalyAUPRC: 0.45})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"checkpoint": "c", "unknown": 1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := fuzzFile(t, ReportFile, data)
		r, err := ReadReport(path)
		checkNamesFile(t, err, path)
		if err != nil {
			return
		}
		again, err := json.Marshal(r)
		if err != nil {
			// Only non-finite numbers fail to encode, and JSON has none.
			t.Fatalf("accepted report does not encode: %v", err)
		}
		r2, err := ReadReport(fuzzFile(t, ReportFile, again))
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Errorf("round trip: %+v, then %+v (%v)", r, r2, err)
		}
	})
}

func FuzzReadAnomalyScores(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "scores.csv")
	if err := WriteAnomalyScores(seed, []bool{true, false, true}, [][]float64{{1, 2, 3}, {-0.5, 4e10, 7}}); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("image,anomalous,score_0\n0,2,1\n"))
	f.Add([]byte("image,anomalous,score_0\n0,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := fuzzFile(t, "scores.csv", data)
		labels, columns, err := ReadAnomalyScores(path)
		checkNamesFile(t, err, path)
		if err != nil {
			return
		}
		for _, c := range columns {
			if len(c) != len(labels) {
				t.Fatalf("%d labels but a column of %d scores", len(labels), len(c))
			}
		}
		again := filepath.Join(t.TempDir(), "again.csv")
		if err := WriteAnomalyScores(again, labels, columns); err != nil {
			t.Fatal(err)
		}
		labels2, columns2, err := ReadAnomalyScores(again)
		if err != nil || !reflect.DeepEqual(labels, labels2) || !sameFloats(columns, columns2) {
			t.Errorf("round trip changed the scores (%v)", err)
		}
	})
}

// sameFloats compares score columns, NaN equal to NaN.
func sameFloats(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if x, y := a[i][j], b[i][j]; x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				return false
			}
		}
	}
	return true
}

func FuzzLoadStats(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "stats.bin")
	if err := SaveStats(seed, []float64{1, -2}, mat.NewSymDense(2, []float64{2, 0.5, 0.5, 3})); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)-3])
	f.Fuzz(func(t *testing.T, data []byte) {
		path := fuzzFile(t, "stats.bin", data)
		mu, sigma, err := LoadStats(path)
		checkNamesFile(t, err, path)
		if err != nil {
			return
		}
		again := filepath.Join(t.TempDir(), "again.bin")
		if err := SaveStats(again, mu, sigma); err != nil {
			t.Fatal(err)
		}
		if written, err := os.ReadFile(again); err != nil || string(written) != string(data) {
			t.Errorf("accepted statistics written back differ from the file (%v)", err)
		}
	})
}
