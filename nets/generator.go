package nets

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
)

// GeneratorLeakySlope is the LeakyReLU slope between generator layers.
const GeneratorLeakySlope = 0.2

// GeneratorConfig describes a DCGAN-style generator: z [B, Nz] is read as a
// 1×1 image with Nz channels and passed through Layers, transposed
// convolutions with biases, LeakyReLU between them and tanh after the last.
// The last layer's Out is the number of image channels.
type GeneratorConfig struct {
	Nz     int
	Layers []ConvTLayer
}

// generatorPresets are the paper's generators (Pang et al. 2020's, which the paper adopts: its appendix "Experimental Details of LEBMs"),
// with ngf the base channel count.
var generatorPresets = map[string]func() GeneratorConfig{
	// SVHN 32²: ngf 64, 4² → 8² → 16² → 32².
	"svhn": func() GeneratorConfig {
		return GeneratorConfig{Nz: 100, Layers: []ConvTLayer{
			{512, 4, 1, 0}, {256, 4, 2, 1}, {128, 4, 2, 1}, {3, 4, 2, 1}}}
	},
	// CIFAR-10 32²: ngf 128, 8² → 16² → 32² → 32².
	"cifar10": func() GeneratorConfig {
		return GeneratorConfig{Nz: 128, Layers: []ConvTLayer{
			{1024, 8, 1, 0}, {512, 4, 2, 1}, {256, 4, 2, 1}, {3, 3, 1, 1}}}
	},
	// CelebA 64²: ngf 128, 4² → 8² → 16² → 32² → 64².
	"celeba64": func() GeneratorConfig {
		return GeneratorConfig{Nz: 100, Layers: []ConvTLayer{
			{1024, 4, 1, 0}, {512, 4, 2, 1}, {256, 4, 2, 1}, {128, 4, 2, 1}, {3, 4, 2, 1}}}
	},
	// CelebA 128² is our choice, not the paper's: celeba64 with one more
	// (4,2,1) layer, 8ngf → 4ngf → 2ngf → ngf → ngf/2 → 3.
	"celeba128": func() GeneratorConfig {
		return GeneratorConfig{Nz: 100, Layers: []ConvTLayer{
			{1024, 4, 1, 0}, {512, 4, 2, 1}, {256, 4, 2, 1}, {128, 4, 2, 1}, {64, 4, 2, 1}, {3, 4, 2, 1}}}
	},
	// MNIST 28², one channel: ngf 16, 4² → 7² → 14² → 28².
	"mnist": func() GeneratorConfig {
		return GeneratorConfig{Nz: 16, Layers: []ConvTLayer{
			{128, 4, 1, 0}, {64, 3, 2, 1}, {32, 4, 2, 1}, {1, 4, 2, 1}}}
	},
}

// GeneratorPresetNames lists the names GeneratorPreset accepts, sorted.
func GeneratorPresetNames() []string {
	names := make([]string, 0, len(generatorPresets))
	for name := range generatorPresets {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// GeneratorPreset returns the generator of the named data set: "svhn",
// "cifar10", "celeba64", "celeba128" or "mnist".
func GeneratorPreset(name string) (GeneratorConfig, error) {
	preset, ok := generatorPresets[name]
	if !ok {
		return GeneratorConfig{}, fmt.Errorf("unknown generator preset %q; valid presets: %s",
			name, strings.Join(GeneratorPresetNames(), ", "))
	}
	return preset(), nil
}

// Validate reports the first setting that cannot build a generator: a
// non-positive size, or a layer whose output would be empty.
func (c GeneratorConfig) Validate() error {
	if c.Nz < 1 {
		return fmt.Errorf("generator nz = %d: must be at least 1", c.Nz)
	}
	if len(c.Layers) == 0 {
		return fmt.Errorf("generator has no layers: need at least one transposed convolution")
	}
	size := 1
	for i, l := range c.Layers {
		if l.Out < 1 || l.Kernel < 1 || l.Stride < 1 || l.Padding < 0 {
			return fmt.Errorf("generator layer %d %+v: out channels, kernel and stride must be ≥ 1 and padding ≥ 0", i, l)
		}
		next := ConvTransposeOutputSize(size, l.Kernel, l.Stride, l.Padding)
		if next < 1 {
			return fmt.Errorf("generator layer %d %+v turns a %d×%d input into %d×%d: output must be at least 1×1",
				i, l, size, size, next, next)
		}
		size = next
	}
	return nil
}

// OutputShape returns the height, width and channels of the generated
// images, following the layers from the 1×1 latent input. Meaningful for a
// config that passes Validate.
func (c GeneratorConfig) OutputShape() (h, w, ch int) {
	size := 1
	for _, l := range c.Layers {
		size = ConvTransposeOutputSize(size, l.Kernel, l.Stride, l.Padding)
	}
	if len(c.Layers) > 0 {
		ch = c.Layers[len(c.Layers)-1].Out
	}
	return size, size, ch
}

// Generator maps latent codes z [B, Nz] to images [B, H, W, C] in (−1, 1)
// (see OutputShape). Layer i keeps its variables in scope "layer_<i>"; see
// ConvTranspose2DLayer for their shapes and initialisation. As with any
// GoMLX layer, calling it again in the same graph (a Langevin chain does)
// needs ctx.Reuse() after the first call. It panics if cfg is invalid or z
// is not [B, Nz].
func Generator(ctx *context.Context, z *Node, cfg GeneratorConfig) *Node {
	return GeneratorIn(ctx, z, cfg, z.DType())
}

// GeneratorIn is Generator with its layers computed in the floating-point
// type compute (BFloat16, say, for the GPU's fast matrix units) while its
// variables, z and the images keep z's dtype: mixed precision. The final
// tanh runs in z's dtype.
func GeneratorIn(ctx *context.Context, z *Node, cfg GeneratorConfig, compute dtypes.DType) *Node {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Errorf("nets: Generator: %w", err))
	}
	if z.Rank() != 2 || z.Shape().Dimensions[1] != cfg.Nz {
		panic(fmt.Errorf("nets: Generator: z has shape %s; want [batch, %d]", z.Shape(), cfg.Nz))
	}
	if !compute.IsFloat() {
		panic(fmt.Errorf("nets: Generator: compute dtype %s; want a floating-point type", compute))
	}
	x := convertTo(Reshape(z, z.Shape().Dimensions[0], 1, 1, cfg.Nz), compute)
	for i, layer := range cfg.Layers {
		if i > 0 {
			x = activations.LeakyReluWithAlpha(x, GeneratorLeakySlope)
		}
		x = convTranspose2DLayer(ctx.In(fmt.Sprintf("layer_%d", i)), x, layer, true, z.DType())
	}
	return Tanh(convertTo(x, z.DType()))
}

// convertTo converts x to dtype, adding no node when it already is.
func convertTo(x *Node, dtype dtypes.DType) *Node {
	if x.DType() == dtype {
		return x
	}
	return ConvertDType(x, dtype)
}
