package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/sampling"
)

// TestParseFlags: the defaults as densityrun takes them (the batch left
// to it, fitted to a small table, unless given), the run folder named
// after the file, and bad values named by flag.
func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-data", "/some/where/wine_data.csv", "-methods", "ed, dsm"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Batch != 0 || o.Out != "runs/vectors-wine_data" || len(o.Methods) != 2 || o.Methods[1] != "dsm" ||
		o.AIS.Temperatures != sampling.DefaultAISTemperatures || o.AISBase != densityrun.AISBaseData || o.ConstantColumns != densityrun.ConstantSetAside {
		t.Errorf("defaults: %+v", o)
	}
	if o, err := parseFlags([]string{"-data", "x.csv", "-batch", "64"}); err != nil || o.Batch != 64 {
		t.Errorf("-batch 64: batch %d, %v", o.Batch, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-data", "x.csv", "-batch", "0"}, "flag -batch 0: must be ≥ 1"},
		{[]string{"-data", "x.csv", "-ais-temperatures", "1"}, "flag -ais-temperatures 1: must be ≥ 2"},
		{[]string{"-data", "x.csv", "-test-fraction", "1"}, "flag -test-fraction 1"},
		{nil, "flag -data: required"},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

// TestRunLayerErrorsNameTheFlags: densityrun names its options; the
// command explains them as the flags that set them.
func TestRunLayerErrorsNameTheFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-data", "x.csv", "-methods", "mle"}, `flag -methods: "mle"`},
		{[]string{"-data", "x.csv", "-base-std", "-1"}, "flag -base-std -1"},
		{[]string{"-data", "x.csv", "-ais-base", "uniform"}, `flag -ais-base "uniform": want "data" or "isotropic"`},
		{[]string{"-data", "x.csv", "-constant-columns", "drop"}, `flag -constant-columns "drop": want "set-aside" (the default) or "model"`},
		{[]string{"-data", "x.csv", "-ais-kernel", "gibbs"}, `AIS kernel "gibbs": want "mala" or "hmc"`},
		{[]string{"-data", "x.csv", "-ais-metric", "dense"}, `AIS metric "dense"`},
		{[]string{"-data", "x.csv", "-ais-spacing", "geometric"}, `AIS spacing "geometric"`},
		{[]string{"-data", "x.csv", "-ais-transitions", "-1"}, "AIS transitions = -1"},
		{[]string{"-data", "x.csv", "-ais-step", "NaN"}, "AIS step size = NaN"},
	} {
		o, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		o.Out = t.TempDir()
		_, err = densityrun.Train(o)
		if err = optionFlags.Explain(err); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

// TestAWordPointsToTrainTable: a file with a word among its numbers is
// refused naming line and column, and the error says which command reads
// tables with categories.
func TestAWordPointsToTrainTable(t *testing.T) {
	data := filepath.Join(t.TempDir(), "mixed.csv")
	if err := os.WriteFile(data, []byte("size,colour\n1.5,red\n2,blue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-data", data})
	if err != nil {
		t.Fatal(err)
	}
	o.Out = t.TempDir()
	_, err = densityrun.Train(o)
	if err = pointToTables(err); err == nil || !strings.Contains(err.Error(), `line 2, column 2 (colour): "red" is not a number`) || !strings.Contains(err.Error(), "go run ./cmd/train-table") {
		t.Errorf("error %v, want one naming line 2, column 2 and train-table", err)
	}
	if err := pointToTables(errors.New("other")); err.Error() != "other" {
		t.Errorf("another error became %v", err)
	}
}
