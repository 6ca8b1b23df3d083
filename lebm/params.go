package lebm

import (
	"flag"
	"fmt"

	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/settings"
	"github.com/edlebm/edlebm/nets"
)

// ParamPrefix starts the name of every context parameter that holds a
// Config setting.
const ParamPrefix = "lebm_"

// params binds every setting of c to its context parameter, ParamPrefix +
// a snake_case key; the generator's layers are one []int (see
// generatorLayers). A setting with a flag has a short command-line form
// (DeclareFlags): this table is the one place a setting is named.
func (c *Config) params() []settings.Param {
	list := []param{
		{key: "data", ptr: &c.Data, optional: true},
		{key: "anomaly_holdout", ptr: &c.AnomalyHoldout, optional: true, absent: -1},
		{key: "generator_nz", ptr: &c.Generator.Nz},
		{key: "prior_hidden", ptr: &c.Prior.Hidden},
		{key: "prior_activation", ptr: &c.Prior.Activation},
		// Checkpoints from before the setting had Xavier-initialised priors.
		{key: "prior_init", ptr: &c.Prior.Init, optional: true, absent: nets.InitXavier, flag: "prior-init",
			usage: fmt.Sprintf("initialisation of the prior EBM's dense layers %v: PyTorch's nn.Linear default, as the authors' code, or Xavier-normal weights with zero biases", nets.MLPInits)},
		{key: "prior_leaky_slope", ptr: &c.Prior.LeakySlope},
		{key: "sigma", ptr: &c.Sigma, flag: "sigma", usage: "σ of the Gaussian likelihood"},
		{key: "prior_sigma", ptr: &c.PriorSigma},
		{key: "posterior_steps", ptr: &c.PosteriorLangevin.Steps, flag: "posterior-steps", usage: "training posterior Langevin steps (paper: 20; 40 for cifar10)"},
		{key: "posterior_step_size", ptr: &c.PosteriorLangevin.StepSize, flag: "posterior-step", usage: "training posterior Langevin step size s"},
		{key: "posterior_no_noise", ptr: &c.PosteriorLangevin.NoNoise},
		{key: "test_posterior_steps", ptr: &c.TestPosteriorLangevin.Steps, flag: "test-posterior-steps", usage: "test-time posterior Langevin steps (reconstructions)"},
		{key: "test_posterior_step_size", ptr: &c.TestPosteriorLangevin.StepSize, flag: "test-posterior-step", usage: "test-time posterior Langevin step size"},
		{key: "test_posterior_no_noise", ptr: &c.TestPosteriorLangevin.NoNoise},
		{key: "prior_steps", ptr: &c.PriorLangevin.Steps, flag: "prior-steps", usage: "CD: prior Langevin steps"},
		{key: "prior_step_size", ptr: &c.PriorLangevin.StepSize, flag: "prior-step", usage: "CD: prior Langevin step size"},
		{key: "prior_no_noise", ptr: &c.PriorLangevin.NoNoise},
		{key: "generation_steps", ptr: &c.GenerationLangevin.Steps, flag: "gen-steps", usage: "generation: prior Langevin steps"},
		{key: "generation_step_size", ptr: &c.GenerationLangevin.StepSize, flag: "gen-step", usage: "generation: prior Langevin step size"},
		{key: "generation_no_noise", ptr: &c.GenerationLangevin.NoNoise},
		{key: "method", ptr: &c.Method, flag: "method", usage: fmt.Sprintf("prior update: %v", Methods)},
		{key: "ed_t", ptr: &c.ED.T, flag: "ed-t", usage: "ED: perturbation variance t"},
		{key: "ed_m", ptr: &c.ED.M, flag: "ed-m", usage: "ED: negative samples M"},
		{key: "ed_w", ptr: &c.ED.W, flag: "ed-w", usage: "ED: stabiliser w"},
		{key: "ed_drop_log_m", ptr: &c.ED.DropLogM},
		{key: "sm_variant", ptr: &c.SMVariant, flag: "sm-variant", usage: fmt.Sprintf("SM: estimator %v", SMVariants)},
		{key: "sm_projections", ptr: &c.SMProjections, flag: "sm-projections", usage: "SM: projections of the sliced estimator"},
		{key: "generator_lr", ptr: &c.GeneratorLR, flag: "lr-gen", usage: "generator Adam learning rate"},
		{key: "prior_lr", ptr: &c.PriorLR, flag: "lr-prior", usage: "prior Adam learning rate"},
		{key: "adam_beta1", ptr: &c.Beta1},
		{key: "adam_beta2", ptr: &c.Beta2},
		{key: "adam_epsilon", ptr: &c.AdamEpsilon},
		{key: "lr_decay", ptr: &c.LRDecay, flag: "lr-decay", usage: "learning-rate decay per epoch (1: none)"},
		{key: "dtype", ptr: &c.DType},
		{key: "compute_dtype", ptr: &c.ComputeDType, optional: true, flag: "compute-dtype",
			usage: fmt.Sprintf("generator layers' dtype %q: bfloat16 for the GPU's fast matrix units, variables and energies staying float32 (\"\": float32)", ComputeDTypes)},
		{key: "seed", ptr: &c.Seed, flag: "seed", usage: "random seed (0: random)"},
		{key: generatorLayersKey, ptr: generatorLayers{&c.Generator.Layers}},
	}
	out := make([]settings.Param, len(list))
	for i, p := range list {
		out[i] = settings.Param{Key: ParamPrefix + p.key, Ptr: p.ptr, Optional: p.optional, Absent: p.absent, Flag: p.flag, Usage: p.usage}
	}
	return out
}

// param is a settings.Param keyed without ParamPrefix, for a shorter list.
type param struct {
	key         string
	ptr         any
	optional    bool
	absent      any
	flag, usage string
}

// generatorLayersKey holds the generator's layers flattened to
// [out, kernel, stride, padding] per layer.
const generatorLayersKey = "generator_layers"

// generatorLayers stores the generator's layers as one []int parameter.
type generatorLayers struct{ layers *[]nets.ConvTLayer }

// ParamValue implements settings.Value.
func (g generatorLayers) ParamValue() any {
	flat := make([]int, 0, 4*len(*g.layers))
	for _, l := range *g.layers {
		flat = append(flat, l.Out, l.Kernel, l.Stride, l.Padding)
	}
	return flat
}

// SetParamValue implements settings.Value.
func (g generatorLayers) SetParamValue(value any) error {
	flat, ok := value.([]int)
	if !ok && value != nil {
		return fmt.Errorf("has type %T; want []int", value)
	}
	if len(flat)%4 != 0 {
		return fmt.Errorf("has %d values; want 4 (out, kernel, stride, padding) per layer", len(flat))
	}
	*g.layers = nil
	for i := 0; i < len(flat); i += 4 {
		*g.layers = append(*g.layers, nets.ConvTLayer{Out: flat[i], Kernel: flat[i+1], Stride: flat[i+2], Padding: flat[i+3]})
	}
	return nil
}

// SetParams stores every setting of c as a parameter of ctx, named
// ParamPrefix + a snake_case key (e.g. "lebm_posterior_steps",
// "lebm_generator_layers" with four integers out, kernel, stride, padding
// per layer). Parameters are saved with GoMLX checkpoints and can be
// changed from the command line with GoMLX's commandline.ParseContextSettings;
// ConfigFromContext reads them back.
func (c Config) SetParams(ctx *context.Context) { settings.Set(ctx, c.params()) }

// ConfigFromContext reads a Config from the parameters SetParams stored in
// ctx, and validates it.
func ConfigFromContext(ctx *context.Context) (Config, error) {
	var c Config
	if err := settings.Get(ctx, c.params()); err != nil {
		return Config{}, fmt.Errorf("lebm: %w; a model's context must hold its Config (see Config.SetParams)", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// WithSettings returns c with GoMLX context settings applied, as
// commandline.ParseContextSettings reads them ("lebm_ed_t=0.5;
// lebm_prior_lr=1e-4", or "file:settings.txt"), validated. Every setting
// of Config can be changed this way, by its ParamPrefix name.
func (c Config) WithSettings(text string) (Config, error) {
	c.Generator.Layers = append([]nets.ConvTLayer{}, c.Generator.Layers...) // not shared with the caller's
	c.Prior.Hidden = append([]int{}, c.Prior.Hidden...)
	if err := settings.Apply(c.params(), text); err != nil {
		return c, fmt.Errorf("lebm: %w", err)
	}
	return c, c.Validate()
}

// Changes lists the settings in which c differs from base, as
// "name=value" in ParamPrefix names, sorted: what a run changed from the
// paper's settings.
func (c Config) Changes(base Config) []string { return settings.Changes(c.params(), base.params()) }

// SettingNames lists the names of the settings WithSettings accepts.
func SettingNames() []string {
	var c Config
	return settings.Names(c.params())
}

// DeclareFlags declares on fs the short command-line flags of the settings
// that have one (-ed-t for lebm_ed_t, -lr-prior for lebm_prior_lr, …),
// showing the values of defaults in -h. After fs.Parse, the returned
// function sets, in a Config, the settings whose flags were given and
// leaves the others; it does not validate.
func DeclareFlags(fs *flag.FlagSet, defaults Config) func(*Config) error {
	flags := settings.DeclareFlags(fs, defaults.params())
	return func(c *Config) error {
		if err := flags.Apply(c.params()); err != nil {
			return fmt.Errorf("lebm: %w", err)
		}
		if c.Prior.Init == nets.InitPyTorch {
			c.Prior.Init = "" // the same initialisation, named as a model that never set it
		}
		return nil
	}
}
