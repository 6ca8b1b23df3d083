package nets

import (
	"fmt"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
)

// Activation names accepted by MLPConfig.
const (
	ActSoftplus  = "softplus"
	ActLeakyReLU = "leaky_relu"
	ActSwish     = "swish"
	ActTanh      = "tanh"
)

// MLPActivations lists the valid MLPConfig.Activation values.
var MLPActivations = []string{ActSoftplus, ActLeakyReLU, ActSwish, ActTanh}

// Dense-layer initialisations accepted by MLPConfig.Init.
const (
	// InitPyTorch is PyTorch's nn.Linear default, which the authors' codes
	// keep for their dense layers: weights and biases uniform in
	// ±1/√fan_in. The default ("" means it too).
	InitPyTorch = "pytorch"
	// InitXavier is Xavier-normal weights, std √(2/(fan_in+fan_out)), and
	// zero biases: what this project used before matching the authors.
	InitXavier = "xavier"
)

// MLPInits lists the valid MLPConfig.Init values.
var MLPInits = []string{InitPyTorch, InitXavier}

// MLPConfig describes an energy MLP: dense layers of widths Hidden, each
// followed by Activation, then a dense layer to one output.
type MLPConfig struct {
	Hidden     []int
	Activation string
	// LeakySlope is the negative-side slope of "leaky_relu", in [0, 1).
	LeakySlope float64
	// Init is the dense layers' initialisation, one of MLPInits; "" is
	// InitPyTorch. It matters only when the variables are created.
	Init string `json:",omitempty"`
}

// LEBMPriorMLP is the latent EBM prior f(z): nz→200→200→1, LeakyReLU 0.1.
func LEBMPriorMLP() MLPConfig {
	return MLPConfig{Hidden: []int{200, 200}, Activation: ActLeakyReLU, LeakySlope: 0.1}
}

// ToyEnergyMLP is the 2-D toy density energy: 2→128→128→128→128→1, softplus.
// Softplus is smooth, as score matching's Laplacian requires.
func ToyEnergyMLP() MLPConfig {
	return MLPConfig{Hidden: []int{128, 128, 128, 128}, Activation: ActSoftplus}
}

// Validate reports the first invalid setting, naming it and its value.
func (c MLPConfig) Validate() error {
	for i, width := range c.Hidden {
		if width < 1 {
			return fmt.Errorf("MLP hidden layer %d width = %d: must be at least 1", i, width)
		}
	}
	switch c.Activation {
	case ActSoftplus, ActSwish, ActTanh:
	case ActLeakyReLU:
		if !(c.LeakySlope >= 0 && c.LeakySlope < 1) {
			return fmt.Errorf("MLP leaky_relu slope = %v: must be in [0, 1)", c.LeakySlope)
		}
	default:
		return fmt.Errorf("MLP activation %q: must be one of %v", c.Activation, MLPActivations)
	}
	if c.Init != "" && !slices.Contains(MLPInits, c.Init) {
		return fmt.Errorf("MLP init %q: must be one of %v", c.Init, MLPInits)
	}
	return nil
}

// EnergyMLP maps x [B, D] to one energy per example, [B]. Layer i keeps its
// variables in scope "layer_<i>" (the output layer is the last):
// "weights" [in, out] and "biases" [out], initialised as cfg.Init says; the
// variables take x's dtype. Its matrix products carry their own gradients,
// so the energy can be differentiated to any order, as score matching needs
// (Laplacian, then its gradient with respect to the weights). Calling it
// again in the same graph needs ctx.Reuse() after the first call.
// It panics if cfg is invalid or x is not rank 2.
func EnergyMLP(ctx *context.Context, x *Node, cfg MLPConfig) *Node {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Errorf("nets: EnergyMLP: %w", err))
	}
	if x.Rank() != 2 {
		panic(fmt.Errorf("nets: EnergyMLP: x has shape %s; want [batch, features]", x.Shape()))
	}
	h := x
	for i, width := range cfg.Hidden {
		h = activate(dense(ctx.In(fmt.Sprintf("layer_%d", i)), h, width, cfg.Init), cfg)
	}
	out := dense(ctx.In(fmt.Sprintf("layer_%d", len(cfg.Hidden))), h, 1, cfg.Init)
	return Reshape(out, x.Shape().Dimensions[0])
}

// PiecewiseLinear reports whether the activation is piecewise linear
// (leaky ReLU): the MLP's second derivatives are then zero almost
// everywhere, and automatic differentiation drops their products.
func (c MLPConfig) PiecewiseLinear() bool { return c.Activation == ActLeakyReLU }

// softplus is log(1 + eˣ) as max(x, 0) + log(1 + e^−|x|), which never
// overflows. GoMLX's Softplus computes the last term with Log1p, which XLA
// CPU evaluates by a libm call per element (3× the time of Log here,
// docs/xla.md), behind IsFinite and Where guards that a single input does
// not need. 1 + e^−|x| lies in (1, 2], so Log loses at most an ulp of 1:
// below 1.2e-7 (float32) or 2.3e-16 (float64) in absolute terms. Its
// derivatives, from automatic differentiation, are σ(x) and σ(x)(1 − σ(x)).
func softplus(x *Node) *Node {
	return Add(Max(x, ZerosLike(x)), Log(OnePlus(Exp(Neg(Abs(x))))))
}

// activate applies cfg's activation; cfg has been validated.
func activate(x *Node, cfg MLPConfig) *Node {
	switch cfg.Activation {
	case ActSoftplus:
		return softplus(x)
	case ActLeakyReLU:
		return activations.LeakyReluWithAlpha(x, cfg.LeakySlope)
	case ActSwish:
		return activations.Swish(x)
	default:
		return Tanh(x)
	}
}
