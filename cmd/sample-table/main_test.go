package main

import (
	"maps"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/densityrun"
)

// TestParseFlags: repeated conditions, bad ones named by the flag, and the
// run layer's refusals explained as flags.
func TestParseFlags(t *testing.T) {
	o, _, err := parseFlags([]string{"-run", "runs/t", "-condition", "class=p", "-condition", " odor = n ", "-condition", "age=..30", "-rows", "50"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Run != "runs/t" || o.Method != "med" || o.Rows != 50 || o.Sweeps != 200 || !maps.Equal(o.Conditions, map[string]string{"class": "p", "odor": "n", "age": "..30"}) {
		t.Errorf("options %+v", o)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-condition", "class"}, `invalid value "class" for flag -condition: "class": want COLUMN=CATEGORY`},
		{[]string{"-condition", "class="}, `want COLUMN=CATEGORY`},
		{[]string{"-condition", "class=p", "-condition", "class=e"}, `column "class" already has a condition`},
		{[]string{"-run", "r", "extra"}, "unexpected arguments"},
		{[]string{"-run", "r", "-rows", "0"}, "flag -rows 0: must be ≥ 1"},
		{[]string{"-run", "r", "-sweeps", "-1"}, "flag -sweeps -1: must be ≥ 1"},
	} {
		if _, _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-rows", "5"}, "flag -run"},
		{[]string{"-run", "r", "-method", "ed"}, "flag -method ed: must be one of"},
		{[]string{"-run", "/no/such/run"}, "flag -run /no/such/run: not a train-table run folder"},
	} {
		o, flags, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := densityrun.SampleTable(o); err == nil || !strings.Contains(flags.Explain(err).Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.args, flags.Explain(err), tc.want)
		}
	}
}
