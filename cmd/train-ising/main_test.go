package main

import (
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/training"
)

func quick(out string) options {
	return options{side: 3, sigma: 0.3, n: 2000, dataSweeps: 50, steps: 150, batch: 100, lr: 0.03, epsilon: 0.1, m: 8, w: 1,
		cdSweeps: 1, evalEvery: 50, seed: 1, methods: "ed,cd", backend: testutil.BackendName(), out: out}
}

// A short run of both methods writes the table (3 measurements each, the
// RMSE falling from J = 0's 0.2), the curves and the couplings picture:
// 9 rows of the truth and two learned 9×9 matrices, with grey columns
// between them.
func TestTrainsBothMethodsAndWritesTheOutputs(t *testing.T) {
	out := t.TempDir()
	if err := run(quick(out)); err != nil {
		t.Fatal(err)
	}
	rows := testutil.ReadCSV(t, filepath.Join(out, "rmse.csv"))
	if len(rows) != 1+2*3 || !strings.HasPrefix(rows[0][0], "method (ed=0,cd=1)") {
		t.Fatalf("rmse.csv: %v, want a header naming the methods and 3 rows per method", rows)
	}
	for _, row := range rows[1:] {
		rmse, err := strconv.ParseFloat(row[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		if row[1] == "150" && !(rmse < 0.13) {
			t.Errorf("method %s: RMSE %v after 150 steps, want < 0.13 (0.2 for J = 0; measured 0.106)", row[0], rmse)
		}
	}
	for _, name := range []string{"rmse.png", "rmse-time.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	pic, err := os.Open(filepath.Join(out, "couplings.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pic.Close()
	img, err := png.Decode(pic)
	if err != nil {
		t.Fatal(err)
	}
	scale := 240 / 9
	if b := img.Bounds(); b.Dx() != (3*9+2)*scale || b.Dy() != 9*scale {
		t.Errorf("couplings.png is %v, want %d×%d (three 9×9 panels and two separators at %d pixels a cell)", b, (3*9+2)*scale, 9*scale, scale)
	}
}

func TestFlagErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		edit    func(*options)
		mention string
	}{
		{func(o *options) { o.side = 2 }, "flag -side 2"},
		{func(o *options) { o.n = 50 }, "flag -n 50"},
		{func(o *options) { o.epsilon = 1 }, "flag -ed-epsilon 1"},
		{func(o *options) { o.cdSweeps = 0 }, "flag -cd-sweeps 0"},
		{func(o *options) { o.l1 = -1 }, "flag -l1 -1"},
		{func(o *options) { o.methods = "ed,sm" }, `flag -methods ed,sm: method "sm"`},
	} {
		out := filepath.Join(t.TempDir(), "run")
		o := quick(out)
		c.edit(&o)
		if err := run(o); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("error %v, want one mentioning %q", err, c.mention)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the output folder was created", c.mention)
		}
	}
}

// TestStopSignalSavesAndResumes: a stop during the first step ends the run
// after it, checkpointed, with training.ErrStopped; run again, it ends
// with the RMSE curve of a run that never stopped (CD's persistent chains
// and the random stream resumed with the couplings). SimpleGo: the run's
// plumbing is under test, where XLA would spend the time compiling.
func TestStopSignalSavesAndResumes(t *testing.T) {
	runWith := func(out string, stop chan os.Signal) error {
		o := quick(out)
		o.backend, o.steps, o.stop = "go", 60, stop
		return run(o)
	}
	curve := func(out string) [][]string {
		rows := testutil.ReadCSV(t, filepath.Join(out, "rmse.csv"))
		for _, row := range rows {
			row[2] = "" // the training seconds differ
		}
		return rows
	}
	straight, resumed := t.TempDir(), t.TempDir()
	if err := runWith(straight, nil); err != nil {
		t.Fatal(err)
	}
	testutil.StopThenResume(t, training.ErrStopped, func(stop chan os.Signal) error { return runWith(resumed, stop) })
	if got, want := curve(resumed), curve(straight); !reflect.DeepEqual(got, want) || len(want) != 1+2*2 {
		t.Errorf("RMSE curve of the stopped and resumed run %v, of one that never stopped %v (want 2 rows a method)", got, want)
	}
}
