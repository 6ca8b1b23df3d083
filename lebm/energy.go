package lebm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
	"github.com/edlebm/edlebm/sampling"
)

// Variable scopes, relative to the context given to the graph functions.
const (
	// GeneratorScope holds the generator's variables.
	GeneratorScope = "generator"
	// PriorScope holds the prior energy MLP's variables.
	PriorScope = "prior"
)

// Graph-building functions below panic on error, the GoMLX way; Model
// recovers the panics at its API boundary.

// Decode returns the generator's images G(z) [B, H, W, C] for latents
// z [B, nz].
func Decode(ctx *context.Context, cfg Config, z *Node) *Node {
	compute := z.DType()
	if cfg.ComputeDType == "bfloat16" {
		compute = dtypes.BFloat16
	}
	return nets.GeneratorIn(scope(ctx, GeneratorScope), z, cfg.Generator, compute)
}

// EBMEnergy returns the learned part f(z) of the prior energy, one value
// per latent [B].
func EBMEnergy(ctx *context.Context, cfg Config, z *Node) *Node {
	return nets.EnergyMLP(scope(ctx, PriorScope), z, cfg.Prior)
}

// PriorEnergy returns the full prior energy U(z) = f(z) + ‖z‖²/(2σ0²) [B].
func PriorEnergy(ctx *context.Context, cfg Config, z *Node) *Node {
	base := MulScalar(ReduceSum(Square(z), 1), 1/(2*cfg.PriorSigma*cfg.PriorSigma))
	return Add(EBMEnergy(ctx, cfg, z), base)
}

// PosteriorEnergy returns U_post(z) = ‖x − G(z)‖²/(2σ²) + U(z) [B], the
// squared error summed over the pixels of each example: up to a constant,
// −log p(x, z). x is [B, H, W, C] as Decode returns, z is [B, nz].
func PosteriorEnergy(ctx *context.Context, cfg Config, x, z *Node) *Node {
	return Add(likelihoodEnergy(ctx, cfg, x, z), PriorEnergy(ctx, cfg, z))
}

// likelihoodEnergy is ‖x − G(z)‖²/(2σ²) per example [B].
func likelihoodEnergy(ctx *context.Context, cfg Config, x, z *Node) *Node {
	return MulScalar(squaredError(x, Decode(ctx, cfg, z)), 1/(2*cfg.Sigma*cfg.Sigma))
}

// squaredError is ‖x − y‖² per example [B] for images [B, H, W, C].
func squaredError(x, y *Node) *Node {
	if !x.Shape().Equal(y.Shape()) {
		panic(fmt.Errorf("lebm: images have shape %s; the generator makes %s", x.Shape(), y.Shape()))
	}
	return ReduceSum(Square(Sub(x, y)), 1, 2, 3)
}

// PosteriorSample runs Langevin dynamics on U_post from z0 [B, nz] for the
// images x and returns the final latents, with gradients stopped.
func PosteriorSample(ctx *context.Context, cfg Config, x, z0 *Node, langevin losses.LangevinConfig) *Node {
	mustValid(cfg)
	posterior := func(z *Node) *Node { return PosteriorEnergy(ctx, cfg, x, z) }
	return losses.Langevin(ctx, posterior, z0, langevin)
}

// PriorSample runs Langevin dynamics on the prior energy U from z0 [B, nz]
// and returns the final latents, with gradients stopped.
func PriorSample(ctx *context.Context, cfg Config, z0 *Node, langevin losses.LangevinConfig) *Node {
	mustValid(cfg)
	prior := func(z *Node) *Node { return PriorEnergy(ctx, cfg, z) }
	return losses.Langevin(ctx, prior, z0, langevin)
}

// GenerationSample runs steps proposals of cfg.GenerationSampler's kernel
// on the prior energy U from z0 [B, nz], with GenerationLangevin's step
// size,
// and returns the final latents (gradients stopped) and each chain's
// number of accepted proposals [B]: every step for Langevin, which has no
// rejection.
func GenerationSample(ctx *context.Context, cfg Config, z0 *Node, steps int) (z, accepted *Node) {
	mustValid(cfg)
	prior := func(z *Node) *Node { return PriorEnergy(ctx, cfg, z) }
	step := Scalar(z0.Graph(), z0.DType(), cfg.GenerationLangevin.StepSize)
	switch cfg.GenerationSampler {
	case SamplerMALA:
		z, rate := sampling.MALASteps(ctx, prior, z0, step, steps)
		return z, MulScalar(rate, float64(steps))
	case SamplerHMC:
		z, rate := sampling.HMCSteps(ctx, prior, z0, step, cfg.GenerationLeapfrogSteps, steps)
		return z, MulScalar(rate, float64(steps))
	}
	z = PriorSample(ctx, cfg, z0, withSteps(cfg.GenerationLangevin, steps))
	return z, MulScalar(OnesLike(ReduceSum(z, 1)), float64(steps))
}

// BaseSample draws n latents from N(0, I), the chains' starting point.
func BaseSample(ctx *context.Context, cfg Config, g *Graph, n int) *Node {
	return ctx.RandomNormal(g, shapes.Make(cfg.dtype(), n, cfg.Generator.Nz))
}

// Reconstruct returns G(z) for posterior samples z of x, from chains
// started at N(0, I) and run with langevin.
func Reconstruct(ctx *context.Context, cfg Config, x *Node, langevin losses.LangevinConfig) *Node {
	z0 := BaseSample(ctx, cfg, x.Graph(), x.Shape().Dimensions[0])
	return Decode(ctx, cfg, PosteriorSample(ctx, cfg, x, z0, langevin))
}

// Generate returns n images G(z) for prior samples z, from chains started
// at N(0, I) and run with langevin.
func Generate(ctx *context.Context, cfg Config, g *Graph, n int, langevin losses.LangevinConfig) *Node {
	return Decode(ctx, cfg, PriorSample(ctx, cfg, BaseSample(ctx, cfg, g, n), langevin))
}

// ScopeValues returns the values in g of the variables under the model
// scope (GeneratorScope or PriorScope), sorted by scope and name: the nodes
// to differentiate a loss with respect to one of the two models. The order
// is the same for a new model and one loaded from a checkpoint (whose
// context lists its variables in no fixed order).
func ScopeValues(ctx *context.Context, scope string, g *Graph) []*Node {
	var vars []*context.Variable
	ctx.InAbsPath("/" + scope).EnumerateVariablesInScope(func(v *context.Variable) {
		vars = append(vars, v)
	})
	slices.SortFunc(vars, func(a, b *context.Variable) int { return strings.Compare(a.ScopeAndName(), b.ScopeAndName()) })
	values := make([]*Node, len(vars))
	for i, v := range vars {
		values[i] = v.ValueGraph(g)
	}
	return values
}

// scope returns ctx in the given sub-scope, allowing variables to be both
// created and reused: the chains call each network many times per graph.
func scope(ctx *context.Context, name string) *context.Context {
	return ctx.In(name).Checked(false)
}

// dtype is the model's floating-point type; cfg has been validated.
func (c Config) dtype() dtypes.DType {
	if c.DType == "float64" {
		return dtypes.Float64
	}
	return dtypes.Float32
}
