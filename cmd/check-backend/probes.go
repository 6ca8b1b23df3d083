package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/losses"
)

// inputs are the host-drawn arrays every probe reads, stored in the
// reference so that both backends see the same numbers (their random
// streams differ).
type inputs struct {
	Images  []float32 `json:"images"`   // [B, H, W, C], uniform in [−1, 1]
	Z       []float32 `json:"z"`        // [B, nz], N(0, I): the latents probed
	Xi      []float32 `json:"xi"`       // [B, nz]: ED's ξ
	XiPrime []float32 `json:"xi_prime"` // [B, M, nz]: ED's ξ′
	ZNeg    []float32 `json:"z_neg"`    // [B, nz]: CD's negative samples
}

// drawInputs draws the inputs for batch examples of cfg's shapes from seed.
func drawInputs(cfg lebm.Config, batch int, seed uint64) inputs {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	normal := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	h, w, c := cfg.Generator.OutputShape()
	images := make([]float32, batch*h*w*c)
	for i := range images {
		images[i] = float32(2*rng.Float64() - 1)
	}
	nz := cfg.Generator.Nz
	return inputs{Images: images, Z: normal(batch * nz), Xi: normal(batch * nz),
		XiPrime: normal(batch * cfg.ED.M * nz), ZNeg: normal(batch * nz)}
}

// validate checks the inputs' sizes against cfg's shapes: a reference of
// another model fails here rather than in the graph.
func (in inputs) validate(cfg lebm.Config, batch int) error {
	h, w, c := cfg.Generator.OutputShape()
	nz := cfg.Generator.Nz
	for _, a := range []struct {
		name      string
		got, want int
	}{
		{"images", len(in.Images), batch * h * w * c}, {"z", len(in.Z), batch * nz}, {"xi", len(in.Xi), batch * nz},
		{"xi_prime", len(in.XiPrime), batch * cfg.ED.M * nz}, {"z_neg", len(in.ZNeg), batch * nz},
	} {
		if a.got != a.want {
			return fmt.Errorf("input %s has %d values; the model wants %d", a.name, a.got, a.want)
		}
	}
	return nil
}

// tensorOf is a float32 tensor of the given dimensions holding v.
func tensorOf(v []float32, dims ...int) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(v, dims...)
}

// probeNames are the deterministic quantities compared, in the order
// computeProbes returns them.
var probeNames = []string{
	"G(z)",                           // the generator's images
	"U_post(x, z)",                   // posterior energy per example
	"∇z U_post(x, z)",                // posterior score
	"prior loss",                     // the method's loss, with the stored noise
	"∇θ prior loss (per tensor)",     // ‖gradient‖ of each prior variable
	"∇θ generator loss (per tensor)", // ‖gradient‖ of each generator variable
}

// computeProbes evaluates the probes of model's current variables on in.
// The prior loss is the method's with the stored noise: ED with ξ and ξ′,
// CD against the stored negatives, SM (deterministic) as in training.
func computeProbes(b backends.Backend, model *lebm.Model, in inputs, batch int) (map[string][]float64, error) {
	cfg := model.Config()
	h, w, c := cfg.Generator.OutputShape()
	nz := cfg.Generator.Nz
	exec, err := context.NewExec(b, model.Context().Reuse(), func(ctx *context.Context, args []*Node) []*Node {
		x, z, xi, xiPrime, zNeg := args[0], args[1], args[2], args[3], args[4]
		prior := func(z *Node) *Node { return lebm.PriorEnergy(ctx, cfg, z) }
		posterior := func(z *Node) *Node { return lebm.PosteriorEnergy(ctx, cfg, x, z) }
		uPost, score := losses.EnergyGradient(posterior, z)

		var priorLoss *Node
		switch cfg.Method {
		case lebm.MethodED:
			priorLoss = losses.EnergyDiscrepancyWithNoise(prior, z, xi, xiPrime, cfg.ED)
		case lebm.MethodCD:
			f := func(z *Node) *Node { return lebm.EBMEnergy(ctx, cfg, z) }
			priorLoss = losses.ContrastiveDivergenceWithNegatives(f, z, zNeg, 0)
		default:
			priorLoss, _ = lebm.PriorLoss(ctx, cfg, x, z)
		}
		images := lebm.Decode(ctx, cfg, z)
		generatorLoss := ReduceAllMean(ReduceSum(Square(Sub(x, images)), 1, 2, 3))
		return []*Node{images, uPost, score, priorLoss,
			gradientNorms(ctx, lebm.PriorScope, priorLoss), gradientNorms(ctx, lebm.GeneratorScope, generatorLoss)}
	})
	if err != nil {
		return nil, err
	}
	defer exec.Finalize()
	outs, err := exec.Exec(tensorOf(in.Images, batch, h, w, c), tensorOf(in.Z, batch, nz), tensorOf(in.Xi, batch, nz),
		tensorOf(in.XiPrime, batch, cfg.ED.M, nz), tensorOf(in.ZNeg, batch, nz))
	if err != nil {
		return nil, err
	}
	probes := map[string][]float64{}
	for i, out := range outs {
		values, err := float64s(out)
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", probeNames[i], err)
		}
		probes[probeNames[i]] = values
		out.FinalizeAll()
	}
	return probes, nil
}

// gradientNorms is the L2 norm of loss's gradient with respect to each
// variable under scope, in the context's variable order: a small
// fingerprint of gradients with millions of entries.
func gradientNorms(ctx *context.Context, scope string, loss *Node) *Node {
	params := lebm.ScopeValues(ctx, scope, loss.Graph())
	norms := make([]*Node, len(params))
	for i, g := range Gradient(loss, params...) {
		norms[i] = Reshape(Sqrt(ReduceAllSum(Square(g))), 1)
	}
	return Concatenate(norms, 0)
}

// float64s copies a float32 or float64 tensor's values.
func float64s(t *tensors.Tensor) ([]float64, error) {
	if t.DType() == dtypes.Float64 {
		return tensors.CopyFlatData[float64](t)
	}
	flat, err := tensors.CopyFlatData[float32](t)
	out := make([]float64, len(flat))
	for i, v := range flat {
		out[i] = float64(v)
	}
	return out, err
}

// relativeError is max |got − want| over the root mean square of want:
// scaled by the probe's typical magnitude, so that entries near zero do
// not blow it up.
func relativeError(got, want []float64) (float64, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%d values, the reference has %d", len(got), len(want))
	}
	var maxDiff, sumSq float64
	for i := range want {
		if math.IsNaN(got[i]) || math.IsInf(got[i], 0) {
			return math.Inf(1), nil
		}
		maxDiff = max(maxDiff, math.Abs(got[i]-want[i]))
		sumSq += want[i] * want[i]
	}
	rms := math.Sqrt(sumSq / float64(len(want)))
	if rms == 0 {
		return maxDiff, nil
	}
	return maxDiff / rms, nil
}
