package density

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/losses"
)

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
	case "med", "mcd":
		return mixedLoss(ctx, energy, x, cfg)
	}
	panic(fmt.Errorf("density: method %q: want one of %v", cfg.Method, Methods))
}

// chainsScope holds the persistent chains of methods "bcd" and "mcd".
const chainsScope = "/chains"

// persistentChains advances the persistent chains of contrastive
// divergence on binary data — one per example of the batch x, kept in a
// variable of the model's context (so checkpoints keep them), started
// uniformly at random at the first step — by cfg's sampler under the
// current energy, and returns them.
func persistentChains(ctx *context.Context, energy losses.EnergyFn, x *Node, cfg Config) *Node {
	v, chains := persistentStart(ctx, "chains", x, ctx.RandomBernoulli(Scalar(x.Graph(), x.DType(), 0.5), x.Shape()))
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

// persistentStart returns the variable named name in chainsScope that
// keeps persistent chains shaped as the batch x (in checkpoints too), and
// where the chains start this step: noise at the first step, the kept
// chains after it. The caller stores the chains' new states in it.
func persistentStart(ctx *context.Context, name string, x, noise *Node) (*context.Variable, *Node) {
	g := x.Graph()
	v := ctx.InAbsPath(chainsScope).Checked(false).VariableWithValue(name, tensors.FromShape(x.Shape())).SetTrainable(false)
	first := Equal(optimizers.GetGlobalStepVar(ctx).ValueGraph(g), ScalarZero(g, dtypes.Int64))
	return v, Where(first, noise, v.ValueGraph(g))
}
