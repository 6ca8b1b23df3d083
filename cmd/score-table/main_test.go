package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/densityrun"
)

// TestParseFlags: the defaults, the anomalies' list, and bad values named
// by flag — the command's own and the run layer's, explained as flags.
func TestParseFlags(t *testing.T) {
	o, _, err := parseFlags([]string{"-run", "runs/t", "-data", "new.csv", "-label", "fraud", "-anomalies", "yes, maybe"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Method != "med" || o.Label != "fraud" || !slices.Equal(o.Anomalies, []string{"yes", "maybe"}) || o.Read.Missing != "error" || o.Read.Unseen != "error" {
		t.Errorf("options %+v", o)
	}
	if _, _, err := parseFlags([]string{"-run", "r", "extra"}); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("an extra argument: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-data", "new.csv"}, "flag -run: required"},
		{[]string{"-run", "r"}, "flag -data: required"},
		{[]string{"-run", "r", "-data", "new.csv", "-method", "ed"}, `flag -method "ed": want one of [med mcd]`},
		{[]string{"-run", "r", "-data", "new.csv", "-anomalies", "yes"}, "flag -anomalies: given without -label"},
		{[]string{"-run", "r", "-data", "new.csv", "-label", "fraud"}, `flag -anomalies: required with -label "fraud"`},
		{[]string{"-run", "/no/such/run", "-data", "new.csv"}, "flag -run: open /no/such/run/table.json"},
		{[]string{"-run", "/no/such/run", "-data", "new.csv", "-unseen", "skip"}, `flag -unseen "skip": want "error" or "anomalous"`},
		{[]string{"-run", "/no/such/run", "-data", "new.csv", "-missing", "keep"}, `flag -missing "keep": want "error" or "drop"`},
	} {
		o, flags, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := densityrun.ScoreTable(o); err == nil || !strings.Contains(flags.Explain(err).Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, flags.Explain(err), tc.want)
		}
	}
}
