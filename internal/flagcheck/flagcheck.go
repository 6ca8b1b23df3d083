// Package flagcheck gives the commands' flag errors one shape: the flag as
// the user typed it, its value, and what was expected — "flag -epochs 0:
// must be ≥ 1" — rather than a list of flags or an internal field name.
package flagcheck

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// Rule is one condition on one flag.
type Rule struct {
	Flag  string // the flag's name, without the dash
	Value any    // its value
	OK    bool   // whether the value is acceptable
	Want  string // what an acceptable value is, e.g. "≥ 1"
}

// Check returns an error naming the first rule that fails — "flag -NAME
// VALUE: must be WANT" — or nil when all hold.
func Check(rules ...Rule) error {
	for _, r := range rules {
		if !r.OK {
			return fmt.Errorf("%s: must be %s", name(r.Flag, fmt.Sprint(r.Value)), r.Want)
		}
	}
	return nil
}

// prefix returns err prefixed by "flag -NAME VALUE: ", unless it names
// the flag already.
func prefix(flagName, value string, err error) error {
	if strings.HasPrefix(err.Error(), "flag -"+flagName) {
		return err
	}
	return fmt.Errorf("%s: %w", name(flagName, value), err)
}

// name returns "flag -NAME VALUE", the value quoted when empty or spaced.
func name(flagName, value string) string {
	if value == "" || strings.ContainsAny(value, " \t\n") {
		value = fmt.Sprintf("%q", value)
	}
	return fmt.Sprintf("flag -%s %s", flagName, value)
}

// Blame explains err, the failure of validating the settings built from
// every flag the user set. It rebuilds the settings from one set flag at a
// time, beside the flags named in keep (such as a data set whose defaults
// the others modify), and returns that flag's own error prefixed by
// "flag -NAME VALUE" for the first flag that fails alone. When none does, a
// combination is at fault and err is returned naming every set flag.
// validate rebuilds and checks the settings from arguments in flag syntax.
func Blame(fs *flag.FlagSet, err error, keep []string, validate func(args []string) error) error {
	arg := func(n string) string { return "-" + n + "=" + fs.Lookup(n).Value.String() }
	var kept, keptArgs, others []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(keep, f.Name) {
			kept, keptArgs = append(kept, f.Name), append(keptArgs, arg(f.Name))
		} else {
			others = append(others, f.Name)
		}
	})
	if keptErr := validate(keptArgs); keptErr != nil { // the kept flags fail by themselves
		if len(kept) == 1 {
			return prefix(kept[0], fs.Lookup(kept[0]).Value.String(), keptErr)
		}
		return together(kept, keptErr)
	}
	for _, n := range others {
		if aloneErr := validate(append(slices.Clone(keptArgs), arg(n))); aloneErr != nil {
			return prefix(n, fs.Lookup(n).Value.String(), aloneErr)
		}
	}
	if len(others) == 0 {
		return err
	}
	return together(others, err)
}

// together names several flags as jointly at fault for err.
func together(flags []string, err error) error {
	named := make([]string, len(flags))
	for i, n := range flags {
		named[i] = "-" + n
	}
	return fmt.Errorf("flags %s together: %w", strings.Join(named, ", "), err)
}
