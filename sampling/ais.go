package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/losses"
)

// The transition kernels of AISConfig.Kernel.
const (
	KernelMALA = "mala"
	KernelHMC  = "hmc"
)

// The preconditioners of AISConfig.Metric.
const (
	// MetricFull preconditions with the chains' covariance at each
	// temperature, so that correlated and differently scaled coordinates
	// move alike.
	MetricFull = "full"
	// MetricDiagonal preconditions with their variances only.
	MetricDiagonal = "diagonal"
	// MetricIdentity does not precondition.
	MetricIdentity = "identity"
)

// fullMetricMaxDim is the largest dimension whose default metric is full
// (its d² parameters travel with each temperature).
const fullMetricMaxDim = 128

// AISConfig is the setting of annealed importance sampling on ℝ^d.
type AISConfig struct {
	AnnealConfig
	// BaseStd is σ₀ of the base N(0, σ₀²I), when BaseCov is nil; a base
	// wider than the model keeps the weights' variance down.
	BaseStd float64
	// BaseMean and BaseCov (d and d×d values, row by row; positive
	// definite), when BaseCov is set, make the base N(BaseMean, BaseCov):
	// a Gaussian fitted to the data starts the chains near the model.
	// BaseMean nil is the origin.
	BaseMean, BaseCov []float64
	// Kernel is KernelMALA (the default, "") or KernelHMC.
	Kernel string
	// Transitions is the number of transitions at each temperature
	// (default DefaultAISTransitions).
	Transitions int
	// LeapfrogSteps is the length of an HMC transition (default 10).
	LeapfrogSteps int
	// Metric is the preconditioner the pilot estimates at each
	// temperature: MetricFull (the default up to 128 dimensions),
	// MetricDiagonal (the default above) or MetricIdentity.
	Metric string
	// TargetAcceptance is the acceptance the pilot tunes each
	// temperature's step toward (default 0.574 for MALA, 0.651 for HMC:
	// Roberts & Rosenthal 1998, Beskos et al. 2013).
	TargetAcceptance float64
	// StepSize, when > 0, is every temperature's step, untuned, in the
	// metric's units (with MetricIdentity, x's).
	StepSize float64
}

// withDefaults fills in the zero fields for dimension dim and checks the
// settings.
func (c AISConfig) withDefaults(dim int) (AISConfig, error) {
	var err error
	if c.AnnealConfig, err = c.AnnealConfig.withDefaults(); err != nil {
		return c, err
	}
	if c.Kernel == "" {
		c.Kernel = KernelMALA
	}
	if c.Transitions == 0 {
		c.Transitions = DefaultAISTransitions
	}
	if c.LeapfrogSteps == 0 {
		c.LeapfrogSteps = 10
	}
	if c.Metric == "" {
		c.Metric = MetricFull
		if dim > fullMetricMaxDim {
			c.Metric = MetricDiagonal
		}
	}
	if c.TargetAcceptance == 0 {
		c.TargetAcceptance = 0.574
		if c.Kernel == KernelHMC {
			c.TargetAcceptance = 0.651
		}
	}
	return c, c.validate(dim)
}

// Validate reports the first invalid setting, naming it and its value;
// the base's sizes are checked against the dimension by AIS.
func (c AISConfig) Validate() error {
	if err := c.AnnealConfig.Validate(); err != nil {
		return err
	}
	return c.validate(-1)
}

// validate checks c for dimension dim (-1: unknown, sizes unchecked).
func (c AISConfig) validate(dim int) error {
	switch {
	case c.BaseCov == nil && (!(c.BaseStd > 0) || math.IsInf(c.BaseStd, 1)):
		return fmt.Errorf("AIS base standard deviation = %v: must be a finite number > 0", c.BaseStd)
	case dim >= 0 && c.BaseCov != nil && len(c.BaseCov) != dim*dim:
		return fmt.Errorf("AIS base covariance: %d values, want %d×%d", len(c.BaseCov), dim, dim)
	case dim >= 0 && c.BaseMean != nil && len(c.BaseMean) != dim:
		return fmt.Errorf("AIS base mean: %d values, want %d", len(c.BaseMean), dim)
	case c.Kernel != "" && c.Kernel != KernelMALA && c.Kernel != KernelHMC:
		return fmt.Errorf("AIS kernel %q: want %q or %q", c.Kernel, KernelMALA, KernelHMC)
	case c.Transitions < 0:
		return fmt.Errorf("AIS transitions = %d: must be ≥ 1", c.Transitions)
	case c.LeapfrogSteps < 0:
		return fmt.Errorf("AIS leapfrog steps = %d: must be ≥ 1", c.LeapfrogSteps)
	case c.Metric != "" && c.Metric != MetricFull && c.Metric != MetricDiagonal && c.Metric != MetricIdentity:
		return fmt.Errorf("AIS metric %q: want %q, %q or %q", c.Metric, MetricFull, MetricDiagonal, MetricIdentity)
	case c.TargetAcceptance != 0 && !(c.TargetAcceptance > 0 && c.TargetAcceptance < 1):
		return fmt.Errorf("AIS target acceptance = %v: must be in (0, 1)", c.TargetAcceptance)
	case !(c.StepSize >= 0) || math.IsInf(c.StepSize, 1):
		return fmt.Errorf("AIS step size = %v: must be a finite number ≥ 0 (0: tuned)", c.StepSize)
	}
	return nil
}

// AIS estimates log Z = log ∫ exp(−E(x)) dx over ℝ^dim by annealed
// importance sampling (Neal 2001; Anneal says how): chains start from the
// Gaussian base and pass through p_β ∝ p₀^(1−β)·exp(−βE), moved at each
// temperature by MALA or HMC transitions in the coordinates of a
// preconditioner, with the step and the preconditioner tuned to each
// temperature by the pilot run. With Z known, a held-out point's
// log-likelihood is −E(x) − log Z. The result carries the evidence of
// convergence: the estimate again at half the temperatures, and
// the reverse annealing's upper estimate.
//
// energyOf builds the energy, of float64 chains, from the context the
// graph is built with (ctx: the model's variables).
func AIS(backend backends.Backend, ctx *context.Context, energyOf func(*context.Context) losses.EnergyFn, dim int, cfg AISConfig) (res AISResult, err error) {
	if dim < 1 {
		return res, fmt.Errorf("AIS: dimension %d: must be ≥ 1", dim)
	}
	if cfg, err = cfg.withDefaults(dim); err != nil {
		return res, err
	}
	base, err := newGaussian(dim, cfg)
	if err != nil {
		return res, fmt.Errorf("AIS: base: %w", err)
	}
	path := Path{Dim: dim, SampleBase: base.sample, LogBase: base.logDensity, Energy: energyOf}
	return Anneal(backend, ctx, path, preconditioned(base, cfg), cfg.AnnealConfig)
}

// gaussianBase is the base N(mean, L Lᵀ).
type gaussianBase struct {
	dim           int
	mean, l, lInv []float64 // d, d×d, d×d (lower triangular)
	logNorm       float64   // −½ log det(2π L Lᵀ)
}

func newGaussian(dim int, cfg AISConfig) (*gaussianBase, error) {
	g := &gaussianBase{dim: dim, mean: cfg.BaseMean}
	if g.mean == nil {
		g.mean = make([]float64, dim)
	}
	cov := cfg.BaseCov
	if cov == nil {
		cov = make([]float64, dim*dim)
		for i := range dim {
			cov[i*dim+i] = cfg.BaseStd * cfg.BaseStd
		}
	}
	var err error
	if g.l, g.lInv, err = cholesky(cov, dim); err != nil {
		return nil, err
	}
	g.logNorm = -0.5 * float64(dim) * math.Log(2*math.Pi)
	for i := range dim {
		g.logNorm -= math.Log(g.l[i*dim+i])
	}
	return g, nil
}

// sample draws n points of the base.
func (g *gaussianBase) sample(rng *rand.Rand, n int) []float64 {
	d := g.dim
	x, xi := make([]float64, 0, n*d), make([]float64, d)
	for range n {
		for j := range xi {
			xi[j] = rng.NormFloat64()
		}
		for i := range d {
			v := g.mean[i]
			for j := 0; j <= i; j++ {
				v += g.l[i*d+j] * xi[j]
			}
			x = append(x, v)
		}
	}
	return x
}

// logDensity is log N(x; mean, L Lᵀ) [C] for x [C, d].
func (g *gaussianBase) logDensity(x *Node) *Node {
	gr, d := x.Graph(), g.dim
	mean := Const(gr, g.mean)
	z := Dot(Sub(x, InsertAxes(mean, 0)), Transpose(Reshape(Const(gr, g.lInv), d, d), 0, 1))
	return AddScalar(MulScalar(perExampleSumSq(z), -0.5), g.logNorm)
}

// cholesky returns the lower triangular L of cov = L Lᵀ (d×d, row by row)
// and its inverse.
func cholesky(cov []float64, d int) (l, lInv []float64, err error) {
	sym := mat.NewSymDense(d, slices.Clone(cov))
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, nil, fmt.Errorf("the covariance is not positive definite")
	}
	var lower, inverse mat.TriDense
	ch.LTo(&lower)
	if err := inverse.InverseTri(&lower); err != nil {
		return nil, nil, fmt.Errorf("inverting its Cholesky factor: %w", err)
	}
	l, lInv = make([]float64, d*d), make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			l[i*d+j], lInv[i*d+j] = lower.At(i, j), inverse.At(i, j)
		}
	}
	return l, lInv, nil
}
