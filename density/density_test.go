package density

import (
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/nets"
)

var testBackend = testutil.Backend

func TestLogDensityMSEFromEnergies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1000
	logpIS, logpTest := make([]float64, n), make([]float64, n)
	for i := range n {
		logpIS[i], logpTest[i] = -rng.Float64()*3, -rng.Float64()*3
	}
	// An energy equal to −log p up to a constant has zero error whatever the
	// constant: the importance-sampled normaliser absorbs it exactly.
	shift := func(logp []float64, c float64, noise func(i int) float64) []float64 {
		e := make([]float64, len(logp))
		for i, v := range logp {
			e[i] = -v + c + noise(i)
		}
		return e
	}
	zero := func(int) float64 { return 0 }
	// The comparisons are written so that a NaN error fails them.
	if got := LogDensityMSEFromEnergies(shift(logpIS, 7, zero), logpIS, shift(logpTest, 7, zero), logpTest); !(got <= 1e-20) {
		t.Errorf("exact energy: MSE = %g, want 0", got)
	}
	// With E = −log p + δᵢ on the test set only, log Z = 0 and the error is mean δ².
	delta := func(i int) float64 { return 0.1 * float64(i%7-3) }
	var want float64
	for i := range n {
		want += delta(i) * delta(i) / n
	}
	got := LogDensityMSEFromEnergies(shift(logpIS, 0, zero), logpIS, shift(logpTest, 0, delta), logpTest)
	if !(math.Abs(got-want) <= 1e-12) {
		t.Errorf("perturbed energy: MSE = %g, want %g", got, want)
	}
}

// TestDefaultConfigIsThePapers checks DefaultConfig against the 2-D
// settings docs/density.md gives: the 2→128⁴→1 softplus network, Adam with
// learning rate 1e-3 and PyTorch's ε 1e-8, EMA 0.999, ED t = 1, M = 4, w = 1, and CD with 10
// Langevin steps of step size 0.1 (ε = 0.01) and regulariser 0.3.
func TestDefaultConfigIsThePapers(t *testing.T) {
	for _, method := range Methods {
		cfg := DefaultConfig(method)
		if cfg.Method != method || cfg.LearningRate != 1e-3 || cfg.AdamEpsilon != 1e-8 || cfg.EMADecay != 0.999 {
			t.Errorf("DefaultConfig(%q): method %q, learning rate %v, Adam ε %v, EMA decay %v; want %q, 1e-3, 1e-8 (PyTorch's), 0.999",
				method, cfg.Method, cfg.LearningRate, cfg.AdamEpsilon, cfg.EMADecay, method)
		}
		if ed := cfg.ED; ed.T != 1 || ed.M != 4 || ed.W != 1 || ed.DropLogM {
			t.Errorf("DefaultConfig(%q).ED = %+v, want t 1, M 4, w 1", method, ed)
		}
		if cd := cfg.CD; cd.Langevin.Steps != 10 || cd.Langevin.StepSize != 0.1 || cd.Reg != 0.3 {
			t.Errorf("DefaultConfig(%q).CD = %+v, want 10 steps of step size 0.1, regulariser 0.3", method, cd)
		}
		if mlp := cfg.MLP; !slices.Equal(mlp.Hidden, []int{128, 128, 128, 128}) || mlp.Activation != "softplus" {
			t.Errorf("DefaultConfig(%q).MLP = %+v, want 4 softplus layers of 128", method, mlp)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*Config)
		mention string
	}{
		{"default ED", func(*Config) {}, ""},
		{"unknown method", func(c *Config) { c.Method = "mle" }, `method "mle"`},
		{"bad ED t", func(c *Config) { c.ED.T = 0 }, "t (perturbation variance) = 0"},
		{"bad learning rate", func(c *Config) { c.LearningRate = -1 }, "learning rate = -1"},
		{"bad EMA", func(c *Config) { c.EMADecay = 1 }, "EMA decay = 1"},
		{"no EMA (the w study's)", func(c *Config) { c.EMADecay = 0 }, ""},
		{"negative EMA", func(c *Config) { c.EMADecay = -0.1 }, "EMA decay = -0.1"},
		{"infinite learning rate", func(c *Config) { c.LearningRate = math.Inf(1) }, "learning rate = +Inf"},
		{"zero learning rate", func(c *Config) { c.LearningRate = 0 }, "learning rate = 0"},
		{"zero Adam ε", func(c *Config) { c.AdamEpsilon = 0 }, "Adam ε = 0"},
		{"NaN Adam ε", func(c *Config) { c.AdamEpsilon = math.NaN() }, "Adam ε = NaN"},
		{"bad CD chain", func(c *Config) { c.Method = "cd"; c.CD.Langevin.Steps = -2 }, "steps = -2"},
		{"DSM without noise", func(c *Config) { c.Method = "dsm" }, "noise variance = 0"},
		{"DSM", func(c *Config) { c.Method, c.DSMVariance = "dsm", 0.5 }, ""},
		{"binary CD, unknown sampler", func(c *Config) { c.Method, c.CDSampler = "bcd", "hmc" }, `sampler "hmc"`},
		{"binary CD, no Gibbs sweep", func(c *Config) { c.Method, c.GibbsSweeps = "bcd", 0 }, "Gibbs sweeps per step = 0"},
		{"binary CD, no GWG step", func(c *Config) { c.Method, c.CDSampler, c.GWGSteps = "bcd", "gwg", 0 }, "Gibbs-with-gradients steps per step = 0"},
		{"binary CD, GWG without Gibbs sweeps", func(c *Config) { c.Method, c.CDSampler, c.GibbsSweeps = "bcd", "gwg", 0 }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig("ed")
			c.edit(&cfg)
			err := cfg.Validate()
			if (err == nil) != (c.mention == "") || (err != nil && !strings.Contains(err.Error(), c.mention)) {
				t.Errorf("Validate() = %v, want error mentioning %q", err, c.mention)
			}
		})
	}
}

func TestCheckFiniteNamesTheStep(t *testing.T) {
	for _, loss := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		err := CheckFinite(42, loss)
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "step 42") {
			t.Errorf("CheckFinite(42, %v) = %v, want an ErrNonFinite naming step 42", loss, err)
		}
	}
	if err := CheckFinite(1, 0.5); err != nil {
		t.Errorf("CheckFinite(1, 0.5) = %v", err)
	}
}

// Every method, trained on N(0, 1) data, must learn an energy whose shape
// matches x²/2 (up to a constant) where the data is — denoising score
// matching that of the noised data N(0, 1 + t), x²/(2(1 + t)).
// Adam's first step moves each parameter by lr·g/(|g| + ε) (its bias-
// corrected moments are g and g²): by lr itself for every parameter whose
// gradient is far above the default ε = 1e-8, by far less than lr when the
// adam_epsilon setting makes ε large — so the setting reaches the optimizer.
func TestAdamEpsilonSetsTheFirstStep(t *testing.T) {
	const lr = 1e-3
	x := tensors.FromFlatDataAndDimensions([]float32{-1, -0.5, 0, 0.5, 1, 1.5}, 6, 1)
	steps := func(settings string) []float64 {
		// CD, whose energy regulariser gives every parameter a gradient; ED's
		// loss does not change with the output bias, whose gradient is
		// round-off (~1e-8, where ε decides the step).
		cfg := DefaultConfig("cd")
		cfg.MLP = nets.MLPConfig{Hidden: []int{4}, Activation: "softplus"}
		cfg.LearningRate = lr
		cfg, err := cfg.WithSettings(settings)
		if err != nil {
			t.Fatal(err)
		}
		model, err := New(testBackend(), cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Evaluating the energy once creates and initialises the parameters.
		context.ExecOnce(testBackend(), model.Context(), func(ctx *context.Context, x *Node) *Node {
			return Energy(ctx, cfg)(x)
		}, x)
		params := func() []float64 {
			var all []float64
			for v := range model.Context().IterVariables() {
				if v.Trainable && strings.HasPrefix(v.Scope(), energyScope) {
					values, err := tensors.CopyFlatData[float32](v.MustValue())
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range values {
						all = append(all, float64(p))
					}
				}
			}
			return all
		}
		before := params()
		if _, err := model.TrainStep(x); err != nil {
			t.Fatal(err)
		}
		after := params()
		if len(before) == 0 || len(after) != len(before) {
			t.Fatalf("%d parameters before the step, %d after", len(before), len(after))
		}
		moves := make([]float64, len(before))
		for i := range before {
			moves[i] = math.Abs(after[i] - before[i])
		}
		return moves
	}
	for i, d := range steps("") {
		if math.Abs(d-lr) > 1e-3*lr {
			t.Errorf("ε = 1e-8: parameter %d moved by %g, want lr = %g", i, d, lr)
		}
	}
	for i, d := range steps("adam_epsilon=1000") {
		if d > lr/10 {
			t.Errorf("ε = 1000: parameter %d moved by %g, want ≪ lr = %g", i, d, lr)
		}
	}
}

func TestMethodsLearnAGaussianEnergy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]float32, 2048)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	eval := []float32{-1.5, -0.75, 0, 0.75, 1.5}
	for _, method := range Methods {
		t.Run(method, func(t *testing.T) {
			cfg := DefaultConfig(method)
			cfg.MLP = nets.MLPConfig{Hidden: []int{32, 32}, Activation: "softplus"}
			cfg.LearningRate, cfg.EMADecay = 1e-2, 0.9
			// The 2-D setting's chains (10 steps of ε = 0.01) barely leave the
			// data in 400 updates; longer chains let CD learn in a short test.
			cfg.CD.Langevin.StepSize, cfg.CD.Langevin.Steps, cfg.CD.Reg = 0.5, 20, 0.01
			_, energies, err := TrainOnPoints(testBackend(), cfg, 5, data, 1, 128, 25, eval)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range eval {
				want := float64(x*x) / (2 * (1 + cfg.DSMVariance))
				got := energies[i] - energies[2]
				if math.Abs(got-want) > 0.35 {
					t.Errorf("E(%g) − E(0) = %.3f, want x²/(2(1 + %g)) = %.3f ± 0.35", x, got, cfg.DSMVariance, want)
				}
			}
		})
	}
}

// Both binary methods — Bernoulli energy discrepancy and contrastive
// divergence with persistent chains of Gibbs sweeps or of Gibbs with
// gradients — learn a distribution over 3
// bits: after training on its samples, the model's probabilities of the 8
// states (softmax of −E over all of them, enumerated) match the samples'
// frequencies.
func TestBinaryMethodsLearnABitDistribution(t *testing.T) {
	truth := []float64{0.30, 0.05, 0.05, 0.10, 0.02, 0.08, 0.10, 0.30} // state b₀b₁b₂ as a binary number
	rng := rand.New(rand.NewPCG(5, 6))
	const n, d = 4000, 3
	data := make([]float32, 0, n*d)
	for range n {
		u, state := rng.Float64(), 0
		for state < len(truth)-1 && u >= truth[state] {
			u -= truth[state]
			state++
		}
		for b := d - 1; b >= 0; b-- {
			data = append(data, float32(state>>b&1))
		}
	}
	states := make([]float32, 0, len(truth)*d)
	for state := range truth {
		for b := d - 1; b >= 0; b-- {
			states = append(states, float32(state>>b&1))
		}
	}
	// Against the sample's frequencies, the distribution the methods fit.
	freq := make([]float64, len(truth))
	for i := 0; i < len(data); i += d {
		freq[int(data[i])<<2|int(data[i+1])<<1|int(data[i+2])] += 1.0 / n
	}
	for _, tc := range []struct{ method, sampler string }{{"bed", ""}, {"bcd", "gibbs"}, {"bcd", "gwg"}} {
		t.Run(tc.method+tc.sampler, func(t *testing.T) {
			cfg := DefaultConfig(tc.method)
			if tc.sampler != "" {
				cfg.CDSampler, cfg.GWGSteps = tc.sampler, 3
			}
			cfg.MLP = nets.MLPConfig{Hidden: []int{32, 32}, Activation: nets.ActSwish}
			cfg.LearningRate, cfg.EMADecay = 5e-3, 0.98
			_, energies, err := TrainOnPoints(testBackend(), cfg, 7, data, d, 100, 10, states)
			if err != nil {
				t.Fatal(err)
			}
			z := 0.0
			for _, e := range energies {
				z += math.Exp(-e)
			}
			probs := make([]float64, len(energies))
			tv := 0.0
			for i, e := range energies {
				probs[i] = math.Exp(-e) / z
				tv += math.Abs(probs[i]-freq[i]) / 2
			}
			t.Logf("total variation from the sample's frequencies: %.4f", tv)
			if !(tv <= 0.05) { // NaN fails too
				t.Errorf("learned probabilities %.3f, sample frequencies %.3f: total variation %.3f, want ≤ 0.05", probs, freq, tv)
			}
		})
	}
}

// The Gaussian base adds ‖x‖²/(2σ²) to the network's energy: the energies
// of a model with the base minus those of the same network without it,
// against that sum in float64. A base is set once, before training.
func TestGaussianBaseAddsItsQuadratic(t *testing.T) {
	x := []float32{1, -2, 0.5, 0, 0, 0, 3, 1, -1}
	cfg := DefaultConfig("ed")
	cfg.MLP = nets.MLPConfig{Hidden: []int{8}, Activation: nets.ActSoftplus}
	energies := func(base bool) []float64 {
		m, err := New(testBackend(), cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		if base {
			if err := m.SetGaussianBase(2); err != nil {
				t.Fatal(err)
			}
			if err := m.SetGaussianBase(2); err == nil {
				t.Error("a second SetGaussianBase: no error")
			}
			if err := m.SetBernoulliBase([]float64{0.5, 0.5, 0.5}); err == nil {
				t.Error("a Bernoulli base beside the Gaussian: no error")
			}
		}
		e := context.MustExecOnce(testBackend(), m.Context(), func(ctx *context.Context, x *Node) *Node {
			return Energy(ctx, cfg)(x)
		}, tensors.FromFlatDataAndDimensions(x, 3, 3))
		return float64sOf(e)
	}
	with, without := energies(true), energies(false)
	for i := range 3 {
		var sq float64
		for _, v := range x[3*i : 3*i+3] {
			sq += float64(v) * float64(v)
		}
		if got, want := with[i]-without[i], sq/(2*4); !(math.Abs(got-want) <= 1e-4) {
			t.Errorf("example %d: energy with the base − without = %.5f, want ‖x‖²/(2σ²) = %.5f", i, got, want)
		}
	}
	m, err := New(testBackend(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetGaussianBase(0); err == nil {
		t.Error("σ = 0: no error")
	}
}

// The Bernoulli base adds −log B(x) = −Σ x·log p + (1−x)·log(1−p) to the
// network's energy, with means clipped to [0.01, 0.99]: the energies of a
// model with the base minus those of the same network without it, against
// that sum in float64. It is set once, before training.
func TestBernoulliBaseAddsItsNegativeLogProbability(t *testing.T) {
	means := []float64{0.5, 0.2, 0, 1}
	x := []float32{1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1}
	cfg := DefaultConfig("bed")
	cfg.MLP = nets.MLPConfig{Hidden: []int{8}, Activation: nets.ActSwish}
	energies := func(base bool) []float64 {
		m, err := New(testBackend(), cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		if base {
			if err := m.SetBernoulliBase(means); err != nil {
				t.Fatal(err)
			}
			if err := m.SetBernoulliBase(means); err == nil {
				t.Error("a second SetBernoulliBase: no error")
			}
		}
		e := context.MustExecOnce(testBackend(), m.Context(), func(ctx *context.Context, x *Node) *Node {
			return Energy(ctx, cfg)(x)
		}, tensors.FromFlatDataAndDimensions(x, 3, 4))
		return float64sOf(e)
	}
	with, without := energies(true), energies(false)
	for i := range 3 {
		logB := 0.0
		for j, p := range means {
			p = min(max(p, 0.01), 0.99)
			if x[4*i+j] == 1 {
				logB += math.Log(p)
			} else {
				logB += math.Log(1 - p)
			}
		}
		if got := with[i] - without[i]; !(math.Abs(got+logB) <= 1e-4) {
			t.Errorf("example %d: energy with the base − without = %.5f, want −log B(x) = %.5f", i, got, -logB)
		}
	}
	m, err := New(testBackend(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetBernoulliBase([]float64{0.5, math.NaN()}); err == nil || !strings.Contains(err.Error(), "mean 1 is NaN") {
		t.Errorf("a NaN mean: error %v", err)
	}
}

// TestDeclareFlags: the short flags of the settings table apply what was
// given, to the setting the table names, and only that; -init pytorch is
// the default initialisation under its empty name.
func TestDeclareFlags(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	apply := DeclareFlags(fs, DefaultConfig("dsm"))
	if err := fs.Parse([]string{"-ed-t", "0.5", "-hidden", "64,32", "-lr", "3e-4", "-init", "pytorch", "-dsm-t", "0.2"}); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("dsm")
	cfg.MLP.Init = nets.InitXavier
	if err := apply(&cfg); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig("dsm")
	want.ED.T, want.MLP.Hidden, want.LearningRate, want.DSMVariance = 0.5, []int{64, 32}, 3e-4, 0.2
	if changes, wantChanges := cfg.Changes(DefaultConfig("dsm")), want.Changes(DefaultConfig("dsm")); !slices.Equal(changes, wantChanges) || cfg.MLP.Init != "" {
		t.Errorf("after the flags: changes %v, want %v; init %q", changes, wantChanges, cfg.MLP.Init)
	}
}

// TestDeclareFlagsOfAKindOfData: a command on bits gets the Bernoulli and
// Gibbs flags and not those of the losses on points, and the other way
// round; both get the network's and the optimiser's.
func TestDeclareFlagsOfAKindOfData(t *testing.T) {
	for _, tc := range []struct {
		method       string
		have, hasNot []string
	}{
		{"bed", []string{"bed-epsilon", "bed-m", "bed-w", "gibbs-sweeps", "gwg-steps", "hidden", "lr", "ema"}, []string{"ed-t", "ed-m", "cd-steps", "dsm-t"}},
		{"ed", []string{"ed-t", "ed-m", "ed-w", "cd-steps", "cd-reg", "dsm-t", "hidden", "lr", "ema"}, []string{"bed-epsilon", "bed-m", "gibbs-sweeps", "gwg-steps"}},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		DeclareFlags(fs, DefaultConfig(tc.method))
		for _, name := range tc.have {
			if fs.Lookup(name) == nil {
				t.Errorf("defaults of %s: no flag -%s", tc.method, name)
			}
		}
		for _, name := range tc.hasNot {
			if fs.Lookup(name) != nil {
				t.Errorf("defaults of %s: flag -%s declared", tc.method, name)
			}
		}
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	apply := DeclareFlags(fs, DefaultConfig("bcd"))
	if err := fs.Parse([]string{"-bed-m", "7", "-gibbs-sweeps", "3"}); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("bed")
	if err := apply(&cfg); err != nil || cfg.BED.M != 7 || cfg.GibbsSweeps != 3 {
		t.Errorf("-bed-m 7 -gibbs-sweeps 3: M %d, sweeps %d (%v)", cfg.BED.M, cfg.GibbsSweeps, err)
	}
}

// TestMethodConfigs: each method's configuration is its defaults, then the
// edits in order, then -set; errors name the flag or the method at fault.
func TestMethodConfigs(t *testing.T) {
	double := func(c *Config) error { c.LearningRate *= 2; return nil }
	width := func(c *Config) error { c.MLP.Hidden = []int{c.MLP.Hidden[0] + 1}; return nil }
	got, err := MethodConfigs(" ed,cd ", Methods, "toy_ed_m=9", double, nil, width)
	if err != nil {
		t.Fatal(err)
	}
	for i, method := range []string{"ed", "cd"} {
		want := DefaultConfig(method)
		want.LearningRate *= 2
		want.MLP.Hidden = []int{want.MLP.Hidden[0] + 1}
		want.ED.M = 9
		if len(got) != 2 || got[i].Method != method || !slices.Equal(got[i].Changes(want), nil) {
			t.Errorf("config %d: %+v, want %s's defaults, doubled lr, wider, ED M 9 (changes %v)", i, got, method, got[i].Changes(want))
		}
	}
	for _, tc := range []struct {
		list, set string
		edit      func(*Config) error
		want      string
	}{
		{"ed,mle", "", nil, `flag -methods: "mle": want one of`},
		{"bed", "", nil, `flag -methods: "bed"`},
		{"ed", "toy_method=cd", nil, "flag -set: toy_method=cd: choose methods with -methods"},
		{"ed", "toy_ed_m=0", nil, "flag -set: method ed: "},
		{"sm", "", func(c *Config) error { c.LearningRate = -1; return nil }, "method sm: learning rate = -1"},
		{"sm", "", func(*Config) error { return errors.New("no such flag") }, "method sm: no such flag"},
	} {
		if _, err := MethodConfigs(tc.list, Methods, tc.set, tc.edit); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MethodConfigs(%q, set %q): error %v, want one containing %q", tc.list, tc.set, err, tc.want)
		}
	}
}

// TestResumedConfigs: a method whose folder holds a checkpoint starts from
// the checkpoint's settings, not today's defaults; -set still applies on
// top, and Restore then refuses a value that contradicts the checkpoint;
// a method without one starts from the defaults.
func TestResumedConfigs(t *testing.T) {
	saved := DefaultConfig("ed")
	saved.ED.T, saved.MLP.Hidden = 0.37, []int{8}
	m, err := New(testBackend(), saved, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(filepath.Join(dir, "ed")); err != nil {
		t.Fatal(err)
	}
	in := func(method string) string { return filepath.Join(dir, method) }
	got, err := ResumedConfigs([]string{"ed", "cd"}, "", in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := got[0].Changes(saved); len(diff) > 0 || got[1].Changes(DefaultConfig("cd")) != nil {
		t.Errorf("ed differs from its checkpoint in %v; cd from the defaults in %v", diff, got[1].Changes(DefaultConfig("cd")))
	}
	resumed, err := New(testBackend(), got[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := resumed.Restore(filepath.Join(dir, "ed")); err != nil {
		t.Errorf("resuming with the checkpoint's own settings: %v", err)
	}
	got, err = ResumedConfigs([]string{"ed"}, "toy_ed_t=0.5", in)
	if err != nil {
		t.Fatal(err)
	}
	contradicting, _ := New(testBackend(), got[0], 1)
	if err := contradicting.Restore(filepath.Join(dir, "ed")); err == nil || !strings.Contains(err.Error(), "toy_ed_t=0.5") {
		t.Errorf("resuming with -set toy_ed_t=0.5 over a checkpoint of 0.37: %v, want a refusal naming it", err)
	}
}
