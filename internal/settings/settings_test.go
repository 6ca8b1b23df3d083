package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
)

// pair is a Value stored as a two-element []int.
type pair struct{ a, b *int }

func (p pair) ParamValue() any { return []int{*p.a, *p.b} }
func (p pair) SetParamValue(v any) error {
	list, ok := v.([]int)
	if !ok || len(list) != 2 {
		return fmt.Errorf("want two integers, got %v", v)
	}
	*p.a, *p.b = list[0], list[1]
	return nil
}

type config struct {
	Name   string
	Steps  int
	Seed   int64
	Rate   float64
	Noise  bool
	Hidden []int
	H, W   int
	Late   string // a setting added after some checkpoints were written
}

func (c *config) params() []Param {
	return []Param{
		{Key: "t_name", Ptr: &c.Name},
		{Key: "t_steps", Ptr: &c.Steps},
		{Key: "t_seed", Ptr: &c.Seed},
		{Key: "t_rate", Ptr: &c.Rate},
		{Key: "t_noise", Ptr: &c.Noise},
		{Key: "t_hidden", Ptr: &c.Hidden},
		{Key: "t_shape", Ptr: pair{&c.H, &c.W}},
		{Key: "t_late", Ptr: &c.Late, Optional: true, Absent: "old"},
	}
}

func example() config {
	return config{Name: "x", Steps: 3, Seed: 7, Rate: 0.5, Noise: true, Hidden: []int{4, 2}, H: 28, W: 14, Late: "new"}
}

// Every field goes through a GoMLX checkpoint and back with its type.
func TestRoundTripThroughACheckpoint(t *testing.T) {
	want, stored := example(), example()
	ctx := context.New()
	ctx.VariableWithValue("w", []float32{1})
	Set(ctx, stored.params())
	stored.Hidden[0] = 99 // the context holds a copy
	dir := t.TempDir()
	h, err := checkpoints.Build(ctx).Dir(dir).Done()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Save(); err != nil {
		t.Fatal(err)
	}
	loaded := context.New()
	if _, err := checkpoints.Load(loaded).Dir(dir).Immediate().Done(); err != nil {
		t.Fatal(err)
	}
	var got config
	if err := Get(loaded, got.params()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, want %+v", got, want)
	}
}

func TestGetMissingAndMistypedParameters(t *testing.T) {
	full := example()
	for _, tc := range []struct {
		name    string
		drop    string
		replace map[string]any
		want    string // error substring; "" for none
		late    string
	}{
		{"optional missing takes Absent", "t_late", nil, "", "old"},
		{"required missing", "t_steps", nil, `"t_steps" is not set`, ""},
		{"float for int", "", map[string]any{"t_steps": 3.0}, `"t_steps" = 3 has type float64; want int`, ""},
		{"value refuses", "", map[string]any{"t_shape": []int{1}}, `"t_shape" = [1]: want two integers`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.New()
			for _, p := range full.params() {
				if p.Key == tc.drop {
					continue
				}
				v := value(p)
				if r, ok := tc.replace[p.Key]; ok {
					v = r
				}
				ctx.SetParam(p.Key, v)
			}
			var got config
			err := Get(ctx, got.params())
			if tc.want == "" {
				if err != nil || got.Late != tc.late {
					t.Errorf("Get: %v, Late %q; want no error, Late %q", err, got.Late, tc.late)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Get: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestApplyChangesAndNames(t *testing.T) {
	base := example()
	c := example()
	c.Hidden = slices.Clone(base.Hidden)
	file := filepath.Join(t.TempDir(), "more.txt")
	if err := os.WriteFile(file, []byte("t_noise=false"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Apply(c.params(), "t_rate=0.25;t_hidden=8,8,8;t_shape=32,16;file:"+file); err != nil {
		t.Fatal(err)
	}
	want := []string{"t_hidden=[8 8 8]", "t_noise=false", "t_rate=0.25", "t_shape=[32 16]"}
	if got := Changes(c.params(), base.params()); !slices.Equal(got, want) {
		t.Errorf("Changes = %q, want %q", got, want)
	}
	if base.Hidden[0] != 4 {
		t.Errorf("Apply changed the base's hidden layers: %v", base.Hidden)
	}
	if err := Apply(c.params(), "t_nonsense=1"); err == nil || !strings.Contains(err.Error(), "t_nonsense") {
		t.Errorf("an unknown setting: %v, want an error naming it", err)
	}
	if err := Apply(c.params(), "t_shape=1,2,3"); err == nil || !strings.Contains(err.Error(), "two integers") {
		t.Errorf("a bad Value: %v, want its refusal", err)
	}
	wantNames := []string{"t_hidden", "t_late", "t_name", "t_noise", "t_rate", "t_seed", "t_shape", "t_steps"}
	if got := Names(c.params()); !slices.Equal(got, wantNames) {
		t.Errorf("Names = %q, want %q", got, wantNames)
	}
}
