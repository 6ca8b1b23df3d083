package lebm

import (
	"fmt"

	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
)

// The FLOP counts below (for roofline figures: achieved FLOP/s against a
// device's peak) follow nets.LayerFLOPs: 2 per multiply-add of the
// generator's transposed convolutions and the prior's matrix products,
// nothing for elementwise work. They count what the graphs compute after
// dead code is dropped (TestFLOPsMatchTheGraph checks them against the
// graphs' products): a Langevin step, say, needs the energy's gradient but
// not its value, so the prior's output layer is differentiated but not
// evaluated.

// TrainingFLOPs returns the floating-point operations of one training step
// (TrainStepGraph) on batch images: the posterior Langevin chain, the
// generator loss and its gradient, the prior loss of c.Method and its
// gradient (PriorUpdateFLOPs), and the metrics mean f(z_post) and, for
// contrastive divergence, mean f(z_prior).
func (c Config) TrainingFLOPs(batch int) (float64, error) {
	prior, err := c.PriorUpdateFLOPs(batch)
	if err != nil {
		return 0, err
	}
	gen, mlp := c.layerFLOPs()
	perExample := c.chainFLOPs(c.PosteriorLangevin, true) +
		nets.PassFLOPs(gen, false, true) + // generator loss and its weight gradient
		nets.PassFLOPs(mlp, false, false) // mean f(z_post)
	if c.Method == MethodCD {
		perExample += nets.PassFLOPs(mlp, false, false) // mean f(z_prior)
	}
	return float64(batch)*perExample + prior, nil
}

// PriorUpdateFLOPs returns the floating-point operations of the prior loss
// of c.Method at batch posterior samples and of its gradient with respect to
// the prior's weights (PriorLoss and its gradient, no metrics). Score
// matching differentiates the prior twice, and what that costs depends on
// the activation: only the paper's piecewise-linear prior (leaky ReLU) is
// modelled for the "exact" and "sliced" variants; for a smooth activation
// they return an error.
func (c Config) PriorUpdateFLOPs(batch int) (float64, error) {
	gen, mlp := c.layerFLOPs()
	energyAndWeightGrad := nets.PassFLOPs(mlp, false, true)
	score := priorScoreFLOPs(mlp)
	// The weight gradient of a loss of the score: a reverse pass through the
	// score's input-gradient products (every layer's weight gradient and, but
	// for the output layer, whose adjoint is constant, the gradient with
	// respect to its adjoint input); for a smooth activation also through
	// σ′(h) into the forward products of all layers but the unevaluated
	// output one (both operands, but for the first layer's input z).
	scoreWeightGrad := score
	if !c.Prior.PiecewiseLinear() {
		scoreWeightGrad += 2*(nets.PassFLOPs(mlp, false, false)-mlp[len(mlp)-1]) - mlp[0]
	}
	var perExample float64
	switch c.Method {
	case MethodED:
		// U at each sample and at its M perturbations, in one call.
		perExample = float64(1+c.ED.M) * energyAndWeightGrad
	case MethodCD:
		// Prior chains from N(0, I), one per sample; f at the positive and
		// negative samples.
		perExample = c.chainFLOPs(c.PriorLangevin, false) + 2*energyAndWeightGrad
	default:
		switch c.SMVariant {
		case SMFisher:
			// The posterior score (generator and prior, no gradient), the
			// prior's score and its weight gradient.
			perExample = nets.PassFLOPs(gen, true, false) + score + score + scoreWeightGrad
		case SMExact, SMSliced:
			if !c.Prior.PiecewiseLinear() {
				return 0, fmt.Errorf("lebm: no FLOP model for %q score matching with a %s prior (only %s)",
					c.SMVariant, c.Prior.Activation, nets.ActLeakyReLU)
			}
			// A piecewise-linear prior's Hessian is zero almost everywhere:
			// its products drop out of the Laplacian and of the
			// Hessian-vector products, leaving the score and the weight
			// gradient, once per projection for the sliced estimator.
			perExample = score + scoreWeightGrad
			if c.SMVariant == SMSliced {
				perExample *= float64(c.SMProjections)
			}
		}
	}
	return float64(batch) * perExample, nil
}

// PosteriorFLOPs returns the floating-point operations of sampling the
// posterior of batch images with langevin (Model.PosteriorSample with
// TestPosteriorLangevin): a generator and prior forward and input-gradient
// pass per step.
func (c Config) PosteriorFLOPs(batch int, langevin losses.LangevinConfig) float64 {
	return float64(batch) * c.chainFLOPs(langevin, true)
}

// GenerationFLOPs returns the floating-point operations of generating n
// images with prior Langevin chains of langevin (Model.Generate with
// GenerationLangevin): the chains on the prior, then the generator once.
func (c Config) GenerationFLOPs(n int, langevin losses.LangevinConfig) float64 {
	gen, _ := c.layerFLOPs()
	return float64(n) * (c.chainFLOPs(langevin, false) + nets.PassFLOPs(gen, false, false))
}

// chainFLOPs is one chain's cost: per Langevin step, the energy's gradient
// with respect to z, through the prior and, for the posterior, the
// generator (whose output the likelihood needs).
func (c Config) chainFLOPs(langevin losses.LangevinConfig, posterior bool) float64 {
	gen, mlp := c.layerFLOPs()
	step := priorScoreFLOPs(mlp)
	if posterior {
		step += nets.PassFLOPs(gen, true, false)
	}
	return float64(langevin.Steps) * step
}

// layerFLOPs returns the per-example forward costs of the generator's and
// the prior's layers.
func (c Config) layerFLOPs() (gen, mlp []float64) {
	return c.Generator.LayerFLOPs(), c.Prior.LayerFLOPs(c.Generator.Nz)
}

// priorScoreFLOPs is the cost of the prior's score ∇U(z) for one latent,
// given its layers' forward costs: the forward and input-gradient passes,
// without the output layer's forward product, whose value is unused.
func priorScoreFLOPs(mlp []float64) float64 {
	return nets.PassFLOPs(mlp, true, false) - mlp[len(mlp)-1]
}
