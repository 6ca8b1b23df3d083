package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/lebm"
)

// tableRows returns the cells of the Markdown table rows of text whose
// first cell is first.
func tableRows(text, first string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) > 1 && cells[0] == first {
			rows = append(rows, cells)
		}
	}
	return rows
}

func number(t *testing.T, cell string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		t.Fatalf("cell %q: %v", cell, err)
	}
	return v
}

// TestBenchTables runs the benchmark on a small shape and checks its
// tables: one row per method and one sampler row, the work from the FLOP
// model, and rates consistent with the printed times and the peak. On
// SimpleGo: the tables are under test, whatever the backend, and XLA
// would spend the test compiling (27 s against 4).
func TestBenchTables(t *testing.T) {
	out := filepath.Join(t.TempDir(), "speed.md")
	var printed bytes.Buffer
	args := []string{"-backend", "go", "-shapes", "mnist", "-methods", "ed,cd", "-batch", "2",
		"-iters", "1", "-prior-iters", "1", "-peak-tflops", "0.5", "-out", out}
	if err := run(args, &printed); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != printed.String() {
		t.Errorf("-out file differs from the printed tables:\n%s\n---\n%s", written, printed.String())
	}
	cfg, err := lebm.DefaultConfig("mnist")
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(printed.String(), "mnist")
	if len(rows) != 3 {
		t.Fatalf("%d mnist rows, want 2 methods + 1 sampler row:\n%s", len(rows), printed.String())
	}
	// | shape | method | s | s first | GFLOP | TFLOP/s | % of peak | s prior | ÷ CD |
	// CD is measured and printed first, whatever the order of -methods.
	for i, method := range []string{"cd", "ed"} {
		row := rows[i]
		if len(row) != 9 || row[1] != method {
			t.Fatalf("row %v: want 9 cells for %s", row, method)
		}
		cfg.Method = method
		flops, err := cfg.TrainingFLOPs(2)
		if err != nil {
			t.Fatal(err)
		}
		if row[4] != gflop(flops) {
			t.Errorf("%s: GFLOP cell %s, the model's %s", method, row[4], gflop(flops))
		}
		seconds, tflops, percent := number(t, row[2]), number(t, row[5]), number(t, row[6])
		// The first iteration compiles the step, then runs it once. The cell
		// keeps one decimal, and on SimpleGo (nothing to compile) the two are
		// single timings of the same work: allow the rounding and 20 % noise.
		if first := number(t, row[3]); first+0.05+0.2*seconds < seconds {
			t.Errorf("%s: first iteration %g s, shorter than a compiled one (%g s)", method, first, seconds)
		}
		// The cells are rounded (3 decimals, 3 digits): allow their rounding.
		if want := flops / seconds / 1e12; math.Abs(tflops-want) > 0.01*want+0.0005/seconds*want {
			t.Errorf("%s: %g TFLOP/s, but %s GFLOP in %s s is %g", method, tflops, row[4], row[2], want)
		}
		if want := 100 * tflops / 0.5; math.Abs(percent-want) > 0.01*want+0.05 {
			t.Errorf("%s: %g %% of 0.5 TFLOP/s, want %g", method, percent, want)
		}
	}
	if rows[0][8] != "1.000" {
		t.Errorf("CD's prior-update ratio to itself is %s, want 1.000", rows[0][8])
	}
	// The ratio is of the unrounded times; the cells keep 5 decimals of them
	// and 3 of the ratio.
	edPrior, cdPrior := number(t, rows[1][7]), number(t, rows[0][7])
	want := edPrior / cdPrior
	if ratio := number(t, rows[1][8]); math.Abs(ratio-want) > want*(5e-6/edPrior+5e-6/cdPrior)+5e-4 {
		t.Errorf("ED's prior-update ratio %g, but its %s s over CD's %s s is %g", ratio, rows[1][7], rows[0][7], want)
	}
	// | shape | s gen | s first gen | TFLOP/s | % | s posterior | s first posterior | TFLOP/s | % |
	sampler := rows[2]
	if len(sampler) != 9 {
		t.Fatalf("sampler row %v: want 9 cells", sampler)
	}
	for _, c := range []struct {
		name         string
		timed, first int
	}{{"generation", 1, 2}, {"posterior", 5, 6}} {
		// The first call compiles the chain, then runs it once (rounding and
		// noise allowed as above).
		if timed, first := number(t, sampler[c.timed]), number(t, sampler[c.first]); first+0.05+0.2*timed < timed {
			t.Errorf("%s: first call %g s, shorter than a compiled one (%g s)", c.name, first, timed)
		}
	}
}

// With -training=false the samplers alone are timed: no training table,
// one sampler row per shape.
func TestSamplersAlone(t *testing.T) {
	var printed bytes.Buffer
	args := []string{"-backend", "go", "-shapes", "mnist", "-batch", "2", "-iters", "1", "-training=false"}
	if err := run(args, &printed); err != nil {
		t.Fatal(err)
	}
	rows := tableRows(printed.String(), "mnist")
	if len(rows) != 1 || len(rows[0]) != 7 || strings.Contains(printed.String(), "training iteration") {
		t.Errorf("-training=false printed\n%s\nwant the sampler table alone, one mnist row of 7 cells", printed.String())
	}
}

// TestFlopsOnly checks the -flops-only table against the FLOP model.
func TestFlopsOnly(t *testing.T) {
	var printed bytes.Buffer
	if err := run([]string{"-flops-only", "-shapes", "svhn", "-batch", "128", "-gen-batch", "64"}, &printed); err != nil {
		t.Fatal(err)
	}
	cfg, err := lebm.DefaultConfig("svhn")
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(printed.String(), "svhn")
	if len(rows) != len(lebm.Methods) {
		t.Fatalf("%d svhn rows, want %d:\n%s", len(rows), len(lebm.Methods), printed.String())
	}
	for i, method := range lebm.Methods {
		cfg.Method = method
		training, err := cfg.TrainingFLOPs(128)
		if err != nil {
			t.Fatal(err)
		}
		prior, err := cfg.PriorUpdateFLOPs(128)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"svhn", method, gflop(training), gflop(prior),
			gflop(cfg.GenerationFLOPs(64, cfg.GenerationLangevin)), gflop(cfg.PosteriorFLOPs(128, cfg.TestPosteriorLangevin))}
		if strings.Join(rows[i], "|") != strings.Join(want, "|") {
			t.Errorf("row %v, want %v", rows[i], want)
		}
	}
}

// TestFlopsOnlyTakesModelSettings checks that the short flags of lebm's
// settings and -set reach the measured models: the FLOPs are those of the
// changed configuration.
func TestFlopsOnlyTakesModelSettings(t *testing.T) {
	var printed bytes.Buffer
	if err := run([]string{"-flops-only", "-shapes", "svhn", "-methods", "ed", "-batch", "8", "-posterior-steps", "7", "-set", "lebm_ed_m=4"}, &printed); err != nil {
		t.Fatal(err)
	}
	cfg, err := lebm.DefaultConfig("svhn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.PosteriorLangevin.Steps, cfg.ED.M = 7, 4
	training, err := cfg.TrainingFLOPs(8)
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(printed.String(), "svhn")
	if len(rows) != 1 || rows[0][2] != gflop(training) {
		t.Errorf("rows %v, want one with %s GFLOP a training iteration (7 posterior steps, M = 4)", rows, gflop(training))
	}
}

// TestFlagErrors checks that bad flags are errors naming them.
func TestFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-batch", "0"}, "-batch 0"},
		{[]string{"-iters", "0"}, "-iters 0"},
		{[]string{"-devices", "3", "-batch", "16"}, "-devices 3, -batch 16"},
		{[]string{"-backend", "go", "-devices", "2", "-batch", "16"}, "flag -devices 2: the backend has 1 device(s)"},
		{[]string{"-flops-only", "-shapes", "imagenet"}, "imagenet"},
		{[]string{"-no-such-flag"}, "no-such-flag"},
		{[]string{"-training=false", "-sampling=false"}, "nothing to time"},
		{[]string{"-flops-only", "-method", "cd"}, "measures each of -methods"},
		{[]string{"-flops-only", "-set", "lebm_method=sm"}, "measures each of -methods"},
		{[]string{"-flops-only", "-convt-impl", "fft"}, `ConvTImpl = "fft"`},
		{[]string{"-flops-only", "-set", "lebm_ed_m=0"}, "M = 0"},
	}
	for _, c := range cases {
		err := run(c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// TestGFLOPFormat checks the GFLOP cells on hand-written cases.
func TestGFLOPFormat(t *testing.T) {
	cases := map[float64]string{1.2345e9: "1.234", 766.2e9: "766.2", 23143.4e9: "23143", 0.006989e9: "0.006989"}
	for flops, want := range cases {
		if got := gflop(flops); got != want {
			t.Errorf("gflop(%g) = %s, want %s", flops, got, want)
		}
	}
}
