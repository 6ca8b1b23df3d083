// Package discrete trains energy-based models of binary data {0,1}^D with
// the Bernoulli energy discrepancy of the paper's appendix, or with
// contrastive divergence on persistent Gibbs chains as the baseline. Its
// first model is the Ising model of the paper's Ising experiment: a learned
// symmetric coupling matrix.
package discrete

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/datasets/ising"
	"github.com/edlebm/edlebm/internal/scopes"
	"github.com/edlebm/edlebm/internal/settings"
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

// IsingModel is a learned Ising model on D spins being trained. Save and
// Restore keep its whole state — couplings, Adam's moments, the random
// streams, CD's persistent chains and the step — so a restored model goes
// on exactly.
type IsingModel struct {
	cfg       IsingConfig
	d         int
	ctx       *context.Context
	trainer   *train.Trainer
	couplings *context.Exec
	// chains are CD's persistent chains, spins, swept in Go with the
	// lattice's local fields (far cheaper than XLA's unrolled sweep); they
	// and their random stream are kept in the context for checkpoints.
	chains []float64
	pcg    *rand.PCG
	rng    *rand.Rand
}

// isingParamPrefix prefixes the names of an Ising model's settings in its
// context (and checkpoints).
const isingParamPrefix = "ising_"

// params are the model's settings as context parameters, stored in its
// checkpoints so that a restore can check them.
func (c *IsingConfig) params(d *int) []settings.Param {
	return []settings.Param{
		{Key: isingParamPrefix + "spins", Ptr: d},
		{Key: isingParamPrefix + "method", Ptr: &c.Method},
		{Key: isingParamPrefix + "bed_epsilon", Ptr: &c.ED.Epsilon},
		{Key: isingParamPrefix + "bed_m", Ptr: &c.ED.M},
		{Key: isingParamPrefix + "bed_w", Ptr: &c.ED.W},
		{Key: isingParamPrefix + "cd_sweeps", Ptr: &c.CDSweeps},
		{Key: isingParamPrefix + "l1", Ptr: &c.L1},
		{Key: optimizers.ParamLearningRate, Ptr: &c.LearningRate},
	}
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
	settings.Set(ctx, cfg.params(&d))
	couplingsVar(ctx, d)
	m := &IsingModel{cfg: cfg, d: d, ctx: ctx, pcg: rand.NewPCG(uint64(seed), 1)}
	m.rng = rand.New(m.pcg)
	modelFn := func(ctx *context.Context, _ any, inputs []*Node) []*Node {
		energy := IsingEnergy(ctx, d)
		x := inputs[0]
		if cfg.Method == "ed" {
			train.AddLoss(ctx, losses.BernoulliEnergyDiscrepancy(ctx, energy, x, cfg.ED))
		} else {
			train.AddLoss(ctx, losses.ContrastiveDivergenceWithNegatives(energy, x, inputs[1], 0))
		}
		if cfg.L1 > 0 {
			j := couplingsNode(x.Graph(), ctx.InAbsPath(isingScope).GetVariable("W"), d)
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

// chainsScope holds CD's persistent chains (variable "spins") while the
// model is saved; chainsRNGParam their random stream's state.
const (
	chainsScope    = "/chains"
	chainsRNGParam = isingParamPrefix + "chains_rng"
)

// ErrNonFinite is wrapped by the error of a step whose loss is NaN or
// infinite.
var ErrNonFinite = errors.New("non-finite loss")

// CheckFinite returns an error naming step when loss is NaN or infinite.
func CheckFinite(step int64, loss float64) error {
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return fmt.Errorf("discrete: step %d: loss %v: %w", step, loss, ErrNonFinite)
	}
	return nil
}

// TrainStep runs one step on the bits x [B, D] (float32) and returns the
// loss. For CD the persistent chains (B of them, started uniformly at the
// first step) first move by CDSweeps Gibbs sweeps of the current model.
func (m *IsingModel) TrainStep(x *tensors.Tensor) (float64, error) {
	inputs, err := m.inputs(x)
	if err != nil {
		return 0, err
	}
	metrics, err := m.trainer.TrainStep(nil, inputs, nil)
	if err != nil {
		return 0, err
	}
	loss := float64(tensors.ToScalar[float32](metrics[0]))
	return loss, CheckFinite(m.Step(), loss)
}

// inputs are the trainer's inputs for a step on the bits x: x, and for CD
// the chains' next states.
func (m *IsingModel) inputs(x *tensors.Tensor) ([]*tensors.Tensor, error) {
	if dims := x.Shape().Dimensions; len(dims) != 2 || dims[1] != m.d || x.DType() != dtypes.Float32 {
		return nil, fmt.Errorf("discrete: training batch %s: want (Float32)[batch, %d] bits", x.Shape(), m.d)
	}
	if m.cfg.Method != "cd" {
		return []*tensors.Tensor{x}, nil
	}
	neg, err := m.advanceChains(x.Shape().Dimensions[0])
	if err != nil {
		return nil, err
	}
	return []*tensors.Tensor{x, neg}, nil
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

// Batches serves ds's batches of bits [B, D] to the model's trainer in a
// train.Loop: for CD each with the chains' next states, as TrainStep
// takes them.
func (m *IsingModel) Batches(ds train.Dataset) train.Dataset { return withNegatives{ds, m} }

// withNegatives is IsingModel.Batches.
type withNegatives struct {
	train.Dataset
	m *IsingModel
}

func (w withNegatives) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	spec, inputs, labels, err = w.Dataset.Yield()
	if err != nil {
		return nil, nil, nil, err
	}
	inputs, err = w.m.inputs(inputs[0])
	return spec, inputs, labels, err
}

// Trainer is the model's GoMLX trainer, for a train.Loop over Batches.
func (m *IsingModel) Trainer() *train.Trainer { return m.trainer }

// Context holds the model's variables, optimiser state, chains and random
// stream.
func (m *IsingModel) Context() *context.Context { return m.ctx }

// Step is the number of training steps taken.
func (m *IsingModel) Step() int64 { return optimizers.GetGlobalStep(m.ctx) }

// Save writes the whole training state into dir, atomically (see package
// checkpoint).
func (m *IsingModel) Save(dir string) error {
	state, err := m.pcg.MarshalBinary()
	if err != nil {
		return fmt.Errorf("discrete: %w", err)
	}
	m.ctx.SetParam(chainsRNGParam, base64.StdEncoding.EncodeToString(state))
	if len(m.chains) > 0 {
		spins := tensors.FromFlatDataAndDimensions(float32s(m.chains), len(m.chains)/m.d, m.d)
		if v := m.ctx.GetVariableByScopeAndName(chainsScope, "spins"); v != nil {
			if err := v.SetValue(spins); err != nil {
				return fmt.Errorf("discrete: %w", err)
			}
		} else {
			m.ctx.InAbsPath(chainsScope).Checked(false).VariableWithValue("spins", spins).SetTrainable(false)
		}
	}
	return checkpoint.Save(m.ctx, dir, m.Step())
}

// float32s converts v.
func float32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// Restore loads the newest checkpoint in dir into a model fresh from
// NewIsingModel, so training continues exactly where the saved run
// stopped. A checkpoint of a model with other settings is refused, naming
// them.
func (m *IsingModel) Restore(dir string) error {
	if m.Step() != 0 {
		return fmt.Errorf("discrete: restoring from %s: the model has already trained %d steps", dir, m.Step())
	}
	if err := checkpoint.Load(m.ctx, dir); err != nil {
		return fmt.Errorf("discrete: %w", err)
	}
	var saved IsingConfig
	var d int
	if err := settings.Get(m.ctx, saved.params(&d)); err != nil {
		return fmt.Errorf("discrete: the checkpoint in %s has no Ising model settings (%w)", dir, err)
	}
	want, have := m.cfg, m.d
	if diff := settings.Changes(want.params(&have), saved.params(&d)); len(diff) > 0 {
		return fmt.Errorf("discrete: %s holds an Ising model with other settings (this one has %s)", dir, strings.Join(diff, ", "))
	}
	// Checkpoints bring every variable back trainable; only the couplings are.
	for v := range m.ctx.IterVariables() {
		v.SetTrainable(scopes.Within(v.Scope(), isingScope))
	}
	return m.restoreChains(dir)
}

// restoreChains takes CD's chains and their random stream back from the
// checkpoint just loaded from dir.
func (m *IsingModel) restoreChains(dir string) error {
	encoded, _ := m.ctx.GetParam(chainsRNGParam)
	text, _ := encoded.(string)
	state, err := base64.StdEncoding.DecodeString(text)
	if err == nil {
		err = m.pcg.UnmarshalBinary(state)
	}
	if err != nil {
		return fmt.Errorf("discrete: the checkpoint in %s has no random stream of its chains (%s): %w", dir, chainsRNGParam, err)
	}
	m.chains = nil
	if v := m.ctx.GetVariableByScopeAndName(chainsScope, "spins"); v != nil {
		value, err := v.Value()
		if err != nil {
			return fmt.Errorf("discrete: %w", err)
		}
		if dims := value.Shape().Dimensions; len(dims) != 2 || dims[1] != m.d || value.DType() != dtypes.Float32 {
			return fmt.Errorf("discrete: the checkpoint in %s holds chains of shape %s, want (Float32)[chains, %d]", dir, value.Shape(), m.d)
		}
		for _, s := range tensors.MustCopyFlatData[float32](value) {
			m.chains = append(m.chains, float64(s))
		}
	}
	return nil
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
