package flagcheck

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"testing"
)

func TestCheckNamesTheFirstFailingFlag(t *testing.T) {
	for _, c := range []struct {
		name  string
		rules []Rule
		want  string // "" for no error
	}{
		{"all hold", []Rule{{"epochs", 3, true, "≥ 1"}}, ""},
		{"one fails", []Rule{{"epochs", 3, true, "≥ 1"}, {"batch", 0, false, "≥ 1"}}, "flag -batch 0: must be ≥ 1"},
		{"the first of two", []Rule{{"grid", -1, false, "≥ 1"}, {"batch", 0, false, "≥ 1"}}, "flag -grid -1: must be ≥ 1"},
		{"an empty value is quoted", []Rule{{"out", "", false, "a folder"}}, `flag -out "": must be a folder`},
		{"a spaced value is quoted", []Rule{{"out", "my runs", false, "a folder"}}, `flag -out "my runs": must be a folder`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.rules...)
			if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
				t.Errorf("Check: %v, want %q", err, c.want)
			}
		})
	}
}

// settings is a toy command: -mode picks which of -a and -b must be
// positive; -a + -b must stay below 10; -c must be "ok" or it fails with
// an error that already names it.
func settings(args []string) (*flag.FlagSet, error) {
	fs := flag.NewFlagSet("toy", flag.ContinueOnError)
	mode := fs.String("mode", "a", "a or b")
	a := fs.Int("a", 1, "")
	b := fs.Int("b", 1, "")
	c := fs.String("c", "ok", "")
	if err := fs.Parse(args); err != nil {
		return fs, err
	}
	switch {
	case *mode != "a" && *mode != "b":
		return fs, fmt.Errorf("mode %q: want a or b", *mode)
	case *mode == "a" && *a <= 0, *mode == "b" && *b <= 0:
		return fs, errors.New("the mode's count must be positive")
	case *a+*b >= 10:
		return fs, errors.New("a + b must be below 10")
	case *c != "ok":
		return fs, fmt.Errorf("flag -c %s: not ok", *c)
	}
	return fs, nil
}

func TestBlameNamesTheFlagAtFault(t *testing.T) {
	validate := func(args []string) error { _, err := settings(args); return err }
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"one bad flag among good ones", []string{"-b", "2", "-a", "0"}, "flag -a 0: the mode's count must be positive"},
		{"bad only with the kept flag", []string{"-mode", "b", "-a", "0", "-b", "-1"}, "flag -b -1: the mode's count must be positive"},
		{"the kept flag itself", []string{"-mode", "z", "-a", "2"}, `flag -mode z: mode "z": want a or b`},
		{"a combination", []string{"-a", "5", "-b", "5"}, "flags -a, -b together: a + b must be below 10"},
		{"an error that names its flag already", []string{"-c", "bad"}, "flag -c bad: not ok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, err := settings(c.args)
			if err == nil {
				t.Fatal("the toy settings passed")
			}
			got := Blame(fs, err, []string{"mode"}, validate)
			if got.Error() != c.want {
				t.Errorf("Blame: %q, want %q", got, c.want)
			}
		})
	}
}

// TestOptionsAndTheirFlags: a library's option errors name fields; a
// command's Flags rewrite them, where they begin a message or a wrapped
// part of it, as "flag -NAME", elsewhere as "-NAME", leaving options it
// does not know; the result unwraps to the original.
func TestOptionsAndTheirFlags(t *testing.T) {
	err := CheckOptions(Rule{"Epochs", 3, true, "≥ 1"}, Rule{"Batch", 0, false, "≥ 1"})
	if got := fmt.Sprint(err); got != "Options.Batch 0: must be ≥ 1" {
		t.Errorf("CheckOptions: %q", got)
	}
	if got := OptionName("Out", "my runs"); got != `Options.Out "my runs"` {
		t.Errorf("OptionName: %q", got)
	}
	flags := Flags{"Batch": "batch", "ReconN": "recon-n", "Config.Data": "data"}
	sentinel := errors.New("the cause")
	for _, c := range []struct{ in, want string }{
		{"Options.Batch 0: must be ≥ 1", "flag -batch 0: must be ≥ 1"},
		{"lebmeval: Options.Batch 64: larger than the 10 test images to reconstruct (Options.ReconN)", "lebmeval: flag -batch 64: larger than the 10 test images to reconstruct (-recon-n)"},
		{"Options.Config.Data: the checkpoint does not name its data set: give Options.Config.Data", "flag -data: the checkpoint does not name its data set: give -data"},
		{"Options.Seed 3: no flag sets it", "Options.Seed 3: no flag sets it"},
		{"no options here", "no options here"},
	} {
		got := flags.Explain(fmt.Errorf("%s; %w", c.in, sentinel))
		if want := c.want + "; the cause"; got.Error() != want || !errors.Is(got, sentinel) {
			t.Errorf("Explain(%q) = %q (wraps the cause: %v), want %q", c.in, got, errors.Is(got, sentinel), want)
		}
	}
	if flags.Explain(nil) != nil {
		t.Error("Explain(nil) is not nil")
	}
}

// TestFlagsOf: the fields a flag set writes, nested ones dotted, found by
// address; fields no flag writes, and flags on other variables, are left
// out.
// Embedded is promoted into TestFlagsOf's options.
type Embedded struct{ Run string }

func TestFlagsOf(t *testing.T) {
	var o struct {
		Embedded
		Epochs int
		Out    string
		Read   struct {
			Label    string
			SkipRows int
		}
		Seed   int64
		hidden int
	}
	var elsewhere string
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.IntVar(&o.Epochs, "epochs", 1, "")
	fs.StringVar(&o.Run, "run", "", "")
	fs.StringVar(&o.Out, "out", "", "")
	fs.StringVar(&o.Read.Label, "label-column", "", "")
	fs.IntVar(&o.Read.SkipRows, "skip-rows", 0, "")
	fs.StringVar(&elsewhere, "methods", "", "")
	got := FlagsOf(&o, fs)
	want := Flags{"Epochs": "epochs", "Run": "run", "Out": "out", "Read.Label": "label-column", "Read.SkipRows": "skip-rows"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("FlagsOf: %v, want %v", got, want)
	}
}

// TestListTrimsItems: a comma-separated value's items as a user means
// them, spaces around them dropped; nothing for an empty value.
func TestListTrimsItems(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"yes, fraud", []string{"yes", "fraud"}},
		{" id ,name,  ", []string{"id", "name", ""}},
	} {
		if got := List(tc.text); !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("List(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
