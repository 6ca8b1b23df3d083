package discrete

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/datasets/ising"
	"github.com/edlebm/edlebm/internal/testutil"
)

// The graph's energy is minus datasets/ising's log-weight for the
// symmetric, zero-diagonal part of W, on every state of 5 spins.
func TestIsingEnergyMatchesTheLogWeight(t *testing.T) {
	const d = 5
	m, err := NewIsingModel(testutil.Backend(), d, DefaultIsingConfig("ed"), 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 0))
	w := make([]float32, d*d)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	m.ctx.InAbsPath(isingScope).GetVariable("W").MustSetValue(tensors.FromFlatDataAndDimensions(w, d, d))
	want := &ising.Model{J: make([]float64, d*d), B: make([]float64, d), D: d}
	for i := range d {
		for j := range d {
			if i != j {
				want.J[i*d+j] = (float64(w[i*d+j]) + float64(w[j*d+i])) / 2
			}
		}
	}
	got, err := m.Couplings()
	if err != nil {
		t.Fatal(err)
	}
	testutil.AssertAllClose(t, "couplings", got, want.J, 1e-6)

	var bits []float32
	var wantU []float64
	for k := range 1 << d {
		s := make([]float64, d)
		for i := range d {
			s[i] = float64(2*((k>>i)&1) - 1)
		}
		bits = append(bits, ising.Bits(s)...)
		wantU = append(wantU, -want.LogWeight(s))
	}
	exec, err := context.NewExec(testutil.Backend(), m.ctx, func(ctx *context.Context, x *Node) *Node { return IsingEnergy(ctx, d)(x) })
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(bits, 1<<d, d))
	if err != nil {
		t.Fatal(err)
	}
	var u []float64
	for _, v := range tensors.MustCopyFlatData[float32](out[0]) {
		u = append(u, float64(v))
	}
	testutil.AssertAllClose(t, "energies", u, wantU, 1e-5)
}

// Both methods learn the couplings of a 3×3 lattice (σ = 0.3) from 2,000
// Gibbs samples: J starts at 0, an RMSE of 0.2 from the truth, and
// 200 steps of batches of 100 bring it below 0.11 (measured: 0.083 – 0.092
// on XLA CPU and SimpleGo; Adam at 0.03 keeps it from going lower).
func TestLearnsTheCouplingsOfALattice(t *testing.T) {
	truth, err := ising.Lattice(3, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	const n, batch = 2000, 100
	spins, err := truth.Sample(n, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	bits := ising.Bits(spins)
	for _, method := range Methods {
		t.Run(method, func(t *testing.T) {
			cfg := DefaultIsingConfig(method)
			cfg.LearningRate = 0.03
			m, err := NewIsingModel(testutil.Backend(), truth.D, cfg, 2)
			if err != nil {
				t.Fatal(err)
			}
			for step := range 200 {
				k := step % (n / batch)
				x := tensors.FromFlatDataAndDimensions(append([]float32{}, bits[k*batch*truth.D:(k+1)*batch*truth.D]...), batch, truth.D)
				if _, err := m.TrainStep(x); err != nil {
					t.Fatal(err)
				}
			}
			j, err := m.Couplings()
			if err != nil {
				t.Fatal(err)
			}
			rmse := RMSE(j, truth.J)
			t.Logf("RMSE %.4f after 200 steps", rmse)
			if !(rmse < 0.11) {
				t.Errorf("RMSE of the learned couplings %.4f after 200 steps, want < 0.11 (0.2 at the start)", rmse)
			}
		})
	}
}

func TestIsingConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(*IsingConfig)
		mention string
	}{
		{"unknown method", func(c *IsingConfig) { c.Method = "sm" }, `method "sm"`},
		{"no CD sweeps", func(c *IsingConfig) { c.Method, c.CDSweeps = "cd", 0 }, "sweeps per step = 0"},
		{"bad ε", func(c *IsingConfig) { c.ED.Epsilon = 1 }, "ε = 1"},
		{"NaN learning rate", func(c *IsingConfig) { c.LearningRate = math.NaN() }, "learning rate = NaN"},
		{"zero learning rate", func(c *IsingConfig) { c.LearningRate = 0 }, "learning rate = 0"},
		{"negative L1", func(c *IsingConfig) { c.L1 = -0.1 }, "L1 penalty = -0.1"},
	} {
		cfg := DefaultIsingConfig("ed")
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: Validate() = %v, want an error mentioning %q", c.name, err, c.mention)
		}
	}
	if err := DefaultIsingConfig("cd").Validate(); err != nil {
		t.Errorf("the default CD setting: %v", err)
	}
}

// TestIsingModelRefusesBadInput: too few spins, a batch of the wrong
// shape or type, and a non-finite loss are errors naming what is wrong;
// two spins are enough.
func TestIsingModelRefusesBadInput(t *testing.T) {
	if _, err := NewIsingModel(testutil.Backend(), 1, DefaultIsingConfig("ed"), 1); err == nil || !strings.Contains(err.Error(), "1 spins") {
		t.Errorf("one spin: %v", err)
	}
	m, err := NewIsingModel(testutil.Backend(), 2, DefaultIsingConfig("cd"), 1)
	if err != nil {
		t.Fatalf("two spins: %v", err)
	}
	for _, x := range []*tensors.Tensor{
		tensors.FromFlatDataAndDimensions([]float32{0, 1, 1}, 1, 3),
		tensors.FromFlatDataAndDimensions([]float32{0, 1}, 2),
		tensors.FromFlatDataAndDimensions([]float64{0, 1}, 1, 2),
	} {
		if _, err := m.TrainStep(x); err == nil || !strings.Contains(err.Error(), "want (Float32)[batch, 2] bits") {
			t.Errorf("batch %s: %v", x.Shape(), err)
		}
	}
	for _, loss := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := CheckFinite(7, loss); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "step 7") {
			t.Errorf("loss %v: %v", loss, err)
		}
	}
	if err := CheckFinite(7, -1e30); err != nil {
		t.Errorf("a finite loss: %v", err)
	}
}

// TestFirstEDLossIsTheClosedForm: at J = 0 every energy is 0, so the
// first step's Bernoulli ED loss is log(w/M + 1) = log(33/32) whatever the
// data (M = 32, w = 1), as TrainStep must report it.
func TestFirstEDLossIsTheClosedForm(t *testing.T) {
	const d, n = 9, 16
	m, err := NewIsingModel(testutil.Backend(), d, DefaultIsingConfig("ed"), 5)
	if err != nil {
		t.Fatal(err)
	}
	bits := make([]float32, n*d)
	for i := range bits {
		bits[i] = float32(i % 2)
	}
	loss, err := m.TrainStep(tensors.FromFlatDataAndDimensions(bits, n, d))
	if want := math.Log(33.0 / 32); err != nil || math.Abs(loss-want) > 1e-6 {
		t.Errorf("first ED loss %v (%v), want log(33/32) = %v", loss, err, want)
	}
}

// TestCDChainsAreSpins: CD's persistent chains start as spins ±1, about
// half of each, and stay spins (the Gibbs sweeps of datasets/ising).
func TestCDChainsAreSpins(t *testing.T) {
	const d, n = 9, 200
	m, err := NewIsingModel(testutil.Backend(), d, DefaultIsingConfig("cd"), 3)
	if err != nil {
		t.Fatal(err)
	}
	x := tensors.FromFlatDataAndDimensions(make([]float32, n*d), n, d)
	for step := range 2 {
		if _, err := m.TrainStep(x); err != nil {
			t.Fatal(err)
		}
		var up int
		for _, s := range m.chains {
			if s != 1 && s != -1 {
				t.Fatalf("step %d: a chain spin is %v, want ±1", step+1, s)
			}
			if s == 1 {
				up++
			}
		}
		if len(m.chains) != n*d || math.Abs(float64(up)/float64(n*d)-0.5) > 0.05 {
			t.Errorf("step %d: %d chain values, %d of them +1; want %d, about half", step+1, len(m.chains), up, n*d)
		}
	}
}
