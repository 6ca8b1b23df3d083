package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/training"
)

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"-data", "svhn"}, "flag -data svhn"},
		{[]string{"-data", "omniglot"}, "flag -data-dir"},
		{[]string{"-binarize", "half"}, "flag -binarize half"},
		{[]string{"-steps", "0"}, "flag -steps 0"},
		{[]string{"-ais-chains", "1"}, "flag -ais-chains 1"},
		{[]string{"-methods", "bcd", "-set", "toy_gwg_steps=0"}, "Gibbs-with-gradients steps per step = 0"},
		{[]string{"-methods", "ed"}, `flag -methods: "ed"`},
		{[]string{"-data", "omniglot", "-data-dir", "/nonexistent"}, "flag -data-dir /nonexistent"},
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

// tinyRun is the flags of a run small enough for a test, on SimpleGo: the
// run's plumbing is under test here (density's tests check the numbers on
// each backend), and XLA would spend most of the test compiling.
func tinyRun(out, steps string) []string {
	return []string{"-backend", "go", "-train-size", "60", "-test-size", "20", "-batch", "20",
		"-steps", steps, "-hidden", "8", "-ais-chains", "4", "-ais-temperatures", "4", "-set", "toy_gwg_steps=2;toy_bed_m=4", "-out", out}
}

// A short run writes the pictures and the table; stopped after 4 steps
// and started again to 7, CD trains as a run that went to 7 at once: the
// losses of every step are equal (dynamic binarisation, reshuffled epochs
// of 3 batches and the persistent chains included).
func TestShortRunAndResume(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	whole, resumed := t.TempDir(), t.TempDir()
	// The resumed run trains CD alone: its chains are the state to resume.
	onlyCD := []string{"-methods", "bcd"}
	for _, args := range [][]string{tinyRun(whole, "7"), append(tinyRun(resumed, "4"), onlyCD...), append(tinyRun(resumed, "7"), onlyCD...)} {
		o, err := parseFlags(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"data.png", "bed/samples.png", "bcd/samples.png", "bed/losses.png"} {
		f, err := os.Open(filepath.Join(whole, name))
		if err != nil {
			t.Fatal(err)
		}
		_, err = png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	results, err := os.ReadFile(filepath.Join(whole, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| bed | 7 |", "| bcd | 7 |"} {
		if !strings.Contains(string(results), row) {
			t.Errorf("results.md lacks %q:\n%s", row, results)
		}
	}
	want, got := loggedLosses(t, filepath.Join(whole, "bcd")), loggedLosses(t, filepath.Join(resumed, "bcd"))
	if len(want) != 8 {
		t.Errorf("bcd: the metrics log has %d steps, want 7", len(want)-1)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bcd: losses after a stop at step 4:\n%v\nwant (uninterrupted):\n%v", got, want)
	}
}

// loggedLosses reads the metrics log of a method's folder as the rows of
// a losses.csv, the format train-binary wrote before the log: a step,loss
// header, then a row per step.
func loggedLosses(t *testing.T, dir string) [][]string {
	t.Helper()
	raw, err := os.ReadFile(training.Folder{Dir: dir}.Metrics())
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]string{{"step", "loss"}}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r densityrun.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, []string{strconv.FormatInt(r.Step, 10), strconv.FormatFloat(r.Loss, 'g', -1, 64)})
	}
	return rows
}

// fixtureFlags are the flags of testdata/make-fixture.sh's runs, to step 6,
// writing into out.
func fixtureFlags(out string) []string {
	return []string{"-backend", "go", "-methods", "bed", "-hidden", "8", "-batch", "16", "-train-size", "64",
		"-test-size", "32", "-ais-chains", "8", "-ais-temperatures", "10", "-steps", "6", "-out", out}
}

// TestResumesARunOfAnEarlierVersion: a run folder that train-binary wrote
// at commit 98af0f0 (testdata/make-fixture.sh: a tiny Bernoulli-ED model
// on SimpleGo, stopped at step 3) resumes with today's command to exactly
// the losses of that version's run trained to step 6 without stopping,
// and to the test log-likelihood of today's.
func TestResumesARunOfAnEarlierVersion(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	fixture := filepath.Join("testdata", "run-98af0f0")
	out := t.TempDir()
	if err := os.CopyFS(filepath.Join(out, "bed"), os.DirFS(filepath.Join(fixture, "bed"))); err != nil {
		t.Fatal(err)
	}
	// A loss no run computes, at step 1: a run that went on from its
	// checkpoint keeps the losses before it (read from the losses.csv of
	// that version into the metrics log), one that started over (the same
	// values, from the same seed) would write them anew.
	losses := filepath.Join(out, "bed", "losses.csv")
	stopped := testutil.ReadCSV(t, losses)
	stopped[1][1] = "123"
	testutil.WriteCSV(t, losses, stopped)
	o, err := parseFlags(fixtureFlags(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	got, want := loggedLosses(t, filepath.Join(out, "bed")), testutil.ReadCSV(t, filepath.Join(fixture, "uninterrupted-losses.csv"))
	if len(got) != 7 || !reflect.DeepEqual(got[:4], stopped) || !reflect.DeepEqual(got[4:], want[4:]) {
		t.Errorf("losses %v; want the stopped run's %v, then the uninterrupted run's %v", got, stopped, want[4:])
	}
	// The results row up to its last cell, this run's training seconds.
	resultRow := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "| bed |") {
				return line[:strings.LastIndex(strings.TrimSuffix(line, " |"), "|")]
			}
		}
		t.Fatalf("%s has no bed row", path)
		return ""
	}
	// The annealed importance sampler changed after 98af0f0 (its pilot
	// run, checks and reverse run), so the resumed run's results row is
	// held against today's uninterrupted run of the same flags.
	fresh := t.TempDir()
	if o, err = parseFlags(fixtureFlags(fresh)); err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	if got, want := resultRow(filepath.Join(out, "results.md")), resultRow(filepath.Join(fresh, "results.md")); got != want {
		t.Errorf("results row %q, uninterrupted %q", got, want)
	}
}

// TestStopSignalSavesAndResumes: a stop that arrives during the first step
// ends the run after it, checkpointed, with training.ErrStopped; run
// again, it goes on to the losses of a run that never stopped (the
// fixture of TestResumesARunOfAnEarlierVersion, on the same backend).
func TestStopSignalSavesAndResumes(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	runWith := func(out string, stop chan os.Signal) error {
		o, err := parseFlags(fixtureFlags(out))
		if err != nil {
			t.Fatal(err)
		}
		o.stop = stop
		return run(o)
	}
	out := t.TempDir()
	testutil.StopThenResume(t, training.ErrStopped, func(stop chan os.Signal) error { return runWith(out, stop) })
	got := loggedLosses(t, filepath.Join(out, "bed"))
	want := testutil.ReadCSV(t, filepath.Join("testdata", "run-98af0f0", "uninterrupted-losses.csv"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("losses of the stopped and resumed run %v, of one that never stopped %v", got, want)
	}
}
