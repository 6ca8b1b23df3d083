package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// The list flags keep their defaults until given, read comma-separated
// numbers (spaces allowed), and refuse what is not a list of numbers —
// or, for M, of whole numbers — naming the flag and the value.
func TestListFlags(t *testing.T) {
	for _, c := range []struct {
		args       []string
		floats     []float64
		ints       []int
		wantErrHas []string
	}{
		{args: nil, floats: []float64{0.1, 1}, ints: []int{1, 4}},
		{args: []string{"-dsm-t", "0.5, 2,3e-2", "-grid-m", "32,1"}, floats: []float64{0.5, 2, 0.03}, ints: []int{32, 1}},
		{args: []string{"-dsm-t", "1,x"}, wantErrHas: []string{"-dsm-t", `"1,x"`, "comma-separated numbers"}},
		{args: []string{"-grid-m", "1.5"}, wantErrHas: []string{"-grid-m", `"1.5"`, "whole numbers"}},
		{args: []string{"-grid-m", ""}, wantErrHas: []string{"-grid-m", "comma-separated numbers"}},
	} {
		fs := flag.NewFlagSet("toy-studies", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		floats := floatsFlag(fs, "dsm-t", []float64{0.1, 1}, "noise scales")
		ints := intsFlag(fs, "grid-m", []int{1, 4}, "values of M")
		err := fs.Parse(c.args)
		if c.wantErrHas != nil {
			for _, part := range c.wantErrHas {
				if err == nil || !strings.Contains(err.Error(), part) {
					t.Errorf("%q: error %v, want one with %s", c.args, err, part)
				}
			}
			continue
		}
		if err != nil || !slices.Equal(*floats, c.floats) || !slices.Equal(*ints, c.ints) {
			t.Errorf("%q: %v and %v (error %v), want %v and %v", c.args, *floats, *ints, err, c.floats, c.ints)
		}
	}
	if _, err := gridValuesFlag("0,y"); err == nil || !strings.Contains(err.Error(), `flag -grid-values "0,y"`) {
		t.Errorf("-grid-values 0,y: error %v, want one naming the flag and value", err)
	}
}
