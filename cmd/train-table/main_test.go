package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/densityrun"
)

// TestParseFlags: the defaults, the column options, and bad values named
// by flag — the command's own and the run layer's, explained as flags.
func TestParseFlags(t *testing.T) {
	o, _, err := parseFlags([]string{"-data", "/x/penguins.csv.gz", "-column", "month=categorical:cyclical:Jan, Feb,Mar", "-column", "year=numeric", "-drop", "id, row", "-missing", "drop"})
	if err != nil {
		t.Fatal(err)
	}
	month := o.Read.Columns["month"]
	if o.Out != "runs/table-penguins" || !slices.Equal(o.Methods, []string{"med", "mcd"}) || month.Kind != table.Categorical || month.Structure != table.Cyclical ||
		!slices.Equal(month.Order, []string{"Jan", "Feb", "Mar"}) || o.Read.Columns["year"].Kind != table.Numeric || !slices.Equal(o.Read.Drop, []string{"id", "row"}) || o.Read.Missing != "drop" {
		t.Errorf("options %+v", o)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-column", "month"}, `invalid value "month" for flag -column`},
		{[]string{"-column", "month=word"}, `kind "word"`},
		{[]string{"-data", "x.csv", "extra"}, "unexpected arguments"},
		{[]string{"-data", "x.csv", "-ais-chains", "1"}, "flag -ais-chains 1: must be ≥ 2"},
		{[]string{"-data", "x.csv", "-ais-temperatures", "1"}, "flag -ais-temperatures 1: must be ≥ 2"},
	} {
		if _, _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-data", "x.csv", "-methods", "ed"}, `flag -methods: "ed"`},
		{[]string{"-data", "x.csv", "-steps", "-1", "-out", "/tmp/never"}, "densityrun: steps -1"},
		{[]string{"-data", "/no/such.csv"}, "flag -data: vectors: open /no/such.csv"},
		{[]string{"-data", "x.csv", "-missing", "zero"}, `flag -missing "zero": want "error" or "drop"`},
	} {
		o, flags, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := densityrun.TrainTable(o); err == nil || !strings.Contains(flags.Explain(err).Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, flags.Explain(err), tc.want)
		}
	}
}

// TestResumesARunOfAnEarlierVersion: a run folder that train-table wrote
// at commit 3fc614c, before toy_mixed_t_scale (testdata/make-fixture.sh: a
// tiny ED model of mixed.csv on SimpleGo, stopped at step 4), resumes
// with today's command to the losses of that version's run trained to
// step 8 without stopping.
func TestResumesARunOfAnEarlierVersion(t *testing.T) {
	fixture := filepath.Join("testdata", "run-3fc614c")
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	// A loss no run computes, at step 2: a run that went on from its
	// checkpoint keeps the losses before it, one that started over would
	// write them anew.
	metrics := filepath.Join(out, "med", "metrics.jsonl")
	stopped := readLosses(t, metrics)
	stopped[1] = 123
	writeLosses(t, metrics, stopped)
	o, flags, err := parseFlags([]string{"-backend", "go", "-data", filepath.Join("testdata", "mixed.csv"),
		"-column", "size=categorical:ordinal:small,medium,large", "-methods", "med", "-set", "toy_mlp_hidden=8",
		"-batch", "16", "-checkpoint-every", "2", "-samples", "5", "-sweeps", "2", "-steps", "8", "-loglik=false", "-out", out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := densityrun.TrainTable(o); err != nil {
		t.Fatal(flags.Explain(err))
	}
	got, want := readLosses(t, metrics), readLosses(t, filepath.Join(fixture, "uninterrupted-metrics.jsonl"))
	if len(got) != 8 || !slices.Equal(got[:4], stopped) {
		t.Fatalf("losses %v, want the stopped run's %v and four more", got, stopped)
	}
	for i := 4; i < 8; i++ {
		if math.Abs(got[i]-want[i]) > 1e-6*math.Abs(want[i]) {
			t.Errorf("step %d: resumed loss %v, uninterrupted at 3fc614c %v", i+1, got[i], want[i])
		}
	}
}

// readLosses reads the losses of a metrics.jsonl, steps 1, 2, … in order.
func readLosses(t *testing.T, path string) []float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var losses []float64
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m struct {
			Step int     `json:"step"`
			Loss float64 `json:"loss"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Step != i+1 {
			t.Fatalf("%s line %d: %q (%v), want step %d", path, i+1, line, err, i+1)
		}
		losses = append(losses, m.Loss)
	}
	return losses
}

// writeLosses writes losses as a metrics.jsonl of steps 1, 2, ….
func writeLosses(t *testing.T, path string, losses []float64) {
	t.Helper()
	var b strings.Builder
	for i, l := range losses {
		fmt.Fprintf(&b, "{\"step\":%d,\"loss\":%v}\n", i+1, l)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
