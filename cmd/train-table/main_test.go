package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/densityrun"
)

// TestParseFlags: the defaults, the column options, and bad values named
// by flag — the command's own and the run layer's, explained as flags.
func TestParseFlags(t *testing.T) {
	o, _, err := parseFlags([]string{"-data", "/x/penguins.csv.gz", "-column", "month=categorical:cyclical:Jan,Feb,Mar", "-column", "year=numeric", "-drop", "id,row", "-missing", "drop"})
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
