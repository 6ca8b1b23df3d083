package flagcheck

import (
	"errors"
	"flag"
	"fmt"
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
