package lebm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/internal/scopes"
)

// With the prior network zeroed, f ≡ 0 and U(z) = ‖z‖²/2: chains from
// N(0, I) follow z ← r z + s ξ, r = 1 − s²/2, so before step k each
// coordinate has variance v_k = r^{2k} + s²(1 − r^{2k})/(1 − r²), and the
// mean energy over chains is nz·v_k/2.
func TestPriorChainEnergiesFollowTheGaussianRecursion(t *testing.T) {
	cfg := tinyConfig(t)
	m := newModel(t, cfg)
	if _, err := m.PriorSample(1); err != nil { // creates the prior's variables
		t.Fatal(err)
	}
	for v := range m.Context().IterVariables() {
		if scopes.Within(v.Scope(), m.Context().In(PriorScope).Scope()) {
			zeros := make([]float64, v.Shape().Size())
			if err := v.SetValue(tensors.FromFlatDataAndDimensions(zeros, v.Shape().Dimensions...)); err != nil {
				t.Fatal(err)
			}
		}
	}
	const chains, steps, chunk = 4000, 12, 4
	energies, err := m.PriorChainEnergies(chains, steps, chunk)
	if err != nil {
		t.Fatal(err)
	}
	if len(energies) != chains || len(energies[0]) != steps {
		t.Fatalf("energies shaped [%d][%d], want [%d][%d]", len(energies), len(energies[0]), chains, steps)
	}
	s := cfg.GenerationLangevin.StepSize
	r := 1 - s*s/2
	for k := range steps {
		var mean float64
		for c := range chains {
			mean += energies[c][k] / chains
		}
		v := math.Pow(r, float64(2*k)) + s*s*(1-math.Pow(r, float64(2*k)))/(1-r*r)
		want := float64(cfg.Generator.Nz) * v / 2
		// U is half a χ² with nz degrees of freedom scaled by v: sd √(nz/2)·v.
		tol := 4 * math.Sqrt(float64(cfg.Generator.Nz)/2) * v / math.Sqrt(chains)
		if math.Abs(mean-want) > tol {
			t.Errorf("step %d: mean energy %.4f, want %.4f ± %.4f", k, mean, want, tol)
		}
	}
	if _, err := m.PriorChainEnergies(2, 10, 3); err == nil {
		t.Error("steps not a multiple of chunk: no error")
	}
}

// Decode against the hand-written decoder of a one-layer generator.
func TestDecodeMatchesANaiveGenerator(t *testing.T) {
	cfg := oneLayerConfig(t)
	ctx, naive := newNaiveContext(t, cfg, rand.New(rand.NewPCG(5, 6)))
	cfg.SetParams(ctx)
	m, err := NewFromContext(testBackend(), ctx)
	if err != nil {
		t.Fatal(err)
	}
	z := []float64{0.1, -0.2, 0.3, 0.4, 1, 0.5, -1, 2}
	out, err := m.Decode(tensors.FromFlatDataAndDimensions(z, 2, testNz))
	if err != nil {
		t.Fatal(err)
	}
	got := flatFloat64(t, out)
	want := append(naive.decode(z[:testNz]), naive.decode(z[testNz:])...)
	testutil.AssertAllClose(t, "G(z)", got, want, 1e-12)
	if _, err := m.Decode(tensors.FromFlatDataAndDimensions([]float64{1, 2, 3}, 1, 3)); err == nil {
		t.Error("latents of the wrong size: no error")
	}
}
