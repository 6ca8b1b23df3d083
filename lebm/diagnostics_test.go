package lebm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/scopes"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/sampling"
)

// zeroPriorModel is a model of cfg whose prior network is zeroed: f ≡ 0
// and U(z) = ‖z‖²/(2σ0²).
func zeroPriorModel(t *testing.T, cfg Config) *Model {
	t.Helper()
	m := newModel(t, cfg)
	for v := range m.Context().IterVariables() {
		if scopes.Within(v.Scope(), m.Context().In(PriorScope).Scope()) {
			zeros := make([]float64, v.Shape().Size())
			if err := v.SetValue(tensors.FromFlatDataAndDimensions(zeros, v.Shape().Dimensions...)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

// With the prior network zeroed, f ≡ 0 and U(z) = ‖z‖²/2: chains from
// N(0, I) follow z ← r z + s ξ, r = 1 − s²/2, so before step k each
// coordinate has variance v_k = r^{2k} + s²(1 − r^{2k})/(1 − r²), and the
// mean energy over chains is nz·v_k/2.
func TestPriorChainEnergiesFollowTheGaussianRecursion(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	m := zeroPriorModel(t, cfg)
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
}

// TestPriorChainEnergiesTraceEachChain checks, chain by chain, the energy
// profile of noiseless chains against its closed form: with f ≡ 0 and no
// noise, z ← r z with r = 1 − s²/2, so U before step k is r^{2k} U(z₀);
// and that the smallest valid call, one chain of one step, works.
func TestPriorChainEnergiesTraceEachChain(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	cfg.GenerationLangevin.NoNoise = true
	m := zeroPriorModel(t, cfg)
	const chains, steps, chunk = 3, 4, 2
	energies, err := m.PriorChainEnergies(chains, steps, chunk)
	if err != nil {
		t.Fatal(err)
	}
	if len(energies) != chains {
		t.Fatalf("%d chains of energies, want %d", len(energies), chains)
	}
	s := cfg.GenerationLangevin.StepSize
	r := 1 - s*s/2
	for c, e := range energies {
		if len(e) != steps || !(e[0] > 0) {
			t.Fatalf("chain %d: energies %v, want %d starting above 0", c, e, steps)
		}
		want := make([]float64, steps)
		for k := range want {
			want[k] = math.Pow(r, float64(2*k)) * e[0]
		}
		testutil.AssertAllClose(t, fmt.Sprintf("chain %d's energies", c), e, want, 1e-9)
	}
	if c0, c1 := energies[0][0], energies[1][0]; c0 == c1 {
		t.Errorf("chains 0 and 1 start at the same energy %g: want independent starts", c0)
	}

	one, err := m.PriorChainEnergies(1, 1, 1)
	if err != nil || len(one) != 1 || len(one[0]) != 1 {
		t.Errorf("PriorChainEnergies(1, 1, 1) = %v, %v; want one chain of one energy", one, err)
	}
}

// TestPriorChainEnergiesRejectsBadArguments checks the documented argument
// errors, which come before any graph is built, name the bad value.
func TestPriorChainEnergiesRejectsBadArguments(t *testing.T) {
	t.Parallel()
	m := &Model{cfg: tinyConfig(t)} // no graphs: validation comes first
	for _, tc := range []struct {
		chains, steps, chunk int
		want                 string
	}{
		{0, 4, 2, "chains = 0"},
		{2, 0, 2, "steps = 0"},
		{2, 4, 0, "chunk = 0"},
		{2, 4, -2, "chunk = -2"},
		{2, 10, 3, "steps = 10, chunk = 3"},
	} {
		_, err := m.PriorChainEnergies(tc.chains, tc.steps, tc.chunk)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "want positive numbers") {
			t.Errorf("PriorChainEnergies(%d, %d, %d) error %v, want one naming %q", tc.chains, tc.steps, tc.chunk, err, tc.want)
		}
	}
}

// Decode against the hand-written decoder of a one-layer generator.
func TestDecodeMatchesANaiveGenerator(t *testing.T) {
	t.Parallel()
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

// TestPriorChainEnergiesOfMALAChains: with GenerationSampler "mala" the
// diagnostic chains are MALA chains: their energies are U along
// sampling.MALA run one step at a time from the same draws (here in one
// graph, the chunks of 2 then joined).
func TestPriorChainEnergiesOfMALAChains(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	cfg.GenerationSampler = SamplerMALA
	cfg.GenerationLangevin.StepSize = 1.2
	m := newModel(t, cfg)
	const chains, steps = 5, 4
	if err := m.Seed(3); err != nil {
		t.Fatal(err)
	}
	energies, err := m.PriorChainEnergies(chains, steps, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Seed(3); err != nil {
		t.Fatal(err)
	}
	want := runGraph(t, m.Context(), func(ctx *context.Context, g *Graph) []*Node {
		prior := func(z *Node) *Node { return PriorEnergy(ctx, cfg, z) }
		z := BaseSample(ctx, cfg, g, chains)
		var out []*Node
		for range steps {
			out = append(out, prior(z))
			z, _ = sampling.MALA(ctx, prior, z, sampling.MALAConfig{StepSize: 1.2, Steps: 1})
		}
		return out
	})
	moved := false
	for c := range chains {
		for k := range steps {
			if math.Abs(energies[c][k]-want[k][c]) > 1e-9*(1+math.Abs(want[k][c])) {
				t.Fatalf("chain %d, step %d: energy %v, MALA's %v", c, k, energies[c][k], want[k][c])
			}
			moved = moved || k > 0 && energies[c][k] != energies[c][k-1]
		}
	}
	if !moved {
		t.Error("no chain moved")
	}
}
