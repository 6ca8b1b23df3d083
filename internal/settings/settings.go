// Package settings stores a configuration struct as GoMLX context
// parameters, the one way every model of the project keeps its settings:
// they are saved with the model's checkpoint, changed from the command
// line with GoMLX's -set syntax (commandline.ParseContextSettings) and
// read back into the struct, checked for type.
//
// A configuration lists its fields as Params, each binding a parameter
// name to a field through a pointer.
package settings

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/ui/commandline"
)

// Param binds the context parameter Key to a field.
type Param struct {
	// Key is the parameter's full name, e.g. "lebm_ed_t".
	Key string
	// Ptr points at the field: *int, *int64, *float64, *string, *bool or
	// *[]int (the types GoMLX checkpoints restore), or a Value.
	Ptr any
	// Optional parameters may be missing (checkpoints written before they
	// existed); the field then takes Absent if it is set, else keeps its
	// value.
	Optional bool
	Absent   any
	// Flag, when not empty, is the setting's short command-line flag
	// ("ed-t" for "lebm_ed_t"; see DeclareFlags), and Usage its help.
	Flag, Usage string
}

// Value is a field stored as a parameter of another type, such as a list
// of layers flattened into one []int.
type Value interface {
	// ParamValue returns the parameter's value (of a type Param.Ptr may
	// point at).
	ParamValue() any
	// SetParamValue sets the field from the parameter's value, or
	// reports why it cannot.
	SetParamValue(value any) error
}

// Set stores every field of params in ctx.
func Set(ctx *context.Context, params []Param) {
	for _, p := range params {
		ctx.SetParam(p.Key, value(p))
	}
}

// value is the parameter value of p's field: a copy where it is a slice
// (not shared with the struct), and never a nil slice, which a checkpoint
// would save as JSON null and load back untyped.
func value(p Param) any {
	if v, ok := p.Ptr.(Value); ok {
		return v.ParamValue()
	}
	v := reflect.ValueOf(p.Ptr).Elem().Interface()
	if list, ok := v.([]int); ok {
		return append([]int{}, list...)
	}
	return v
}

// Get reads every field of params from ctx. A missing parameter is an
// error unless it is Optional.
func Get(ctx *context.Context, params []Param) error {
	for _, p := range params {
		v, found := ctx.GetParam(p.Key)
		if !found {
			if !p.Optional {
				return fmt.Errorf("context parameter %q is not set", p.Key)
			}
			if p.Absent != nil {
				reflect.ValueOf(p.Ptr).Elem().Set(reflect.ValueOf(p.Absent))
			}
			continue
		}
		if err := setField(p, v); err != nil {
			return err
		}
	}
	return nil
}

// setField sets p's field to the parameter value v, which must have the
// field's type.
func setField(p Param, v any) error {
	if field, ok := p.Ptr.(Value); ok {
		if err := field.SetParamValue(v); err != nil {
			return fmt.Errorf("context parameter %q = %v: %w", p.Key, v, err)
		}
		return nil
	}
	dst := reflect.ValueOf(p.Ptr).Elem()
	if v == nil && dst.Kind() == reflect.Slice {
		dst.SetZero()
		return nil
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Type() != dst.Type() {
		return fmt.Errorf("context parameter %q = %v has type %T; want %s", p.Key, v, v, dst.Type())
	}
	if rv.Kind() == reflect.Slice {
		rv = reflect.AppendSlice(reflect.MakeSlice(rv.Type(), 0, rv.Len()), rv) // not shared with ctx
	}
	dst.Set(rv)
	return nil
}

// Apply changes the fields of params by GoMLX context settings, as
// commandline.ParseContextSettings reads them ("a=1;b=0.5", or
// "file:settings.txt"). Only the names of params may be set.
func Apply(params []Param, text string) error {
	if text == "" {
		return nil
	}
	ctx := context.New()
	Set(ctx, params)
	if _, err := commandline.ParseContextSettings(ctx, text); err != nil {
		return fmt.Errorf("settings %q: %w", text, err)
	}
	if err := Get(ctx, params); err != nil {
		return fmt.Errorf("settings %q: %w", text, err)
	}
	return nil
}

// Changes lists, as "name=value" sorted by name, the parameters whose
// values differ between two bindings of the same keys: what a run changed
// from the defaults.
func Changes(params, base []Param) []string {
	baseValues := make(map[string]any, len(base))
	for _, p := range base {
		baseValues[p.Key] = value(p)
	}
	var changes []string
	for _, p := range params {
		if v := value(p); !reflect.DeepEqual(v, baseValues[p.Key]) {
			changes = append(changes, fmt.Sprintf("%s=%v", p.Key, v))
		}
	}
	slices.Sort(changes)
	return changes
}

// Names lists the parameter names of params, sorted.
func Names(params []Param) []string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Key
	}
	slices.Sort(names)
	return names
}
