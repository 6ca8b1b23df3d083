package density

import (
	"fmt"
	"math"

	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
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
	// Mixed are the settings of the methods for mixed rows (MixedMethods).
	Mixed MixedSettings
}

// DefaultBED is the Bernoulli energy discrepancy of the authors' Gray-code
// experiments: each bit flipped with probability 0.1, 32 negatives, w = 1.
var DefaultBED = losses.BernoulliEDConfig{Epsilon: 0.1, M: 32, W: 1}

// DefaultConfig is the paper's setting for the 2-D experiments; method
// "med" perturbs its numbers as DefaultMixedED.
func DefaultConfig(method string) Config {
	var dsmVariance float64
	if method == "dsm" {
		dsmVariance = losses.DefaultToyED.T
	}
	ed := losses.DefaultToyED
	if method == "med" {
		ed = DefaultMixedED
	}
	return Config{
		DSMVariance:  dsmVariance,
		Method:       method,
		ED:           ed,
		CD:           losses.DefaultToyCD,
		BED:          DefaultBED,
		CDSampler:    "gibbs",
		GibbsSweeps:  1,
		GWGSteps:     40,
		MLP:          nets.ToyEnergyMLP(),
		LearningRate: 1e-3,
		AdamEpsilon:  1e-8,
		EMADecay:     0.999,
		Mixed:        DefaultMixed,
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
	case "med", "mcd":
		if err := c.Mixed.validate(c.Method, c.ED); err != nil {
			return err
		}
	case "sm":
	case "dsm":
		if !(c.DSMVariance > 0) || math.IsInf(c.DSMVariance, 1) {
			return fmt.Errorf("denoising score matching noise variance = %v: must be a finite number > 0", c.DSMVariance)
		}
	default:
		return fmt.Errorf("method %q: want one of %v, for binary data %v, or for mixed rows %v", c.Method, Methods, BinaryMethods, MixedMethods)
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
