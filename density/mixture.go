package density

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/losses"
)

// MixtureLosses are losses of the model family p_ρ = ρ·N(μ₁, σ₁²) +
// (1−ρ)·N(μ₂, σ₂²) at one weight ρ: energy discrepancy for each configured
// setting, the negative log-likelihood and the (Hyvärinen) score-matching
// loss. This is the paper's mixture-weight experiment (after Zhang et al.
// 2022): score methods are blind to the weights of well-separated modes, ED
// is not for large t.
type MixtureLosses struct {
	ED      []float64
	NLL, SM float64
}

// MixtureEvaluator computes MixtureLosses on fixed data and fixed
// perturbation noise, so that the losses are smooth functions of ρ.
type MixtureEvaluator struct {
	eds               []losses.EDConfig
	exec              *Exec
	data, xi, xiPrime *tensors.Tensor
}

// NewMixtureEvaluator compiles the loss evaluation for the two-component
// family (its weights are ignored: ρ replaces them), the ED settings eds and
// the 1-D data x, drawing the perturbation noise from rng.
func NewMixtureEvaluator(b backends.Backend, family toy2d.Mixture1D, eds []losses.EDConfig, x []float32, rng *rand.Rand) (*MixtureEvaluator, error) {
	if err := family.Validate(); err != nil || len(family.Means) != 2 {
		return nil, fmt.Errorf("mixture study: need a valid two-component family (%v)", err)
	}
	maxM := 0
	for _, cfg := range eds {
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("mixture study: %w", err)
		}
		maxM = max(maxM, cfg.M)
	}
	n := len(x)
	exec, err := NewExec(b, func(rho, data, xi, xiPrime *Node) []*Node {
		energy := mixtureEnergy(family, rho)
		var out []*Node
		for _, cfg := range eds {
			// Each setting uses the first M negatives of the shared noise;
			// the noise is an input, so slicing it needs no gradient.
			negatives := Slice(xiPrime, AxisRange(), AxisRange(0, cfg.M))
			out = append(out, losses.EnergyDiscrepancyWithNoise(energy, data, xi, negatives, cfg))
		}
		return append(out, ReduceAllMean(energy(data)), losses.ScoreMatching(energy, data))
	})
	if err != nil {
		return nil, err
	}
	return &MixtureEvaluator{
		eds:     eds,
		exec:    exec,
		data:    tensors.FromFlatDataAndDimensions(x, n, 1),
		xi:      tensors.FromFlatDataAndDimensions(normals(rng, n), n, 1),
		xiPrime: tensors.FromFlatDataAndDimensions(normals(rng, n*maxM), n, maxM, 1),
	}, nil
}

// At evaluates the losses at weight rho ∈ (0, 1).
func (e *MixtureEvaluator) At(rho float64) (MixtureLosses, error) {
	if !(rho > 0 && rho < 1) {
		return MixtureLosses{}, fmt.Errorf("mixture study: ρ = %v: must be in (0, 1)", rho)
	}
	outs, err := e.exec.Exec(float32(rho), e.data, e.xi, e.xiPrime)
	if err != nil {
		return MixtureLosses{}, err
	}
	values := make([]float64, len(outs))
	for j, o := range outs {
		values[j] = float64(tensors.ToScalar[float32](o))
	}
	k := len(e.eds)
	return MixtureLosses{ED: values[:k], NLL: values[k], SM: values[k+1]}, nil
}

// Close frees the compiled evaluation.
func (e *MixtureEvaluator) Close() { e.exec.Finalize() }

// mixtureEnergy is −log p_ρ(x) for x [N, 1].
func mixtureEnergy(family toy2d.Mixture1D, rho *Node) losses.EnergyFn {
	return func(x *Node) *Node {
		x = Reshape(x, x.Shape().Dimensions[0])
		logComp := func(i int, logWeight *Node) *Node {
			z := DivScalar(AddScalar(x, -family.Means[i]), family.Stds[i])
			c := -math.Log(family.Stds[i]) - 0.5*math.Log(2*math.Pi)
			return Add(AddScalar(MulScalar(Square(z), -0.5), c), logWeight)
		}
		a := logComp(0, Log(rho))
		b := logComp(1, Log(OneMinus(rho)))
		return Neg(LogAddExp(a, b))
	}
}

func normals(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// GoldenSectionMin returns the minimiser of a unimodal f on [lo, hi] to
// within tol.
func GoldenSectionMin(f func(float64) (float64, error), lo, hi, tol float64) (float64, error) {
	invPhi := (math.Sqrt(5) - 1) / 2
	c, d := hi-invPhi*(hi-lo), lo+invPhi*(hi-lo)
	fc, err := f(c)
	if err != nil {
		return 0, err
	}
	fd, err := f(d)
	if err != nil {
		return 0, err
	}
	for hi-lo > tol {
		if fc < fd {
			hi, d, fd = d, c, fc
			c = hi - invPhi*(hi-lo)
			if fc, err = f(c); err != nil {
				return 0, err
			}
		} else {
			lo, c, fc = c, d, fd
			d = lo + invPhi*(hi-lo)
			if fd, err = f(d); err != nil {
				return 0, err
			}
		}
	}
	return (lo + hi) / 2, nil
}
