// Package discrete trains energy-based models of binary data {0,1}^D with
// the Bernoulli energy discrepancy of the paper's appendix, or with
// contrastive divergence on persistent Gibbs chains as the baseline. Its
// first model is the Ising model of the paper's Ising experiment: a learned
// symmetric coupling matrix.
package discrete

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/datasets/ising"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
)

// Methods are the training objectives: Bernoulli energy discrepancy and
// persistent contrastive divergence with Gibbs chains.
var Methods = []string{"ed", "cd"}

// IsingConfig is the settings of learning an Ising model.
type IsingConfig struct {
	// Method is "ed" or "cd".
	Method string
	// ED is the Bernoulli energy discrepancy's setting (Method "ed").
	ED losses.BernoulliEDConfig
	// CDSweeps is the Gibbs sweeps of the persistent chains per step
	// (Method "cd"); the chains are as many as the batch's examples.
	CDSweeps int
	// LearningRate is Adam's.
	LearningRate float64
	// L1 ≥ 0 weighs the penalty L1·Σ|Jᵢⱼ| added to the loss (Grathwohl et
	// al. regularise their Ising models so); 0: none.
	L1 float64
}

// DefaultIsingConfig is our setting (the paper gives none for this
// experiment): ε = 0.1, M = 32, w = 1 for ED, one Gibbs sweep per step
// for CD, Adam at 10⁻³ (ε 10⁻⁸).
func DefaultIsingConfig(method string) IsingConfig {
	return IsingConfig{Method: method, ED: losses.BernoulliEDConfig{Epsilon: 0.1, M: 32, W: 1}, CDSweeps: 1, LearningRate: 1e-3}
}

// Validate reports the first invalid setting, naming it and its value.
func (c IsingConfig) Validate() error {
	switch c.Method {
	case "ed":
		if err := c.ED.Validate(); err != nil {
			return err
		}
	case "cd":
		if c.CDSweeps < 1 {
			return fmt.Errorf("CD Gibbs sweeps per step = %d: must be ≥ 1", c.CDSweeps)
		}
	default:
		return fmt.Errorf("method %q: want one of %v", c.Method, Methods)
	}
	if !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 1) {
		return fmt.Errorf("learning rate = %v: must be a finite number > 0", c.LearningRate)
	}
	if !(c.L1 >= 0) || math.IsInf(c.L1, 1) {
		return fmt.Errorf("L1 penalty = %v: must be a finite number ≥ 0", c.L1)
	}
	return nil
}

// isingScope holds the couplings' variable.
const isingScope = "/ising"

// couplingsVar is the unconstrained D×D matrix W whose symmetric part off
// the diagonal is J, created at 0.
func couplingsVar(ctx *context.Context, d int) *context.Variable {
	return ctx.InAbsPath(isingScope).Checked(false).VariableWithValue("W", tensors.FromShape(shapes.Make(dtypes.Float32, d, d)))
}

// IsingEnergy is the energy U(x) = −sᵀJs of bits x [B, D], s = 2x − 1,
// with J = (W + Wᵀ)/2 off the diagonal and W the learned variable of ctx's
// scope /ising (created at 0 on first use): log p(x) = −U(x) − log Z is
// the Ising model of datasets/ising with couplings J and no field.
func IsingEnergy(ctx *context.Context, d int) losses.EnergyFn {
	v := ctx.InAbsPath(isingScope).Checked(false).GetVariable("W")
	return func(x *Node) *Node {
		g := x.Graph()
		w := couplingsNode(g, v, d)
		s := AddScalar(MulScalar(x, 2), -1)
		return Neg(ReduceSum(Mul(nets.MatrixProduct(s, w), s), 1))
	}
}

// couplingsNode is J from the variable W: symmetrised, diagonal zeroed.
func couplingsNode(g *Graph, v *context.Variable, d int) *Node {
	w := v.ValueGraph(g)
	sym := MulScalar(Add(w, Transpose(w, 0, 1)), 0.5)
	offDiagonal := OneMinus(ConvertDType(Equal(Iota(g, shapes.Make(dtypes.Int32, d, d), 0), Iota(g, shapes.Make(dtypes.Int32, d, d), 1)), dtypes.Float32))
	return Mul(sym, offDiagonal)
}

// IsingModel is a learned Ising model on D spins being trained.
type IsingModel struct {
	cfg       IsingConfig
	d         int
	ctx       *context.Context
	trainer   *train.Trainer
	couplings *context.Exec
	chains    []float64 // CD's persistent chains, spins
	rng       *rand.Rand
}

// NewIsingModel creates a model of d spins with J = 0; seed fixes the
// losses' noise and the CD chains.
func NewIsingModel(backend backends.Backend, d int, cfg IsingConfig, seed int64) (*IsingModel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d < 2 {
		return nil, fmt.Errorf("discrete: an Ising model of %d spins: want at least 2", d)
	}
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(seed); err != nil {
		return nil, err
	}
	ctx.SetParam(optimizers.ParamLearningRate, cfg.LearningRate)
	couplingsVar(ctx, d)
	m := &IsingModel{cfg: cfg, d: d, ctx: ctx, rng: rand.New(rand.NewPCG(uint64(seed), 1))}
	modelFn := func(ctx *context.Context, _ any, inputs []*Node) []*Node {
		energy := IsingEnergy(ctx, d)
		if cfg.Method == "ed" {
			train.AddLoss(ctx, losses.BernoulliEnergyDiscrepancy(ctx, energy, inputs[0], cfg.ED))
		} else {
			train.AddLoss(ctx, losses.ContrastiveDivergenceWithNegatives(energy, inputs[0], inputs[1], 0))
		}
		if cfg.L1 > 0 {
			g := inputs[0].Graph()
			j := couplingsNode(g, ctx.InAbsPath(isingScope).GetVariable("W"), d)
			train.AddLoss(ctx, MulScalar(ReduceAllSum(Abs(j)), cfg.L1))
		}
		return nil
	}
	// ε 1e-8, PyTorch's default, as Grathwohl et al.'s and the authors' code
	// (GoMLX's own is 1e-7).
	m.trainer = train.NewTrainer(backend, ctx, modelFn, nil, optimizers.Adam().Epsilon(1e-8).Done(), nil, nil)
	var err error
	m.couplings, err = context.NewExec(backend, ctx, func(ctx *context.Context, g *Graph) *Node {
		return couplingsNode(g, ctx.InAbsPath(isingScope).GetVariable("W"), d)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// ErrNonFinite is wrapped by the error of a step whose loss is NaN or
// infinite.
var ErrNonFinite = errors.New("non-finite loss")

// TrainStep runs one step on the bits x [B, D] (float32) and returns the
// loss. For CD it first advances the persistent chains (B of them, started
// uniformly at the first step) by CDSweeps Gibbs sweeps of the current
// model.
func (m *IsingModel) TrainStep(x *tensors.Tensor) (float64, error) {
	if dims := x.Shape().Dimensions; len(dims) != 2 || dims[1] != m.d || x.DType() != dtypes.Float32 {
		return 0, fmt.Errorf("discrete: training batch %s: want (Float32)[batch, %d] bits", x.Shape(), m.d)
	}
	inputs := []*tensors.Tensor{x}
	if m.cfg.Method == "cd" {
		neg, err := m.advanceChains(x.Shape().Dimensions[0])
		if err != nil {
			return 0, err
		}
		inputs = append(inputs, neg)
	}
	metrics, err := m.trainer.TrainStep(nil, inputs, nil)
	if err != nil {
		return 0, err
	}
	loss := tensors.ToScalar[float32](metrics[0])
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		return float64(loss), fmt.Errorf("discrete: step %d: loss %v: %w", optimizers.GetGlobalStep(m.ctx), loss, ErrNonFinite)
	}
	return float64(loss), nil
}

// advanceChains runs the CD chains under the current couplings and returns
// them as bits.
func (m *IsingModel) advanceChains(n int) (*tensors.Tensor, error) {
	j, err := m.Couplings()
	if err != nil {
		return nil, err
	}
	model := &ising.Model{J: j, B: make([]float64, m.d), D: m.d}
	if len(m.chains) != n*m.d {
		m.chains = make([]float64, n*m.d)
		for i := range m.chains {
			m.chains[i] = float64(2*m.rng.IntN(2) - 1)
		}
	}
	for k := range n {
		for range m.cfg.CDSweeps {
			model.Sweep(m.rng, m.chains[k*m.d:(k+1)*m.d])
		}
	}
	return tensors.FromFlatDataAndDimensions(ising.Bits(m.chains), n, m.d), nil
}

// Couplings returns the learned J, D×D row-major.
func (m *IsingModel) Couplings() ([]float64, error) {
	out, err := m.couplings.Exec()
	if err != nil {
		return nil, err
	}
	defer out[0].FinalizeAll()
	j := make([]float64, m.d*m.d)
	for i, v := range tensors.MustCopyFlatData[float32](out[0]) {
		j[i] = float64(v)
	}
	return j, nil
}

// RMSE is the root mean square difference of two matrices of equal size.
func RMSE(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s / float64(len(a)))
}
