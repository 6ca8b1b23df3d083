package lebm

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/edlebm/edlebm/nets"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/ui/commandline"
)

// ParamPrefix starts the name of every context parameter that holds a
// Config setting.
const ParamPrefix = "lebm_"

// param binds a context parameter name to a Config field, through a pointer
// of one of the parameter types GoMLX checkpoints restore: *int, *int64,
// *float64, *string, *bool or *[]int.
type param struct {
	key string
	ptr any
	// optional parameters may be missing (checkpoints written before they
	// existed); the field then takes absent if set, else keeps its zero
	// value, which must then mean the old behaviour.
	optional bool
	absent   any
}

// params lists the settings of c stored as context parameters; the
// generator's layers are handled apart (see generatorLayers).
func (c *Config) params() []param {
	return []param{
		{key: "data", ptr: &c.Data, optional: true},
		{key: "anomaly_holdout", ptr: &c.AnomalyHoldout, optional: true, absent: -1},
		{key: "generator_nz", ptr: &c.Generator.Nz},
		{key: "prior_hidden", ptr: &c.Prior.Hidden},
		{key: "prior_activation", ptr: &c.Prior.Activation},
		// Checkpoints from before the setting had Xavier-initialised priors.
		{key: "prior_init", ptr: &c.Prior.Init, optional: true, absent: nets.InitXavier},
		{key: "prior_leaky_slope", ptr: &c.Prior.LeakySlope},
		{key: "sigma", ptr: &c.Sigma},
		{key: "prior_sigma", ptr: &c.PriorSigma},
		{key: "posterior_steps", ptr: &c.PosteriorLangevin.Steps},
		{key: "posterior_step_size", ptr: &c.PosteriorLangevin.StepSize},
		{key: "posterior_no_noise", ptr: &c.PosteriorLangevin.NoNoise},
		{key: "test_posterior_steps", ptr: &c.TestPosteriorLangevin.Steps},
		{key: "test_posterior_step_size", ptr: &c.TestPosteriorLangevin.StepSize},
		{key: "test_posterior_no_noise", ptr: &c.TestPosteriorLangevin.NoNoise},
		{key: "prior_steps", ptr: &c.PriorLangevin.Steps},
		{key: "prior_step_size", ptr: &c.PriorLangevin.StepSize},
		{key: "prior_no_noise", ptr: &c.PriorLangevin.NoNoise},
		{key: "generation_steps", ptr: &c.GenerationLangevin.Steps},
		{key: "generation_step_size", ptr: &c.GenerationLangevin.StepSize},
		{key: "generation_no_noise", ptr: &c.GenerationLangevin.NoNoise},
		{key: "method", ptr: &c.Method},
		{key: "ed_t", ptr: &c.ED.T},
		{key: "ed_m", ptr: &c.ED.M},
		{key: "ed_w", ptr: &c.ED.W},
		{key: "ed_drop_log_m", ptr: &c.ED.DropLogM},
		{key: "sm_variant", ptr: &c.SMVariant},
		{key: "sm_projections", ptr: &c.SMProjections},
		{key: "generator_lr", ptr: &c.GeneratorLR},
		{key: "prior_lr", ptr: &c.PriorLR},
		{key: "adam_beta1", ptr: &c.Beta1},
		{key: "adam_beta2", ptr: &c.Beta2},
		{key: "adam_epsilon", ptr: &c.AdamEpsilon},
		{key: "lr_decay", ptr: &c.LRDecay},
		{key: "dtype", ptr: &c.DType},
		{key: "compute_dtype", ptr: &c.ComputeDType, optional: true},
		{key: "seed", ptr: &c.Seed},
	}
}

// generatorLayersKey holds the generator's layers flattened to
// [out, kernel, stride, padding] per layer.
const generatorLayersKey = "generator_layers"

// SetParams stores every setting of c as a parameter of ctx, named
// ParamPrefix + a snake_case key (e.g. "lebm_posterior_steps",
// "lebm_generator_layers" with four integers out, kernel, stride, padding
// per layer). Parameters are saved with GoMLX checkpoints and can be
// changed from the command line with GoMLX's commandline.ParseContextSettings;
// ConfigFromContext reads them back.
func (c Config) SetParams(ctx *context.Context) {
	for _, p := range c.params() {
		value := reflect.ValueOf(p.ptr).Elem().Interface()
		if list, ok := value.([]int); ok {
			// A copy, not shared with c; never nil, which would be saved as
			// JSON null and load back untyped.
			value = append([]int{}, list...)
		}
		ctx.SetParam(ParamPrefix+p.key, value)
	}
	layers := make([]int, 0, 4*len(c.Generator.Layers))
	for _, l := range c.Generator.Layers {
		layers = append(layers, l.Out, l.Kernel, l.Stride, l.Padding)
	}
	ctx.SetParam(ParamPrefix+generatorLayersKey, layers)
}

// ConfigFromContext reads a Config from the parameters SetParams stored in
// ctx, and validates it.
func ConfigFromContext(ctx *context.Context) (Config, error) {
	var c Config
	for _, p := range c.params() {
		if _, found := ctx.GetParam(ParamPrefix + p.key); !found && p.optional {
			if p.absent != nil {
				reflect.ValueOf(p.ptr).Elem().Set(reflect.ValueOf(p.absent))
			}
			continue
		}
		if err := getParam(ctx, ParamPrefix+p.key, p.ptr); err != nil {
			return Config{}, err
		}
	}
	var layers []int
	if err := getParam(ctx, ParamPrefix+generatorLayersKey, &layers); err != nil {
		return Config{}, err
	}
	if len(layers)%4 != 0 {
		return Config{}, fmt.Errorf("lebm: context parameter %q has %d values; want 4 (out, kernel, stride, padding) per layer",
			ParamPrefix+generatorLayersKey, len(layers))
	}
	for i := 0; i < len(layers); i += 4 {
		c.Generator.Layers = append(c.Generator.Layers, nets.ConvTLayer{
			Out: layers[i], Kernel: layers[i+1], Stride: layers[i+2], Padding: layers[i+3]})
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// getParam copies the context parameter key into *ptr, which must have the
// parameter's type.
func getParam(ctx *context.Context, key string, ptr any) error {
	value, found := ctx.GetParam(key)
	if !found {
		return fmt.Errorf("lebm: context parameter %q is not set; a model's context must hold its Config (see Config.SetParams)", key)
	}
	dst := reflect.ValueOf(ptr).Elem()
	if value == nil && dst.Kind() == reflect.Slice {
		dst.SetZero()
		return nil
	}
	v := reflect.ValueOf(value)
	if !v.IsValid() || v.Type() != dst.Type() {
		return fmt.Errorf("lebm: context parameter %q = %v has type %T; want %s", key, value, value, dst.Type())
	}
	if v.Kind() == reflect.Slice {
		v = reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()), v) // not shared with ctx
	}
	dst.Set(v)
	return nil
}

// WithSettings returns c with GoMLX context settings applied, as
// commandline.ParseContextSettings reads them ("lebm_ed_t=0.5;
// lebm_prior_lr=1e-4", or "file:settings.txt"), validated. Every setting
// of Config can be changed this way, by its ParamPrefix name.
func (c Config) WithSettings(settings string) (Config, error) {
	if settings == "" {
		return c, nil
	}
	ctx := context.New()
	c.SetParams(ctx)
	if _, err := commandline.ParseContextSettings(ctx, settings); err != nil {
		return c, fmt.Errorf("lebm: settings %q: %w", settings, err)
	}
	return ConfigFromContext(ctx)
}

// Changes lists the settings in which c differs from base, as
// "name=value" in ParamPrefix names, sorted: what a run changed from the
// paper's settings.
func (c Config) Changes(base Config) []string {
	a, b := context.New(), context.New()
	c.SetParams(a)
	base.SetParams(b)
	var changes []string
	a.EnumerateParams(func(scope, key string, value any) {
		if old, _ := b.GetParam(key); !strings.HasPrefix(key, ParamPrefix) || reflect.DeepEqual(old, value) {
			return
		}
		changes = append(changes, fmt.Sprintf("%s=%v", key, value))
	})
	slices.Sort(changes)
	return changes
}

// SettingNames lists the names of the settings WithSettings accepts.
func SettingNames() []string {
	ctx := context.New()
	var c Config
	c.SetParams(ctx)
	var names []string
	ctx.EnumerateParams(func(_, key string, _ any) {
		if strings.HasPrefix(key, ParamPrefix) {
			names = append(names, key)
		}
	})
	slices.Sort(names)
	return names
}
