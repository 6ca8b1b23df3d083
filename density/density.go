// Package density trains energy-based models of low-dimensional data (the
// paper's 2-D density-estimation experiments) with energy discrepancy, score
// matching or contrastive divergence, and evaluates them: energies on grids,
// Langevin samples and the importance-sampled log-density error.
package density

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/ema"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"

	"github.com/edlebm/edlebm/internal/scopes"
	"github.com/edlebm/edlebm/internal/settings"
)

// Methods lists the training objectives for real-valued data (the points
// of the toy sets).
var Methods = []string{"ed", "sm", "cd", "dsm"}

// BinaryMethods lists the training objectives for binary data (values 0
// and 1): energy discrepancy with Bernoulli bit flips.
var BinaryMethods = []string{"bed", "bcd"}

// Config is one density-estimation run's settings.
type Config struct {
	// Method is "ed" (energy discrepancy), "sm" (exact score matching),
	// "cd" (contrastive divergence with Langevin negatives from the data)
	// or "dsm" (denoising score matching, the paper's comparison), for
	// points of the plane; "bed" (energy discrepancy with Bernoulli bit
	// flips) for binary data, such as the Gray-coded toy sets.
	Method string
	ED     losses.EDConfig
	CD     losses.CDConfig
	// BED is the setting of method "bed".
	BED losses.BernoulliEDConfig
	// CDSampler is what advances the persistent chains of method "bcd"
	// (contrastive divergence on binary data), one chain per example of
	// the batch, before each step: "gibbs", GibbsSweeps systematic Gibbs
	// sweeps (2 energies a bit: for few bits), or "gwg", GWGSteps steps of
	// Gibbs with gradients (one energy and gradient a step: for images).
	CDSampler   string
	GibbsSweeps int
	GWGSteps    int
	// DSMVariance is the variance t of denoising score matching's Gaussian
	// noise (method "dsm"; unset, and left out of JSON, for the others).
	DSMVariance float64 `json:",omitempty"`
	// MLP is the energy network; its input size is the data dimension.
	MLP          nets.MLPConfig
	LearningRate float64
	// AdamEpsilon is Adam's ε: 1e-8, PyTorch's default, which the authors'
	// code trains with (GoMLX's own default is 1e-7).
	AdamEpsilon float64
	// EMADecay is the decay of the parameter average used for evaluation.
	EMADecay float64
}

// DefaultBED is the Bernoulli energy discrepancy of the authors' Gray-code
// experiments: each bit flipped with probability 0.1, 32 negatives, w = 1.
var DefaultBED = losses.BernoulliEDConfig{Epsilon: 0.1, M: 32, W: 1}

// DefaultConfig is the paper's setting for the 2-D experiments.
func DefaultConfig(method string) Config {
	var dsmVariance float64
	if method == "dsm" {
		dsmVariance = losses.DefaultToyED.T
	}
	return Config{
		DSMVariance:  dsmVariance,
		Method:       method,
		ED:           losses.DefaultToyED,
		CD:           losses.DefaultToyCD,
		BED:          DefaultBED,
		CDSampler:    "gibbs",
		GibbsSweeps:  1,
		GWGSteps:     40,
		MLP:          nets.ToyEnergyMLP(),
		LearningRate: 1e-3,
		AdamEpsilon:  1e-8,
		EMADecay:     0.999,
	}
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	switch c.Method {
	case "ed":
		if err := c.ED.Validate(); err != nil {
			return err
		}
	case "cd":
		if err := c.CD.Validate(); err != nil {
			return err
		}
	case "bed":
		if err := c.BED.Validate(); err != nil {
			return err
		}
	case "bcd":
		switch {
		case c.CDSampler != "gibbs" && c.CDSampler != "gwg":
			return fmt.Errorf("contrastive divergence sampler %q: want gibbs or gwg", c.CDSampler)
		case c.CDSampler == "gibbs" && c.GibbsSweeps < 1:
			return fmt.Errorf("Gibbs sweeps per step = %d: must be ≥ 1", c.GibbsSweeps)
		case c.CDSampler == "gwg" && c.GWGSteps < 1:
			return fmt.Errorf("Gibbs-with-gradients steps per step = %d: must be ≥ 1", c.GWGSteps)
		}
	case "sm":
	case "dsm":
		if !(c.DSMVariance > 0) || math.IsInf(c.DSMVariance, 1) {
			return fmt.Errorf("denoising score matching noise variance = %v: must be a finite number > 0", c.DSMVariance)
		}
	default:
		return fmt.Errorf("method %q: want one of %v, or for binary data %v", c.Method, Methods, BinaryMethods)
	}
	if err := c.MLP.Validate(); err != nil {
		return fmt.Errorf("energy network: %w", err)
	}
	if !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 1) {
		return fmt.Errorf("learning rate = %v: must be a finite number > 0", c.LearningRate)
	}
	if !(c.AdamEpsilon > 0) || math.IsInf(c.AdamEpsilon, 1) {
		return fmt.Errorf("Adam ε = %v: must be a finite number > 0", c.AdamEpsilon)
	}
	if !(c.EMADecay >= 0 && c.EMADecay < 1) {
		return fmt.Errorf("EMA decay = %v: must be in [0, 1)", c.EMADecay)
	}
	return nil
}

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
	var out []Config
	for _, method := range methods {
		cfg := DefaultConfig(method)
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
const energyScope = "/energy"

// Energy returns the energy network as a losses.EnergyFn, with the
// variables of ctx's scope /energy (created on first use), plus the
// Bernoulli base of SetBernoulliBase when the model has one.
func Energy(ctx *context.Context, cfg Config) losses.EnergyFn {
	return withBase(ctx, energyAt(ctx.InAbsPath(energyScope).Checked(false), cfg))
}

// AveragedEnergy is Energy with the moving average of the network's
// parameters (the model evaluated, sampled and pictured).
func AveragedEnergy(ctx *context.Context, cfg Config) losses.EnergyFn {
	return withBase(ctx, energyAt(ema.AveragedContext(ctx, energyScope), cfg))
}

func energyAt(ctx *context.Context, cfg Config) losses.EnergyFn {
	return func(x *Node) *Node { return nets.EnergyMLP(ctx, x, cfg.MLP) }
}

// baseScope holds the means of the Bernoulli base (SetBernoulliBase).
const baseScope = "/bernoulli_base"

// withBase adds −log B(x) of the model's Bernoulli base B, or the
// quadratic ‖x‖²/(2σ²) of its Gaussian base, if it has one, to energy.
func withBase(ctx *context.Context, energy losses.EnergyFn) losses.EnergyFn {
	if g := ctx.InAbsPath(baseScope).GetVariable("gaussian_precision"); g != nil {
		return func(x *Node) *Node {
			precision := ConvertDType(g.ValueGraph(x.Graph()), x.DType())
			return Add(energy(x), MulScalar(Mul(precision, ReduceSum(Square(x), 1)), 0.5))
		}
	}
	v := ctx.InAbsPath(baseScope).GetVariable("log_odds")
	if v == nil {
		return energy
	}
	return func(x *Node) *Node {
		// log B(x) = Σ x·log p + (1−x)·log(1−p) = Σ x·logit(p) + log(1−p), and
		// log(1−p) = −softplus(logit p).
		logOdds := InsertAxes(v.ValueGraph(x.Graph()), 0)
		logB := Sub(ReduceSum(Mul(x, logOdds), 1), ReduceSum(Softplus(logOdds), 1))
		return Sub(energy(x), logB)
	}
}

// SetBernoulliBase gives a model of binary data the base distribution of
// Grathwohl et al.'s binary-image EBMs: independent bits with the given
// means (the training data's, typically), whose −log-probability is added
// to the network's energy, so the network learns only what the base misses.
// Means are clipped to [0.01, 0.99]. It must be called before the first
// training step; checkpoints keep the base.
func (m *Model) SetBernoulliBase(means []float64) error {
	if m.Step() != 0 || m.ctx.InAbsPath(baseScope).GetVariable("log_odds") != nil || m.ctx.InAbsPath(baseScope).GetVariable("gaussian_precision") != nil {
		return errors.New("density: a base is set once, before training")
	}
	logOdds := make([]float32, len(means))
	for i, p := range means {
		if math.IsNaN(p) {
			return fmt.Errorf("density: Bernoulli base mean %d is NaN", i)
		}
		p = min(max(p, 0.01), 0.99)
		logOdds[i] = float32(math.Log(p / (1 - p)))
	}
	m.ctx.InAbsPath(baseScope).VariableWithValue("log_odds", logOdds).SetTrainable(false)
	return nil
}

// SetGaussianBase gives a model of real vectors the base N(0, std²I),
// whose energy ‖x‖²/(2·std²) is added to the network's: exp(−E) is then
// integrable over ℝ^d whenever the network grows slower than quadratically
// (a softplus MLP grows linearly), so the model has a log-likelihood, and
// the network learns only what the base misses. It must be called before
// the first training step; checkpoints keep the base.
func (m *Model) SetGaussianBase(std float64) error {
	scope := m.ctx.InAbsPath(baseScope)
	if m.Step() != 0 || scope.GetVariable("gaussian_precision") != nil || scope.GetVariable("log_odds") != nil {
		return errors.New("density: a base is set once, before training")
	}
	if !(std > 0) || math.IsInf(std, 1) {
		return fmt.Errorf("density: Gaussian base standard deviation %v, want a finite number > 0", std)
	}
	scope.VariableWithValue("gaussian_precision", float32(1/(std*std))).SetTrainable(false)
	return nil
}

// Loss builds the training loss of cfg.Method on the batch x.
func Loss(ctx *context.Context, x *Node, cfg Config) *Node {
	energy := Energy(ctx, cfg)
	switch cfg.Method {
	case "ed":
		return losses.EnergyDiscrepancy(ctx, energy, x, cfg.ED)
	case "sm":
		return losses.ScoreMatching(energy, x)
	case "cd":
		return losses.ContrastiveDivergence(ctx, energy, x, cfg.CD)
	case "dsm":
		return losses.DenoisingScoreMatching(ctx, energy, x, math.Sqrt(cfg.DSMVariance))
	case "bed":
		return losses.BernoulliEnergyDiscrepancy(ctx, energy, x, cfg.BED)
	case "bcd":
		return losses.ContrastiveDivergenceWithNegatives(energy, x, persistentChains(ctx, energy, x, cfg), 0)
	}
	panic(fmt.Errorf("density: method %q: want one of %v", cfg.Method, Methods))
}

// chainsScope holds the persistent Gibbs chains of method "bcd".
const chainsScope = "/chains"

// persistentChains advances the persistent chains of contrastive
// divergence on binary data — one per example of the batch x, kept in a
// variable of the model's context (so checkpoints keep them), started
// uniformly at random at the first step — by cfg's sampler under the
// current energy, and returns them.
func persistentChains(ctx *context.Context, energy losses.EnergyFn, x *Node, cfg Config) *Node {
	g := x.Graph()
	v := ctx.InAbsPath(chainsScope).Checked(false).VariableWithValue("chains", tensors.FromShape(x.Shape())).SetTrainable(false)
	first := Equal(optimizers.GetGlobalStepVar(ctx).ValueGraph(g), ScalarZero(g, dtypes.Int64))
	half := Scalar(g, x.DType(), 0.5)
	chains := Where(first, ctx.RandomBernoulli(half, x.Shape()), v.ValueGraph(g))
	if cfg.CDSampler == "gwg" {
		chains, _ = losses.GibbsWithGradients(ctx, energy, chains, cfg.GWGSteps)
	} else {
		for range cfg.GibbsSweeps {
			chains = losses.GibbsSweep(ctx, energy, chains)
		}
	}
	v.SetValueGraph(chains)
	return chains
}

// Model is an energy network being trained on a stream of data batches,
// with a moving average of its parameters for evaluation.
type Model struct {
	cfg      Config
	backend  backends.Backend
	ctx      *context.Context
	trainer  *train.Trainer
	energies *context.Exec
}

// New creates a model with freshly initialised parameters; seed fixes the
// initialisation and the losses' noise.
func New(backend backends.Backend, cfg Config, seed int64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(seed); err != nil {
		return nil, err
	}
	settings.Set(ctx, cfg.params())
	modelFn := func(ctx *context.Context, _ any, inputs []*Node) []*Node {
		g := inputs[0].Graph()
		train.AddLoss(ctx, Loss(ctx, inputs[0], cfg))
		train.AddPerStepUpdateGraphFn(ctx, g, func(ctx *context.Context, g *Graph) {
			ema.UpdateGraph(ctx, g, energyScope, cfg.EMADecay)
		})
		return nil
	}
	m := &Model{cfg: cfg, backend: backend, ctx: ctx}
	m.trainer = train.NewTrainer(backend, ctx, modelFn, nil, optimizers.Adam().Epsilon(cfg.AdamEpsilon).Done(), nil, nil)
	var err error
	m.energies, err = context.NewExec(backend, ctx, func(ctx *context.Context, x *Node) *Node {
		return AveragedEnergy(ctx, cfg)(x)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Trainer is the GoMLX trainer of the model, for use with train.Loop.
func (m *Model) Trainer() *train.Trainer { return m.trainer }

// NewLoop returns GoMLX's training loop over the model's trainer, which
// stops at the first step whose loss is NaN or infinite with CheckFinite's
// error (it names the step).
func (m *Model) NewLoop() *train.Loop {
	loop := train.NewLoop(m.trainer)
	loop.OnStep("divergence guard", 0, func(_ *train.Loop, metrics []*tensors.Tensor) error {
		return CheckFinite(m.Step(), toFloat64(metrics[0]))
	})
	return loop
}

// Context holds the model's variables, optimizer state and RNG state.
func (m *Model) Context() *context.Context { return m.ctx }

// ErrNonFinite is wrapped by errors reporting a NaN or infinite loss.
var ErrNonFinite = errors.New("non-finite value")

// TrainStep runs one optimisation step on the batch x [B, D] and returns the
// loss; a NaN or infinite loss is an error wrapping ErrNonFinite.
func (m *Model) TrainStep(x *tensors.Tensor) (float64, error) {
	metrics, err := m.trainer.TrainStep(nil, []*tensors.Tensor{x}, nil)
	if err != nil {
		return 0, err
	}
	loss := toFloat64(metrics[0])
	if err := CheckFinite(optimizers.GetGlobalStep(m.ctx), loss); err != nil {
		return loss, err
	}
	return loss, nil
}

// CheckFinite returns an error naming step when loss is NaN or infinite.
func CheckFinite(step int64, loss float64) error {
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return fmt.Errorf("step %d: loss is %v: %w (training diverged)", step, loss, ErrNonFinite)
	}
	return nil
}

// Energies evaluates the averaged-parameter energy at n points given flat
// (n × dim values).
func (m *Model) Energies(points []float32, dim int) ([]float64, error) {
	if dim <= 0 || len(points)%dim != 0 {
		return nil, fmt.Errorf("density: %d values are not a whole number of %d-dimensional points", len(points), dim)
	}
	if !m.hasAverages() {
		return nil, errors.New("density: the model has not been trained yet (no parameter averages)")
	}
	out, err := m.energies.Exec(tensors.FromFlatDataAndDimensions(points, len(points)/dim, dim))
	if err != nil {
		return nil, err
	}
	return float64sOf(out[0]), nil
}

func (m *Model) hasAverages() bool {
	found := false
	m.ctx.EnumerateVariables(func(v *context.Variable) {
		found = found || scopes.Within(v.Scope(), ema.Prefix)
	})
	return found
}

func toFloat64(t *tensors.Tensor) float64 {
	switch v := t.Value().(type) {
	case float32:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Errorf("density: want a float scalar, got %s", t.Shape()))
}

// float64sOf copies the values of a float tensor as float64.
func float64sOf(t *tensors.Tensor) []float64 {
	var out []float64
	t.MustConstFlatData(func(flat any) {
		switch v := flat.(type) {
		case []float32:
			out = make([]float64, len(v))
			for i, x := range v {
				out[i] = float64(x)
			}
		case []float64:
			out = append(out, v...)
		}
	})
	return out
}

// TrainOnPoints trains a model for the given epochs over the flat
// dim-dimensional data points (reshuffled every epoch), and returns the loss
// of every step and the averaged energies at the flat points eval. Training
// stops at the first non-finite loss, returning the history so far and an
// error wrapping ErrNonFinite (the energies are then nil).
func TrainOnPoints(b backends.Backend, cfg Config, seed int64, data []float32, dim, batch, epochs int, eval []float32) (history, energies []float64, err error) {
	n := 0
	if dim > 0 { // checked before dividing by it
		n = len(data) / dim
	}
	if dim <= 0 || n*dim != len(data) || batch < 1 || batch > n {
		return nil, nil, fmt.Errorf("density: %d values, dimension %d, batch %d: want whole points and 1 ≤ batch ≤ points", len(data), dim, batch)
	}
	model, err := New(b, cfg, seed)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	buf := make([]float32, batch*dim)
	for range epochs {
		perm := rng.Perm(n)
		for start := 0; start+batch <= n; start += batch {
			for i, p := range perm[start : start+batch] {
				copy(buf[i*dim:(i+1)*dim], data[p*dim:(p+1)*dim])
			}
			loss, err := model.TrainStep(tensors.FromFlatDataAndDimensions(buf, batch, dim))
			history = append(history, loss)
			if err != nil {
				return history, nil, err
			}
		}
	}
	energies, err = model.Energies(eval, dim)
	return history, energies, err
}

// Step is the number of training steps taken.
func (m *Model) Step() int64 { return optimizers.GetGlobalStep(m.ctx) }

// Save writes the whole training state — parameters, their averages, the
// optimizer's moments, the step and the random number generator state —
// into dir, atomically (see package checkpoint).
func (m *Model) Save(dir string) error {
	return checkpoint.Save(m.ctx, dir, m.Step())
}

// Restore loads the newest checkpoint in dir into a model fresh from New,
// so training continues exactly where the saved run stopped. A checkpoint
// of a model with other settings is refused, naming them.
func (m *Model) Restore(dir string) error {
	if m.Step() != 0 {
		return fmt.Errorf("density: restoring from %s: the model has already trained %d steps", dir, m.Step())
	}
	if err := checkpoint.Load(m.ctx, dir); err != nil {
		return fmt.Errorf("density: %w", err)
	}
	var saved Config
	if err := settings.Get(m.ctx, saved.params()); err != nil {
		return fmt.Errorf("density: the checkpoint in %s has no model settings (%w); it predates them or is not a density model's", dir, err)
	}
	if diff := m.cfg.Changes(saved); len(diff) > 0 {
		return fmt.Errorf("density: %s holds a model with other settings (this one has %s)", dir, strings.Join(diff, ", "))
	}
	// Checkpoints bring every variable back trainable; only the network's are.
	for v := range m.ctx.IterVariables() {
		v.SetTrainable(scopes.Within(v.Scope(), energyScope))
	}
	return nil
}
