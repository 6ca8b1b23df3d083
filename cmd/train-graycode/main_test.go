package main

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/training"
)

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"-steps", "0"}, "flag -steps 0"},
		{[]string{"-hidden", "64,x"}, `invalid value "64,x" for flag -hidden`},
		{[]string{"-set", "toy_bed_epsilon=1.5"}, "ε = 1.5"},
		{[]string{"-set", "toy_method=ed"}, "choose methods with -methods"},
		{[]string{"-methods", "bed,ed"}, `flag -methods: "ed"`},
		{[]string{"-methods", "bcd", "-set", "toy_gibbs_sweeps=0"}, "Gibbs sweeps per step = 0"},
		{[]string{"-data", "spiral9"}, `"spiral9"`},
	} {
		o, err := parseFlags(append(tc.args, "-backend", testutil.BackendName(), "-out", t.TempDir()))
		if err == nil {
			err = run(o)
		}
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%q: error %v, want one mentioning %q", tc.args, err, tc.mention)
		}
	}
}

// A short run writes both heat maps and the MMD table, whose floor (two
// data samples) is below the uniform ceiling.
func TestShortRunWritesPicturesAndTable(t *testing.T) {
	out := t.TempDir()
	// SimpleGo: the run's plumbing and the MMDs' order are under test
	// (density's tests check the numbers on each backend), and XLA would
	// spend most of the test compiling.
	o, err := parseFlags([]string{"-backend", "go", "-data", "8gaussians", "-steps", "20", "-batch", "32",
		"-hidden", "16", "-grid", "20", "-mmd-n", "200", "-out", out})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bed/density.png", "bed/data.png", "bcd/density.png"} {
		f, err := os.Open(filepath.Join(out, "8gaussians", name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() != 400 {
			t.Errorf("%s: %v, width %d; want a 400-pixel PNG (20 cells of 20)", name, err, img.Bounds().Dx())
		}
	}
	table, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		method                         string
		model, gridded, floor, uniform float64
	}
	var rows []result
	for _, line := range strings.Split(string(table), "\n") {
		if strings.HasPrefix(line, "| 8gaussians |") {
			fields := strings.Split(line, "|")
			row := result{method: strings.TrimSpace(fields[2])}
			for i, v := range []*float64{&row.model, &row.gridded, &row.floor, &row.uniform} {
				if _, err := fmt.Sscan(strings.TrimSpace(fields[3+i]), v); err != nil {
					t.Fatal(err)
				}
			}
			rows = append(rows, row)
		}
	}
	if len(rows) != 2 || rows[0].method != "bed" || rows[1].method != "bcd" || !(rows[0].floor < rows[0].gridded && rows[0].gridded < rows[0].uniform) {
		t.Errorf("results.md:\n%s\nwant rows for bed and bcd on 8gaussians: second data sample < data on the cells < uniform", table)
	}
}

// TestStopSignalSavesAndResumes: a stop that arrives during the first step
// ends the run after it, checkpointed, with training.ErrStopped; run
// again, it ends exactly as a run that never stopped: the same losses in
// its metrics log and the same results table.
func TestStopSignalSavesAndResumes(t *testing.T) {
	runWith := func(out string, stop chan os.Signal) error {
		// SimpleGo, as above.
		o, err := parseFlags([]string{"-backend", "go", "-data", "8gaussians", "-methods", "bcd", "-steps", "6", "-batch", "16",
			"-hidden", "8", "-grid", "10", "-mmd-n", "50", "-out", out})
		if err != nil {
			t.Fatal(err)
		}
		o.stop = stop
		return run(o)
	}
	straight, resumed := t.TempDir(), t.TempDir()
	if err := runWith(straight, nil); err != nil {
		t.Fatal(err)
	}
	testutil.StopThenResume(t, training.ErrStopped, func(stop chan os.Signal) error { return runWith(resumed, stop) })
	for _, name := range []string{filepath.Join("8gaussians", "bcd", training.MetricsFile), "results.md"} {
		want, err := os.ReadFile(filepath.Join(straight, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(resumed, name))
		if err != nil {
			t.Fatal(err)
		}
		// The logged step times and the command lines (-out) differ; the
		// losses and the table must not.
		seconds := regexp.MustCompile(`"seconds":[^,}]*|Command: .*`)
		if g, w := seconds.ReplaceAll(got, nil), seconds.ReplaceAll(want, nil); string(g) != string(w) || len(w) == 0 {
			t.Errorf("%s of the stopped and resumed run:\n%s\nof one that never stopped:\n%s", name, g, w)
		}
	}
}
