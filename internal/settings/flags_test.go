package settings

import (
	"bytes"
	"flag"
	"reflect"
	"strings"
	"testing"
)

// flagged is config's table with a short flag on every field that can
// have one (all but the Value).
func (c *config) flagged() []Param {
	params := c.params()
	for i := range params {
		switch params[i].Ptr.(type) {
		case *int, *int64, *float64, *string, *bool, *[]int:
			params[i].Flag = strings.TrimPrefix(params[i].Key, "t_")
			params[i].Usage = "the " + params[i].Flag
		}
	}
	return params
}

// TestFlagsApplyOnlyWhatWasGiven: the flags show the defaults' values in
// -h, and applying them to another config changes exactly the fields whose
// flags were given, to the values typed.
func TestFlagsApplyOnlyWhatWasGiven(t *testing.T) {
	defaults := example()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	flags := DeclareFlags(fs, defaults.flagged())
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	for _, want := range []string{"-steps int", "the steps (default 3)", "-rate float", "(default 0.5)", "-seed int", "(default 7)", "-name string", `(default "x")`, "-noise", "-hidden value", "the hidden (comma-separated; default 4,2)"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
	if strings.Contains(help.String(), "-shape") {
		t.Errorf("help shows a flag for a Value:\n%s", help.String())
	}
	if err := fs.Parse([]string{"-steps", "40", "-rate=0.125", "-name", "y", "-noise=false", "-seed", "-3", "-hidden", "32, 16"}); err != nil {
		t.Fatal(err)
	}
	got := config{Name: "a", Steps: 1, Seed: 2, Rate: 3, Noise: true, Hidden: []int{9}, H: 1, W: 2, Late: "z"}
	if err := flags.Apply(got.flagged()); err != nil {
		t.Fatal(err)
	}
	want := config{Name: "y", Steps: 40, Seed: -3, Rate: 0.125, Noise: false, Hidden: []int{32, 16}, H: 1, W: 2, Late: "z"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the flags: %+v, want %+v", got, want)
	}

	// Nothing given: nothing changes.
	fs = flag.NewFlagSet("test", flag.ContinueOnError)
	flags = DeclareFlags(fs, defaults.flagged())
	fs.Parse(nil)
	untouched := want
	if err := flags.Apply(untouched.flagged()); err != nil || !reflect.DeepEqual(untouched, want) {
		t.Errorf("no flags given changed %+v to %+v (%v)", want, untouched, err)
	}
}

func TestFlagsRefuseBadValues(t *testing.T) {
	for _, args := range [][]string{{"-steps", "2.5"}, {"-rate", "fast"}, {"-noise=maybe"}, {"-seed", "1e3"}, {"-hidden", "8,0"}, {"-hidden", "8,,4"}} {
		defaults := example()
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(&bytes.Buffer{})
		DeclareFlags(fs, defaults.flagged())
		err := fs.Parse(args)
		name := strings.SplitN(strings.TrimPrefix(args[0], "-"), "=", 2)[0]
		if err == nil || !strings.Contains(err.Error(), "-"+name) {
			t.Errorf("%v: error %v, want one naming -%s", args, err, name)
		}
	}
}

func TestFlagOnAValuePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "t_shape") {
			t.Errorf("panic %v, want one naming t_shape", r)
		}
	}()
	var c config
	DeclareFlags(flag.NewFlagSet("test", flag.ContinueOnError), []Param{{Key: "t_shape", Ptr: pair{&c.H, &c.W}, Flag: "shape"}})
}
