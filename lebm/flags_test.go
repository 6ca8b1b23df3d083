package lebm

import (
	"bytes"
	"flag"
	"slices"
	"testing"
)

// TestShortFlags pins the short flags users type (train-lebm's documented
// command lines) to the settings they change: each flag, given a new value
// on its own, changes exactly its setting, to that value.
func TestShortFlags(t *testing.T) {
	t.Parallel()
	want := map[string]struct{ value, setting string }{
		"method":               {"cd", "lebm_method=cd"},
		"seed":                 {"7", "lebm_seed=7"},
		"posterior-steps":      {"9", "lebm_posterior_steps=9"},
		"posterior-step":       {"0.05", "lebm_posterior_step_size=0.05"},
		"test-posterior-steps": {"9", "lebm_test_posterior_steps=9"},
		"test-posterior-step":  {"0.05", "lebm_test_posterior_step_size=0.05"},
		"prior-steps":          {"9", "lebm_prior_steps=9"},
		"prior-step":           {"0.05", "lebm_prior_step_size=0.05"},
		"gen-steps":            {"9", "lebm_generation_steps=9"},
		"gen-step":             {"0.05", "lebm_generation_step_size=0.05"},
		"gen-sampler":          {"mala", "lebm_generation_sampler=mala"},
		"gen-leapfrog-steps":   {"3", "lebm_generation_leapfrog_steps=3"},
		"ed-t":                 {"0.5", "lebm_ed_t=0.5"},
		"ed-m":                 {"4", "lebm_ed_m=4"},
		"ed-w":                 {"0.5", "lebm_ed_w=0.5"},
		"sm-variant":           {"exact", "lebm_sm_variant=exact"},
		"sm-projections":       {"3", "lebm_sm_projections=3"},
		"lr-gen":               {"0.001", "lebm_generator_lr=0.001"},
		"lr-prior":             {"0.001", "lebm_prior_lr=0.001"},
		"lr-decay":             {"0.9", "lebm_lr_decay=0.9"},
		"sigma":                {"0.5", "lebm_sigma=0.5"},
		"prior-init":           {"xavier", "lebm_prior_init=xavier"},
		"compute-dtype":        {"bfloat16", "lebm_compute_dtype=bfloat16"},
		"convt-impl":           {"phase", "convt_impl=phase"},
		"set":                  {"lebm_ed_m=3", "lebm_ed_m=3"},
	}
	base, err := DefaultConfig("svhn")
	if err != nil {
		t.Fatal(err)
	}
	declared := flag.NewFlagSet("all", flag.ContinueOnError)
	DeclareFlags(declared, base)
	var names []string
	declared.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	for name := range want {
		if !slices.Contains(names, name) {
			t.Errorf("no flag -%s", name)
		}
	}
	for _, name := range names {
		w, ok := want[name]
		if !ok {
			t.Errorf("flag -%s is not pinned by this test", name)
			continue
		}
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(&bytes.Buffer{})
		apply := DeclareFlags(fs, base)
		if err := fs.Parse([]string{"-" + name, w.value}); err != nil {
			t.Fatal(err)
		}
		cfg := base
		if err := apply(&cfg); err != nil {
			t.Fatal(err)
		}
		if got := cfg.Changes(base); !slices.Equal(got, []string{w.setting}) {
			t.Errorf("-%s %s changed %v, want [%s]", name, w.value, got, w.setting)
		}
	}
	// -prior-init pytorch names the default initialisation, which a Config
	// holds as "": no change.
	fs := flag.NewFlagSet("pytorch", flag.ContinueOnError)
	apply := DeclareFlags(fs, base)
	fs.Parse([]string{"-prior-init", "pytorch"})
	cfg := base
	if err := apply(&cfg); err != nil || len(cfg.Changes(base)) != 0 {
		t.Errorf("-prior-init pytorch changed %v (%v), want nothing", cfg.Changes(base), err)
	}
}
