package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/training"
)

func TestBadFlagsAreClearErrors(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		mention string
	}{
		{"t = 0", []string{"-ed-t", "0"}, "t (perturbation variance) = 0"},
		{"t < 0", []string{"-ed-t", "-2"}, "= -2"},
		{"M < 1", []string{"-ed-m", "0"}, "M = 0"},
		{"w < 0", []string{"-ed-w", "-0.5"}, "w = -0.5"},
		{"unknown data set", []string{"-data", "spiral9"}, `"spiral9"`},
		{"unknown method", []string{"-methods", "ed,mle"}, `"mle"`},
		{"binary method", []string{"-methods", "bed"}, "method bed is for binary data"},
		{"bad hidden widths", []string{"-hidden", "128,x"}, "-hidden"},
		{"unknown setting", []string{"-set", "toy_depth=3"}, "toy_depth"},
		{"invalid setting", []string{"-set", "toy_ed_m=0"}, "M = 0"},
		{"method by -set", []string{"-methods", "ed", "-set", "toy_method=cd"}, "-methods"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseFlags(append(c.args, "-backend", testutil.BackendName(), "-out", t.TempDir()))
			if err == nil {
				err = run(o)
			}
			if err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %v, want one mentioning %q", err, c.mention)
			}
		})
	}
}

// A learning rate that blows the energy up must stop training with an error
// naming the step, not continue on NaN.
func TestDivergingRunStopsWithAnError(t *testing.T) {
	o, err := parseFlags([]string{"-backend", testutil.BackendName(), "-methods", "ed", "-lr", "1e30", "-steps", "50", "-out", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	err = run(o)
	if !errors.Is(err, density.ErrNonFinite) || !strings.Contains(err.Error(), "step ") {
		t.Errorf("run with lr 1e30: error %v, want a non-finite-loss error naming the step", err)
	}
}

// A short run writes every picture, the curves and the held-out
// log-likelihoods. SimpleGo: the run's outputs are under test here
// (density's and densityrun's tests check the numbers on each backend),
// and XLA would spend most of the test compiling.
func TestShortRunWritesPictures(t *testing.T) {
	out := t.TempDir()
	o, err := parseFlags([]string{"-backend", "go", "-methods", "ed,sm", "-steps", "20", "-eval-every", "10",
		"-eval-n", "200", "-grid", "20", "-samples", "100", "-sample-steps", "5", "-ais-chains", "16", "-ais-temperatures", "10", "-test-n", "100", "-out", out})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ed/energy.png", "ed/density.png", "ed/samples.png", "ed/mse.csv", "ed/metrics.jsonl", "sm/samples.png", "mse.csv", "mse.png"} {
		if _, err := os.Stat(filepath.Join(out, "25gaussians", name)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(out, "25gaussians", "mse.csv"))
	if lines := strings.Count(string(csv), "\n"); lines != 3 {
		t.Errorf("mse.csv has %d lines, want a header and 2 evaluations:\n%s", lines, csv)
	}
	// The held-out log-likelihoods (densityrun's tests check the numbers):
	// a row a method, the data's own value beside each.
	rows := testutil.ReadCSV(t, filepath.Join(out, "25gaussians", "loglik.csv"))
	if len(rows) != 3 || rows[1][0] != "ed" || rows[2][0] != "sm" || rows[1][4] == "" || rows[1][4] != rows[2][4] {
		t.Errorf("loglik.csv: %v, want rows for ed and sm with the same exact value", rows)
	}
}

// A run stopped at step 20 and started again to step 30 ends exactly as a
// run of 30 steps: same log-density curve, same state.
func TestResumedRunMatchesUninterruptedRun(t *testing.T) {
	args := func(out, steps string) []string {
		return []string{"-backend", testutil.BackendName(), "-methods", "ed", "-steps", steps, "-eval-every", "10",
			"-eval-n", "200", "-grid", "10", "-samples", "50", "-sample-steps", "2", "-ais-chains", "0", "-out", out}
	}
	runArgs := func(a []string) {
		t.Helper()
		o, err := parseFlags(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(o); err != nil {
			t.Fatal(err)
		}
	}
	straight, resumed := t.TempDir(), t.TempDir()
	runArgs(args(straight, "30"))
	runArgs(args(resumed, "20"))
	runArgs(args(resumed, "30"))
	read := func(out string) string {
		data, err := os.ReadFile(filepath.Join(out, "25gaussians", "ed", "mse.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if a, b := read(straight), read(resumed); a != b || strings.Count(a, "\n") != 4 {
		t.Errorf("uninterrupted curve:\n%s\nresumed curve:\n%s\nwant the same 3 evaluations", a, b)
	}
	// Other settings in the same folder are refused, naming them: the
	// model's (a flag or -set) and the run's.
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{[]string{"-ed-m", "8"}, "toy_ed_m=8"},
		{[]string{"-set", "toy_ed_w=0.5;learning_rate=0.01"}, "learning_rate=0.01, toy_ed_w=0.5"},
		{[]string{"-batch", "64"}, "toy_batch=64"},
	} {
		o, err := parseFlags(append(args(resumed, "40"), tc.extra...))
		if err != nil {
			t.Fatal(err)
		}
		if err := run(o); err == nil || !strings.Contains(err.Error(), "other settings") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("resuming with %q: %v, want a refusal naming %s", tc.extra, err, tc.want)
		}
	}
}

// fixtureFlags are the flags of testdata/make-fixture.sh's runs, to step 8,
// writing into out (and, since the runs of 98af0f0 had none, no
// held-out log-likelihood).
func fixtureFlags(out string) []string {
	return []string{"-backend", "go", "-data", "25gaussians", "-methods", "ed", "-hidden", "8,8", "-batch", "16",
		"-eval-every", "2", "-eval-n", "100", "-grid", "10", "-samples", "10", "-sample-steps", "2", "-steps", "8", "-ais-chains", "0", "-out", out}
}

// TestResumesARunOfAnEarlierVersion: a run folder that train-toy wrote at
// commit 98af0f0 (testdata/make-fixture.sh: a tiny ED model on SimpleGo,
// stopped at step 4) resumes with today's command to exactly the curve of
// that version's run trained to step 8 without stopping.
func TestResumesARunOfAnEarlierVersion(t *testing.T) {
	fixture := filepath.Join("testdata", "run-98af0f0")
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	// A value no run computes, at step 2: a run that went on from its
	// checkpoint keeps the curve before it, one that started over (the same
	// values, from the same seed) would write it anew.
	curve := filepath.Join(out, "25gaussians", "ed", "mse.csv")
	stopped := testutil.ReadCSV(t, curve)
	stopped[1][1] = "123"
	testutil.WriteCSV(t, curve, stopped)
	o, err := parseFlags(fixtureFlags(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	got, want := testutil.ReadCSV(t, curve), testutil.ReadCSV(t, filepath.Join(fixture, "uninterrupted-mse.csv"))
	if len(stopped) != 3 || !reflect.DeepEqual(got[:3], stopped) {
		t.Errorf("the curve up to step 4 became %v, want the stopped run's %v", got, stopped)
	}
	// Today's energy MLP rounds its softplus differently from 98af0f0's
	// (nets.softplus): the same sums, apart in the last float32 bits.
	if !curvesClose(t, got[3:], want[3:], 1e-6) {
		t.Errorf("resumed curve %v, uninterrupted at 98af0f0 %v: want them within 1e-6", got, want)
	}
}

// curvesClose tells whether two CSV curves of (step, value) rows, headers
// first, have the same steps and values within a relative tol.
func curvesClose(t *testing.T, got, want [][]string, tol float64) bool {
	t.Helper()
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if len(got[i]) != 2 || len(want[i]) != 2 || got[i][0] != want[i][0] {
			return false
		}
		if i == 0 && got[0][1] == want[0][1] { // the header
			continue
		}
		g, errG := strconv.ParseFloat(got[i][1], 64)
		w, errW := strconv.ParseFloat(want[i][1], 64)
		if errG != nil || errW != nil || math.Abs(g-w) > tol*math.Abs(w) {
			return false
		}
	}
	return true
}

// TestStopSignalSavesAndResumes: a stop (SIGTERM, Ctrl-C) that arrives
// during the first step ends the run after it with a checkpoint and
// training.ErrStopped; run again, it goes on to exactly the curve of a run
// that never stopped (the settings of TestResumesARunOfAnEarlierVersion's
// fixture).
func TestStopSignalSavesAndResumes(t *testing.T) {
	runWith := func(out string, stop chan os.Signal) error {
		o, err := parseFlags(fixtureFlags(out))
		if err != nil {
			t.Fatal(err)
		}
		o.stop = stop
		return run(o)
	}
	out := t.TempDir()
	testutil.StopThenResume(t, training.ErrStopped, func(stop chan os.Signal) error {
		if stop == nil { // the first run's checkpoint is step 1's
			ckpt := filepath.Join(out, "25gaussians", "ed", "checkpoint")
			if latest, err := checkpoint.Latest(ckpt); err != nil || filepath.Base(latest) != "step-000000001" {
				t.Fatalf("after the stop the checkpoint is %s (%v), want step 1's", latest, err)
			}
		}
		return runWith(out, stop)
	})
	straight := t.TempDir()
	if err := runWith(straight, nil); err != nil {
		t.Fatal(err)
	}
	got := testutil.ReadCSV(t, filepath.Join(out, "25gaussians", "ed", "mse.csv"))
	want := testutil.ReadCSV(t, filepath.Join(straight, "25gaussians", "ed", "mse.csv"))
	if len(want) != 5 || !reflect.DeepEqual(got, want) {
		t.Errorf("curve of the stopped and resumed run %v, of one that never stopped %v", got, want)
	}
}
