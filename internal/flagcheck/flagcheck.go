// Package flagcheck gives the commands' flag errors one shape: the flag as
// the user typed it, its value, and what was expected — "flag -epochs 0:
// must be ≥ 1" — rather than a list of flags or an internal field name.
//
// The library packages name their options instead ("Options.Epochs 0:
// must be ≥ 1", CheckOptions): a Go caller set fields, not flags. A
// command, which knows which of its flags sets which option, rewrites such
// an error for its user (Flags.Explain).
package flagcheck

import (
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// Rule is one condition on one flag (Check) or option (CheckOptions).
type Rule struct {
	Name  string // the flag's name without the dash, or the option's field
	Value any    // its value
	OK    bool   // whether the value is acceptable
	Want  string // what an acceptable value is, e.g. "≥ 1"
}

// Check returns an error naming the first rule that fails — "flag -NAME
// VALUE: must be WANT" — or nil when all hold.
func Check(rules ...Rule) error {
	for _, r := range rules {
		if !r.OK {
			return fmt.Errorf("%s: must be %s", name(r.Name, fmt.Sprint(r.Value)), r.Want)
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

// CheckOptions is Check for a library's options: the rules' names are
// fields of its Options, and the error names the first that fails —
// "Options.NAME VALUE: must be WANT".
func CheckOptions(rules ...Rule) error {
	for _, r := range rules {
		if !r.OK {
			return fmt.Errorf("%s: must be %s", OptionName(r.Name, r.Value), r.Want)
		}
	}
	return nil
}

// OptionName is "Options.NAME VALUE" (the value quoted when empty or
// spaced), or "Options.NAME" for a nil value: how a library's error names
// one of its options.
func OptionName(option string, value any) string {
	if value == nil {
		return "Options." + option
	}
	v := fmt.Sprint(value)
	if v == "" || strings.ContainsAny(v, " \t\n") {
		v = fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("Options.%s %s", option, v)
}

// Flags maps a library's option names (fields of its Options, dotted for
// nested ones: "Config.Data") to the flags, without the dash, that set
// them.
type Flags map[string]string

// FlagsOf maps the fields of the struct options points to (dotted paths
// into nested structs, leaves only) to the flags of fs that write them,
// found by address: the flags a command declared with fs.IntVar(&o.Batch,
// "batch", …) name themselves, with no second list to keep. The fields of
// an embedded struct are named as promoted fields, without its name.
func FlagsOf(options any, fs *flag.FlagSet) Flags {
	byAddress := map[uintptr]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if v := reflect.ValueOf(f.Value); v.Kind() == reflect.Pointer {
			byAddress[v.Pointer()] = f.Name
		}
	})
	out := Flags{}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		for i := range v.NumField() {
			field, f := v.Type().Field(i), v.Field(i)
			switch {
			case !field.IsExported():
			case f.Kind() == reflect.Struct && field.Anonymous: // promoted: Options.X names it
				walk(f, prefix)
			case f.Kind() == reflect.Struct:
				walk(f, prefix+field.Name+".")
			default:
				if name, ok := byAddress[f.Addr().Pointer()]; ok {
					out[prefix+field.Name] = name
				}
			}
		}
	}
	walk(reflect.ValueOf(options).Elem(), "")
	return out
}

// optionToken finds an option's name in an error's text.
var optionToken = regexp.MustCompile(`Options\.[A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)*`)

// Explain rewrites err for the command's user: each option of f that the
// message names becomes its flag — "flag -NAME" where it begins the message
// or one of its wrapped parts (after ": "), "-NAME" elsewhere. Options not
// in f keep their names. The result unwraps to err.
func (f Flags) Explain(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var b strings.Builder
	last := 0
	for _, m := range optionToken.FindAllStringIndex(msg, -1) {
		name, ok := f[strings.TrimPrefix(msg[m[0]:m[1]], "Options.")]
		if !ok {
			continue
		}
		b.WriteString(msg[last:m[0]])
		if m[0] == 0 || strings.HasSuffix(msg[:m[0]], ": ") {
			b.WriteString("flag ")
		}
		b.WriteString("-" + name)
		last = m[1]
	}
	b.WriteString(msg[last:])
	return &explained{msg: b.String(), err: err}
}

// explained is an error rewritten for a command's user.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// List is a comma-separated flag value's items, each without the spaces
// around it ("a, b" is a and b, as a user means it); nil for "".
func List(text string) []string {
	if text == "" {
		return nil
	}
	items := strings.Split(text, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items
}
