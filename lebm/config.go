package lebm

import (
	"fmt"
	"math"
	"slices"

	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
)

// Prior update methods (Config.Method).
const (
	// MethodED is energy discrepancy on the full prior energy U at the
	// posterior samples (ED-LEBM, the paper's method).
	MethodED = "ed"
	// MethodCD is contrastive divergence, mean f(z_post) − mean f(z_prior)
	// with z_prior from prior Langevin dynamics (CD-LEBM, Pang et al.).
	MethodCD = "cd"
	// MethodSM is score matching of the prior to the posterior samples
	// (SM-LEBM); Config.SMVariant picks the estimator.
	MethodSM = "sm"
)

// Methods lists the valid Config.Method values.
var Methods = []string{MethodED, MethodCD, MethodSM}

// Score-matching estimators (Config.SMVariant).
const (
	// SMFisher is the paper's SM-LEBM: ½ mean ‖∇log p_θ(z) − ∇log p(z|x)‖²
	// at z_post, the posterior score treated as data (no gradient through
	// it). Its value does not depend on θ (the prior's score cancels in the
	// difference), only its gradient does.
	SMFisher = "fisher"
	// SMExact is Hyvärinen's score matching of U with the posterior samples
	// as data: mean ½‖∇U‖² − ΔU, the Laplacian computed exactly (one extra
	// backward pass per latent dimension).
	SMExact = "exact"
	// SMSliced is sliced score matching of U with the posterior samples as
	// data, with Config.SMProjections random projections (Hutchinson).
	SMSliced = "sliced"
)

// SMVariants lists the valid Config.SMVariant values.
var SMVariants = []string{SMFisher, SMExact, SMSliced}

// DTypes lists the valid Config.DType values.
var DTypes = []string{"float32", "float64"}

// ComputeDTypes lists the valid Config.ComputeDType values.
var ComputeDTypes = []string{"", "bfloat16"}

// Config holds every setting of a latent EBM and its training.
type Config struct {
	// Data names the data set the model learns (DefaultConfig's argument),
	// so that a checkpoint says what it was trained on; "" when unknown
	// (checkpoints written before it was kept).
	Data string
	// AnomalyHoldout is the class left out of training under the
	// anomaly-detection protocol, -1 for none.
	AnomalyHoldout int

	// Generator is the generator architecture; Generator.Nz is the latent size.
	Generator nets.GeneratorConfig
	// Prior is the architecture of the prior energy MLP f.
	Prior nets.MLPConfig
	// Sigma is σ, the standard deviation of the Gaussian likelihood p(x|z).
	Sigma float64
	// PriorSigma is σ0, the standard deviation of the Gaussian base of the prior.
	PriorSigma float64

	// PosteriorLangevin samples the posterior during training.
	PosteriorLangevin losses.LangevinConfig
	// TestPosteriorLangevin samples the posterior at test time
	// (Model.PosteriorSample, Model.Reconstruct, Model.AnomalyScore).
	TestPosteriorLangevin losses.LangevinConfig
	// PriorLangevin samples the prior for contrastive divergence.
	PriorLangevin losses.LangevinConfig
	// GenerationLangevin samples the prior for generation (Model.PriorSample,
	// Model.Generate).
	GenerationLangevin losses.LangevinConfig
	// GenerationSampler is the kernel of the generation chains:
	// SamplerLangevin, the paper's unadjusted Langevin; SamplerMALA, the
	// same proposal (step GenerationLangevin.StepSize) with the
	// Metropolis–Hastings correction; or SamplerHMC, Hamiltonian Monte
	// Carlo, GenerationLeapfrogSteps leapfrog steps of that size a
	// proposal (one leapfrog step is MALA). MALA's and HMC's chains keep
	// the prior exactly (Model.GenerationAcceptance reports their
	// acceptance); GenerationLangevin.Steps counts their proposals.
	GenerationSampler string
	// GenerationLeapfrogSteps is the leapfrog steps of each HMC proposal.
	GenerationLeapfrogSteps int

	// Method is the prior update: MethodED, MethodCD or MethodSM.
	Method string
	// ED configures energy discrepancy (MethodED).
	ED losses.EDConfig
	// SMVariant is the score-matching estimator for MethodSM: SMFisher,
	// SMExact or SMSliced.
	SMVariant string
	// SMProjections is the number of random projections of SMSliced.
	SMProjections int

	// GeneratorLR and PriorLR are the Adam learning rates of the generator
	// and of the prior.
	GeneratorLR, PriorLR float64
	// Beta1 and Beta2 are the Adam moment decays of both optimizers.
	Beta1, Beta2 float64
	// AdamEpsilon is Adam's ε; 1e-8 as in PyTorch, which the authors used.
	AdamEpsilon float64
	// LRDecay multiplies both learning rates once per epoch (see
	// Model.EndEpoch): the learning rate in epoch e is lr·LRDecay^e. 1 means
	// no decay.
	LRDecay float64

	// DType is the floating-point type of the model: "float32" or "float64".
	DType string
	// ComputeDType, when "bfloat16" (with DType "float32"), runs the
	// generator's layers in bfloat16 — the GPU's fast matrix units — while
	// variables, optimizer state, energies and Langevin updates stay in
	// DType; "" computes everything in DType.
	ComputeDType string
	// ConvTImpl is the form of the generator's transposed convolutions, one
	// of nets.ConvTImpls: "" (or "auto") picks one per layer and backend
	// (nets.ConvTAuto); the others force one form everywhere, to compare
	// them. Every form computes the same function.
	ConvTImpl string
	// Seed seeds the initialisation and the random number generator; 0
	// draws a random seed.
	Seed int64
}

// FolderData is the Data of a model of a user's own images (package
// imagefolder), whose generator ImageGenerator chooses by image shape.
const FolderData = "folder"

// DefaultConfig returns the paper's settings for a data set: "svhn",
// "cifar10" (40 training posterior steps), "celeba64", "celeba128", "mnist"
// or "fashion-mnist" (both with the "mnist" generator). The method is ED.
// For FolderData it returns the same settings with the svhn generator,
// 32×32 RGB images; ImageGenerator gives the other shapes.
func DefaultConfig(dataset string) (Config, error) {
	preset := dataset
	switch dataset {
	case "fashion-mnist":
		preset = "mnist"
	case FolderData:
		preset = "svhn"
	}
	gen, err := nets.GeneratorPreset(preset)
	if err != nil {
		return Config{}, fmt.Errorf("lebm: no default configuration for data set %q: %w (or \"fashion-mnist\" or %q)", dataset, err, FolderData)
	}
	posteriorSteps := 20
	if dataset == "cifar10" {
		posteriorSteps = 40
	}
	return Config{
		Data:                    dataset,
		AnomalyHoldout:          -1,
		Generator:               gen,
		Prior:                   nets.LEBMPriorMLP(),
		Sigma:                   0.3,
		PriorSigma:              1,
		PosteriorLangevin:       losses.LangevinConfig{StepSize: 0.1, Steps: posteriorSteps},
		TestPosteriorLangevin:   losses.LangevinConfig{StepSize: 0.1, Steps: 100},
		PriorLangevin:           losses.LangevinConfig{StepSize: 0.4, Steps: 60},
		GenerationLangevin:      losses.LangevinConfig{StepSize: 0.2, Steps: 500},
		GenerationSampler:       SamplerLangevin,
		GenerationLeapfrogSteps: 5,
		Method:                  MethodED,
		ED:                      losses.DefaultLatentED,
		SMVariant:               SMFisher,
		SMProjections:           1,
		GeneratorLR:             1e-4,
		PriorLR:                 5e-5,
		Beta1:                   0.5,
		Beta2:                   0.999,
		AdamEpsilon:             1e-8,
		LRDecay:                 1,
		DType:                   "float32",
	}, nil
}

// ImageGenerators names the generator preset ImageGenerator uses for each
// image size.
var ImageGenerators = map[int]string{28: "mnist", 32: "svhn", 64: "celeba64", 128: "celeba128"}

// ImageGenerator returns the paper's generator for size×size images (one
// of the sizes of ImageGenerators) with channels output channels: its
// layers are the preset's, the last one making channels channels.
func ImageGenerator(size, channels int) (nets.GeneratorConfig, error) {
	preset, ok := ImageGenerators[size]
	if !ok {
		return nets.GeneratorConfig{}, fmt.Errorf("lebm: no generator for %d×%d images; sizes: 28, 32, 64, 128", size, size)
	}
	if channels != 1 && channels != 3 {
		return nets.GeneratorConfig{}, fmt.Errorf("lebm: generator of %d channels, want 1 or 3", channels)
	}
	gen, err := nets.GeneratorPreset(preset)
	if err != nil {
		return gen, err
	}
	gen.Layers[len(gen.Layers)-1].Out = channels
	return gen, nil
}

// The kernels of the generation chains (Config.GenerationSampler).
const (
	SamplerLangevin = "langevin"
	SamplerMALA     = "mala"
	SamplerHMC      = "hmc"
)

// Samplers lists the kernels of the generation chains.
var Samplers = []string{SamplerLangevin, SamplerMALA, SamplerHMC}

// Presets: named configurations beside the paper's (DefaultConfig).
const (
	// PresetPaper is DefaultConfig, the paper's settings.
	PresetPaper = "paper"
	// PresetPangCD is Pang et al. 2020's CD-LEBM, the baseline the paper
	// compares with: DefaultConfig with the CD prior update, prior
	// learning rate 2e-5 and learning-rate decay 0.998 per epoch, trained
	// in batches of PangCDBatch.
	PresetPangCD = "pang-cd"
)

// Presets lists the names PresetConfig accepts.
var Presets = []string{PresetPaper, PresetPangCD}

// PangCDBatch is the batch size of Pang et al.'s CD-LEBM runs.
const PangCDBatch = 100

// PresetConfig returns the configuration called preset (one of Presets)
// for a data set.
func PresetConfig(dataset, preset string) (Config, error) {
	cfg, err := DefaultConfig(dataset)
	if err != nil {
		return cfg, err
	}
	switch preset {
	case PresetPaper:
	case PresetPangCD:
		cfg.Method, cfg.PriorLR, cfg.LRDecay = MethodCD, 2e-5, 0.998
	default:
		return cfg, fmt.Errorf("lebm: preset %q: want one of %v", preset, Presets)
	}
	return cfg, nil
}

// Validate reports the first invalid setting, naming it and its value.
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("lebm: invalid configuration: %w", err)
	}
	return nil
}

func (c Config) validate() error {
	if c.AnomalyHoldout < -1 {
		return fmt.Errorf("AnomalyHoldout = %d: must be a class (≥ 0) or -1 for none", c.AnomalyHoldout)
	}
	if err := c.Generator.Validate(); err != nil {
		return err
	}
	if err := c.Prior.Validate(); err != nil {
		return fmt.Errorf("prior: %w", err)
	}
	for _, s := range []struct {
		name  string
		value float64
	}{
		{"Sigma (likelihood σ)", c.Sigma},
		{"PriorSigma (prior base σ0)", c.PriorSigma},
		{"GeneratorLR", c.GeneratorLR},
		{"PriorLR", c.PriorLR},
		{"AdamEpsilon", c.AdamEpsilon},
	} {
		if !(s.value > 0) || math.IsInf(s.value, 1) {
			return fmt.Errorf("%s = %v: must be a finite number > 0", s.name, s.value)
		}
	}
	for _, b := range []struct {
		name  string
		value float64
	}{{"Beta1", c.Beta1}, {"Beta2", c.Beta2}} {
		if !(b.value >= 0 && b.value < 1) {
			return fmt.Errorf("Adam %s = %v: must be in [0, 1)", b.name, b.value)
		}
	}
	if !(c.LRDecay > 0 && c.LRDecay <= 1) {
		return fmt.Errorf("LRDecay = %v: must be in (0, 1] (1 for no decay)", c.LRDecay)
	}
	for _, l := range []struct {
		name string
		cfg  losses.LangevinConfig
	}{
		{"PosteriorLangevin", c.PosteriorLangevin},
		{"TestPosteriorLangevin", c.TestPosteriorLangevin},
		{"PriorLangevin", c.PriorLangevin},
		{"GenerationLangevin", c.GenerationLangevin},
	} {
		if err := l.cfg.Validate(); err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
	}
	if !slices.Contains(Methods, c.Method) {
		return fmt.Errorf("Method = %q: must be one of %q", c.Method, Methods)
	}
	if !slices.Contains(Samplers, c.GenerationSampler) {
		return fmt.Errorf("GenerationSampler = %q: must be one of %q", c.GenerationSampler, Samplers)
	}
	if c.GenerationSampler != SamplerLangevin && c.GenerationLangevin.NoNoise {
		return fmt.Errorf("GenerationSampler %q with GenerationLangevin.NoNoise: its proposal needs its noise", c.GenerationSampler)
	}
	if c.GenerationLeapfrogSteps < 1 {
		return fmt.Errorf("GenerationLeapfrogSteps = %d: must be ≥ 1", c.GenerationLeapfrogSteps)
	}
	if err := c.ED.Validate(); err != nil {
		return fmt.Errorf("ED: %w", err)
	}
	if !slices.Contains(SMVariants, c.SMVariant) {
		return fmt.Errorf("SMVariant = %q: must be one of %q", c.SMVariant, SMVariants)
	}
	if c.SMProjections < 1 {
		return fmt.Errorf("SMProjections = %d: must be at least 1", c.SMProjections)
	}
	if !slices.Contains(DTypes, c.DType) {
		return fmt.Errorf("DType = %q: must be one of %q", c.DType, DTypes)
	}
	if c.ConvTImpl != "" && !slices.Contains(nets.ConvTImpls, nets.ConvTImpl(c.ConvTImpl)) {
		return fmt.Errorf("ConvTImpl = %q: must be \"\" or one of %v", c.ConvTImpl, nets.ConvTImpls)
	}
	if !slices.Contains(ComputeDTypes, c.ComputeDType) || (c.ComputeDType == "bfloat16" && c.DType != "float32") {
		return fmt.Errorf("ComputeDType = %q with DType %q: must be \"\" or, with float32, \"bfloat16\"", c.ComputeDType, c.DType)
	}
	return nil
}

// mustValid panics with cfg's validation error (graph-building style).
func mustValid(cfg Config) {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
}
