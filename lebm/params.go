package lebm

import (
	"fmt"
	"reflect"

	"github.com/edlebm/edlebm/nets"
	"github.com/gomlx/gomlx/pkg/ml/context"
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
}

// params lists the settings of c stored as context parameters; the
// generator's layers are handled apart (see generatorLayers).
func (c *Config) params() []param {
	return []param{
		{"generator_nz", &c.Generator.Nz},
		{"prior_hidden", &c.Prior.Hidden},
		{"prior_activation", &c.Prior.Activation},
		{"prior_leaky_slope", &c.Prior.LeakySlope},
		{"sigma", &c.Sigma},
		{"prior_sigma", &c.PriorSigma},
		{"posterior_steps", &c.PosteriorLangevin.Steps},
		{"posterior_step_size", &c.PosteriorLangevin.StepSize},
		{"posterior_no_noise", &c.PosteriorLangevin.NoNoise},
		{"test_posterior_steps", &c.TestPosteriorLangevin.Steps},
		{"test_posterior_step_size", &c.TestPosteriorLangevin.StepSize},
		{"test_posterior_no_noise", &c.TestPosteriorLangevin.NoNoise},
		{"prior_steps", &c.PriorLangevin.Steps},
		{"prior_step_size", &c.PriorLangevin.StepSize},
		{"prior_no_noise", &c.PriorLangevin.NoNoise},
		{"generation_steps", &c.GenerationLangevin.Steps},
		{"generation_step_size", &c.GenerationLangevin.StepSize},
		{"generation_no_noise", &c.GenerationLangevin.NoNoise},
		{"method", &c.Method},
		{"ed_t", &c.ED.T},
		{"ed_m", &c.ED.M},
		{"ed_w", &c.ED.W},
		{"ed_drop_log_m", &c.ED.DropLogM},
		{"sm_variant", &c.SMVariant},
		{"sm_projections", &c.SMProjections},
		{"generator_lr", &c.GeneratorLR},
		{"prior_lr", &c.PriorLR},
		{"adam_beta1", &c.Beta1},
		{"adam_beta2", &c.Beta2},
		{"adam_epsilon", &c.AdamEpsilon},
		{"lr_decay", &c.LRDecay},
		{"dtype", &c.DType},
		{"seed", &c.Seed},
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
