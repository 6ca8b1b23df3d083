package settings

import (
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Flags are the short command-line flags of the Params that name one
// (Param.Flag): a setting's flag is declared from its row of the settings
// table, so that adding a setting with a flag is one edit.
type Flags struct {
	fs *flag.FlagSet
	// holders maps each flag's name to its setting's key and the variable
	// the flag package parses it into.
	holders map[string]flagHolder
}

type flagHolder struct {
	key string
	ptr any // *int, *int64, *float64, *string, *bool or *[]int
}

// DeclareFlags declares on fs a flag for every param with a Flag, of the
// field's type, its default the field's current value (what -h shows).
// Only *int, *int64, *float64, *string, *bool and *[]int fields (a
// comma-separated list of positive numbers) can have flags.
func DeclareFlags(fs *flag.FlagSet, params []Param) *Flags {
	f := &Flags{fs: fs, holders: map[string]flagHolder{}}
	for _, p := range params {
		if p.Flag == "" {
			continue
		}
		var ptr any
		switch field := p.Ptr.(type) {
		case *int:
			ptr = fs.Int(p.Flag, *field, p.Usage)
		case *int64:
			ptr = fs.Int64(p.Flag, *field, p.Usage)
		case *float64:
			ptr = fs.Float64(p.Flag, *field, p.Usage)
		case *string:
			ptr = fs.String(p.Flag, *field, p.Usage)
		case *bool:
			ptr = fs.Bool(p.Flag, *field, p.Usage)
		case *[]int:
			list := slices.Clone(*field)
			fs.Func(p.Flag, fmt.Sprintf("%s (comma-separated; default %s)", p.Usage, JoinInts(*field)), func(text string) error {
				values, err := ParsePositiveInts(text)
				if err == nil {
					list = values
				}
				return err
			})
			ptr = &list
		default:
			panic(fmt.Sprintf("settings: flag -%s of %s: a %T field cannot have a flag", p.Flag, p.Key, p.Ptr))
		}
		f.holders[p.Flag] = flagHolder{key: p.Key, ptr: ptr}
	}
	return f
}

// Apply sets, among params, the fields of the flags the user gave (after
// the flag set was parsed), matching them by Key; the other fields keep
// their values.
func (f *Flags) Apply(params []Param) error {
	byKey := make(map[string]Param, len(params))
	for _, p := range params {
		byKey[p.Key] = p
	}
	var err error
	f.fs.Visit(func(given *flag.Flag) {
		h, ok := f.holders[given.Name]
		if !ok || err != nil {
			return
		}
		p, ok := byKey[h.key]
		if !ok {
			err = fmt.Errorf("settings: flag -%s: no setting %s here", given.Name, h.key)
			return
		}
		reflect.ValueOf(p.Ptr).Elem().Set(reflect.ValueOf(h.ptr).Elem())
	})
	return err
}

// ParsePositiveInts reads a comma-separated list of positive integers,
// such as the hidden layer widths of an MLP ("128,128"): the form of a
// []int setting's flag.
func ParsePositiveInts(text string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(text, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want comma-separated positive whole numbers, such as 128,128", text)
		}
		out = append(out, n)
	}
	return out, nil
}

// JoinInts writes a list as ParsePositiveInts reads it.
func JoinInts(values []int) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}
