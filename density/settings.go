package density

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/nets"

	"github.com/edlebm/edlebm/internal/settings"
)

// ParamPrefix starts the name of the context parameters holding a
// Config, except Adam's learning rate and ε, which are under GoMLX's own
// names (optimizers.ParamLearningRate, optimizers.ParamAdamEpsilon).
const ParamPrefix = "toy_"

// params binds every setting of c to its context parameter.
func (c *Config) params() []settings.Param {
	list := []settings.Param{
		{Key: "method", Ptr: &c.Method},
		{Key: "ed_t", Ptr: &c.ED.T, Flag: "ed-t", Usage: "ED: perturbation variance t"},
		{Key: "ed_m", Ptr: &c.ED.M, Flag: "ed-m", Usage: "ED: negative samples M per data point"},
		{Key: "ed_w", Ptr: &c.ED.W, Flag: "ed-w", Usage: "ED: stabiliser w (0 disables it)"},
		{Key: "ed_drop_log_m", Ptr: &c.ED.DropLogM},
		{Key: "cd_steps", Ptr: &c.CD.Langevin.Steps, Flag: "cd-steps", Usage: "CD: Langevin steps from the data"},
		{Key: "cd_step_size", Ptr: &c.CD.Langevin.StepSize},
		{Key: "cd_no_noise", Ptr: &c.CD.Langevin.NoNoise},
		{Key: "cd_reg", Ptr: &c.CD.Reg, Flag: "cd-reg", Usage: "CD: weight α of the regulariser α·mean(E⁺² + E⁻²)"},
		{Key: "dsm_variance", Ptr: &c.DSMVariance, Flag: "dsm-t", Usage: "denoising score matching (method dsm): noise variance t"},
		{Key: "bed_epsilon", Ptr: &c.BED.Epsilon, Flag: "bed-epsilon", Usage: "Bernoulli ED: bit-flip probability ε"},
		{Key: "bed_m", Ptr: &c.BED.M, Flag: "bed-m", Usage: "Bernoulli ED: negative samples M per data point"},
		{Key: "bed_w", Ptr: &c.BED.W, Flag: "bed-w", Usage: "Bernoulli ED: stabiliser w (0 disables it)"},
		{Key: "cd_sampler", Ptr: &c.CDSampler, Optional: true, Absent: "gibbs"}, // checkpoints before Gibbs with gradients
		{Key: "gibbs_sweeps", Ptr: &c.GibbsSweeps, Flag: "gibbs-sweeps", Usage: "CD on bits (Gibbs chains): sweeps of the persistent chains per step"},
		{Key: "gwg_steps", Ptr: &c.GWGSteps, Optional: true, Absent: 40, Flag: "gwg-steps", Usage: "CD on bits (Gibbs-with-gradients chains): chain steps per training step"},
		{Key: "mlp_hidden", Ptr: &c.MLP.Hidden, Flag: "hidden", Usage: "hidden layer widths of the energy MLP (its depth is their number)"},
		{Key: "mlp_activation", Ptr: &c.MLP.Activation, Flag: "activation", Usage: "activation of the energy MLP"},
		{Key: "mlp_leaky_slope", Ptr: &c.MLP.LeakySlope},
		{Key: "mlp_init", Ptr: &c.MLP.Init, Flag: "init",
			Usage: fmt.Sprintf("initialisation of the energy MLP's dense layers %v: PyTorch's nn.Linear default (\"\" or pytorch), as the authors' code, or Xavier-normal weights with zero biases", nets.MLPInits)},
		{Key: "ema_decay", Ptr: &c.EMADecay, Flag: "ema", Usage: "decay of the parameter moving average used for evaluation"},
		// Checkpoints before the mixed methods have none of these.
		{Key: "mixed_columns", Ptr: &c.Mixed.Columns, Optional: true},
		{Key: "mixed_t", Ptr: &c.Mixed.T, Optional: true, Absent: DefaultMixed.T},
		{Key: "mixed_t_scale", Ptr: &c.Mixed.TimeScale, Optional: true, Absent: DefaultMixed.TimeScale},
		{Key: "mixed_sweeps", Ptr: &c.Mixed.Sweeps, Optional: true, Absent: DefaultMixed.Sweeps},
		{Key: "mixed_mala_steps", Ptr: &c.Mixed.MALASteps, Optional: true, Absent: DefaultMixed.MALASteps},
		{Key: "mixed_step_size", Ptr: &c.Mixed.StepSize, Optional: true, Absent: DefaultMixed.StepSize},
		{Key: "mixed_chains", Ptr: &c.Mixed.Chains, Optional: true, Absent: "data"},
	}
	for i := range list {
		list[i].Key = ParamPrefix + list[i].Key
	}
	return append(list,
		settings.Param{Key: optimizers.ParamLearningRate, Ptr: &c.LearningRate, Flag: "lr", Usage: "Adam learning rate"},
		// Checkpoints written before ε was a setting trained with GoMLX's 1e-7.
		settings.Param{Key: optimizers.ParamAdamEpsilon, Ptr: &c.AdamEpsilon, Optional: true, Absent: 1e-7})
}

// WithSettings returns c with GoMLX context settings applied
// ("toy_ed_t=0.5;learning_rate=3e-4", or "file:settings.txt", as
// commandline.ParseContextSettings reads them), validated.
func (c Config) WithSettings(text string) (Config, error) {
	c.MLP.Hidden = append([]int{}, c.MLP.Hidden...) // not shared with the caller's
	if err := settings.Apply(c.params(), text); err != nil {
		return c, fmt.Errorf("density: %w", err)
	}
	return c, c.Validate()
}

// Changes lists the settings in which c differs from base, as
// "name=value" sorted by name.
func (c Config) Changes(base Config) []string { return settings.Changes(c.params(), base.params()) }

// DeclareFlags declares on fs the short flags of the settings that have
// one (-ed-t, -hidden, -lr, …; defaults' values shown by -h) and returns
// the function that applies those the user gave to a Config, after the
// flag set is parsed: the settings table is each flag's one home. The
// flags are those of the kind of data defaults.Method is for: points of
// R^d (-ed-t, -cd-steps, -dsm-t, …) or bits (-bed-epsilon,
// -gibbs-sweeps, …), and the network's and optimiser's for both.
func DeclareFlags(fs *flag.FlagSet, defaults Config) func(*Config) error {
	binary := slices.Contains(BinaryMethods, defaults.Method)
	var declared []settings.Param
	for _, p := range defaults.params() {
		if kind, ok := flagKinds[strings.TrimPrefix(p.Key, ParamPrefix)]; !ok || kind == binary {
			declared = append(declared, p)
		}
	}
	flags := settings.DeclareFlags(fs, declared)
	return func(c *Config) error {
		c.MLP.Hidden = slices.Clone(c.MLP.Hidden) // not shared with the caller's
		if err := flags.Apply(c.params()); err != nil {
			return fmt.Errorf("density: %w", err)
		}
		if c.MLP.Init == nets.InitPyTorch {
			c.MLP.Init = "" // the same initialisation, named as a model that never set it
		}
		if c.Method != "dsm" {
			c.DSMVariance = 0 // -dsm-t is dsm's alone
		}
		return nil
	}
}

// flagKinds says which settings' flags are for one kind of data only:
// true for bits, false for points.
var flagKinds = map[string]bool{
	"ed_t": false, "ed_m": false, "ed_w": false, "cd_steps": false, "cd_reg": false, "dsm_variance": false,
	"bed_epsilon": true, "bed_m": true, "bed_w": true, "gibbs_sweeps": true, "gwg_steps": true,
}

// MethodConfigs is Configs for a command's -methods, a comma-separated
// list whose methods must be among allowed.
func MethodConfigs(list string, allowed []string, set string, edits ...func(*Config) error) ([]Config, error) {
	methods := strings.Split(list, ",")
	for i, m := range methods {
		methods[i] = strings.TrimSpace(m)
		if !slices.Contains(allowed, methods[i]) {
			return nil, fmt.Errorf("flag -methods: %q: want one of %v", methods[i], allowed)
		}
	}
	return Configs(methods, set, edits...)
}

// Configs returns one validated configuration per method:
// DefaultConfig(method), then each of edits in turn (a command's own
// defaults, the short flags given, DeclareFlags; nil ones are skipped),
// then the GoMLX settings text set (WithSettings; a command's -set), which
// may not change the method.
func Configs(methods []string, set string, edits ...func(*Config) error) ([]Config, error) {
	return ResumedConfigs(methods, set, nil, edits...)
}

// ResumedConfigs is Configs for methods that may resume: a method whose
// checkpoints(method) folder holds a checkpoint starts from the
// checkpoint's settings instead of DefaultConfig, so that a run resumes
// with the settings it started with though a default has changed since;
// edits and set apply on top, and Model.Restore refuses those that
// contradict the checkpoint. A nil checkpoints is Configs.
func ResumedConfigs(methods []string, set string, checkpoints func(method string) string, edits ...func(*Config) error) ([]Config, error) {
	var out []Config
	for _, method := range methods {
		cfg := DefaultConfig(method)
		if checkpoints != nil {
			dir := checkpoints(method)
			if _, err := checkpoint.Latest(dir); err == nil {
				if cfg, err = SavedConfig(dir); err != nil {
					return nil, fmt.Errorf("method %s: %w", method, err)
				}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("method %s: %w", method, err)
			}
		}
		for _, edit := range edits {
			if edit == nil {
				continue
			}
			if err := edit(&cfg); err != nil {
				return nil, fmt.Errorf("method %s: %w", method, err)
			}
		}
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("method %s: %w", method, err)
		}
		cfg, err := cfg.WithSettings(set)
		if err != nil {
			return nil, fmt.Errorf("flag -set: method %s: %w", method, err)
		}
		if cfg.Method != method {
			return nil, fmt.Errorf("flag -set: %smethod=%s: choose methods with -methods", ParamPrefix, cfg.Method)
		}
		out = append(out, cfg)
	}
	return out, nil
}

// SettingNames lists the names of the settings WithSettings accepts.
func SettingNames() []string {
	var c Config
	return settings.Names(c.params())
}

// energyScope holds the energy network's variables.
