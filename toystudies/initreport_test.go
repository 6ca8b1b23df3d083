package toystudies

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes content to dir/rel, making its folders.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The report's table holds each run's last MSE in its implementation's and
// initialisation's column, one value per seed in seed order and their mean;
// PyTorch lines count with or without a curve; every data set and method
// gets its curves picture.
func TestInitReportTableAndCurves(t *testing.T) {
	dir := t.TempDir()
	goCSV := func(last string) string { return "step,log_density_mse\n1000,3.5\n2000," + last + "\n" }
	writeFile(t, dir, "go/pytorch-s1/pinwheel/ed/mse.csv", goCSV("0.25"))
	writeFile(t, dir, "go/pytorch-s2/pinwheel/ed/mse.csv", goCSV("0.75"))
	writeFile(t, dir, "go/xavier-s1/pinwheel/cd/mse.csv", goCSV("4"))
	writeFile(t, dir, "pytorch/pinwheel-pytorch-s1.jsonl",
		`{"impl": "pytorch", "method": "ed", "data": "pinwheel", "init": "pytorch", "seed": 1, "steps": 2000, "logdens_mse_ema": 0.5}`+"\n"+
			`{"impl": "pytorch", "method": "sm", "data": "pinwheel", "init": "pytorch", "seed": 1, "steps": 2000, "logdens_mse_ema": 0.125, "curve": [[1000, 9], [2000, 0.125]]}`+"\n")
	if err := InitReport(dir); err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(dir, "toy-init.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| pinwheel | ed | 0.25 / 0.75 (mean 0.5) | – | 0.5 | – |",
		"| pinwheel | sm | – | – | 0.125 | – |",
		"| pinwheel | cd | – | 4 | – | – |",
	} {
		if !strings.Contains(string(table), row+"\n") {
			t.Errorf("toy-init.md lacks the row\n%s\nin\n%s", row, table)
		}
	}
	if !strings.Contains(string(table), "after 2000 steps") {
		t.Errorf("toy-init.md title does not name the 2000 steps:\n%s", table)
	}
	for _, method := range []string{"ed", "sm", "cd"} {
		if _, err := os.Stat(filepath.Join(dir, "curves-pinwheel-"+method+".png")); err != nil {
			t.Error(err)
		}
	}
}

// Unreadable runs are reported with the file (and line) at fault.
func TestInitReportNamesBadFiles(t *testing.T) {
	tests := []struct {
		name, rel, content, mention string
	}{
		{"csv header", "go/pytorch-s1/pinwheel/ed/mse.csv", "step,loss\n1,2\n", "mse.csv: want a step,log_density_mse header"},
		{"csv value", "go/pytorch-s1/pinwheel/ed/mse.csv", "step,log_density_mse\n1000,x\n", "mse.csv: line 2"},
		{"seed", "go/pytorch-sX/pinwheel/ed/mse.csv", "step,log_density_mse\n1000,1\n", `folder "pytorch-sX"`},
		{"json", "pytorch/pinwheel-pytorch-s1.jsonl", "{\"data\": \"pinwheel\"\n", "pinwheel-pytorch-s1.jsonl: line 1"},
		{"json fields", "pytorch/pinwheel-pytorch-s1.jsonl", `{"data": "pinwheel", "method": "ed"}` + "\n", "line 1: want data, method and logdens_mse_ema"},
		{"empty", "go/README", "", "no runs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, tc.rel, tc.content)
			err := InitReport(dir)
			if err == nil || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("InitReport: error %v, want one mentioning %q", err, tc.mention)
			}
		})
	}
}
