package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
)

// A short DSM study writes one row per t with both methods' log-density
// MSE — finite and positive after two epochs — and the plot; bad flags
// are named.
func TestDSMStudyWritesOneRowPerT(t *testing.T) {
	out := t.TempDir()
	if err := dsmStudy(testutil.Backend(), out, 1, "25gaussians", "0.1,1", 512, 2); err != nil {
		t.Fatal(err)
	}
	rows := testutil.ReadCSV(t, filepath.Join(out, "dsm.csv"))
	if len(rows) != 3 || strings.Join(rows[0], ",") != "t,ed_mse,dsm_mse" || rows[1][0] != "0.1" || rows[2][0] != "1" {
		t.Fatalf("dsm.csv = %v, want a header and rows for t = 0.1 and 1", rows)
	}
	for _, row := range rows[1:] {
		for _, cell := range row[1:] {
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("row %v: MSE %q, want a finite positive number", row, cell)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "dsm.png")); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		data, ts string
		points   int
		mention  string
	}{
		{"spiral9", "1", 512, "-dsm-data"},
		{"25gaussians", "x", 512, "-dsm-t"},
		{"25gaussians", "1", 100, "-dsm-points 100"},
	} {
		if err := dsmStudy(testutil.Backend(), t.TempDir(), 1, c.data, c.ts, c.points, 1); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("dsmStudy(%s, %s, %d): error %v, want one naming %s", c.data, c.ts, c.points, err, c.mention)
		}
	}
}
