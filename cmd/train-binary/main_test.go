package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
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

// tinyRun is the flags of a run small enough for a test.
func tinyRun(out, steps string) []string {
	return []string{"-backend", testutil.BackendName(), "-train-size", "60", "-test-size", "20", "-batch", "20",
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
	for _, method := range []string{"bcd"} {
		want, err := os.ReadFile(filepath.Join(whole, method, "losses.csv"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(resumed, method, "losses.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(want), "\n"); lines != 8 {
			t.Errorf("%s: losses.csv has %d lines, want a header and 7 steps", method, lines)
		}
		if string(got) != string(want) {
			t.Errorf("%s: losses after a stop at step 4:\n%s\nwant (uninterrupted):\n%s", method, got, want)
		}
	}
}
