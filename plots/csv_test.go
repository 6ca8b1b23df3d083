package plots

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestWriteCSVRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		rows   [][]float64
	}{
		{"header only", []string{"step", "loss"}, nil},
		{"ordinary values", []string{"step", "loss"}, [][]float64{{0, 1.5}, {1, 0.1}, {2, -3e-7}}},
		{"extreme values", []string{"a", "b", "c"}, [][]float64{
			{math.NaN(), math.Inf(1), math.Inf(-1)},
			{math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3},
		}},
		{"header needing quotes", []string{"x, y", `say "hi"`}, [][]float64{{1, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "curve.csv")
			if err := WriteCSV(path, tc.header, tc.rows); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			records, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(records) != 1+len(tc.rows) {
				t.Fatalf("read %d records, want %d", len(records), 1+len(tc.rows))
			}
			if !slices.Equal(records[0], tc.header) {
				t.Errorf("header = %q, want %q", records[0], tc.header)
			}
			for i, row := range tc.rows {
				for j, want := range row {
					got, err := strconv.ParseFloat(records[i+1][j], 64)
					if err != nil {
						t.Fatalf("row %d col %d: %v", i, j, err)
					}
					if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
						t.Errorf("row %d col %d = %v, want %v", i, j, got, want)
					}
				}
			}
		})
	}
}

func TestWriteCSVRejectsRaggedRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.csv")
	err := WriteCSV(path, []string{"a", "b"}, [][]float64{{1, 2}, {3}})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("error = %v, want one naming %s and row 1", err, path)
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		t.Errorf("file %s exists after a rejected write", path)
	}
}
