package discrete

import (
	"fmt"
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/datasets/ising"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
)

// latticeAIS runs AIS from the uniform base on the periodic side×side
// lattice with couplings σ·A, U(x) = −sᵀJs, and returns it with the exact
// log Z (ising.LatticeLogZ).
func latticeAIS(tb testing.TB, side int, sigma float64, cfg AISConfig) (sampling.AISResult, float64) {
	tb.Helper()
	m, err := ising.Lattice(side, sigma)
	if err != nil {
		tb.Fatal(err)
	}
	exact, err := ising.LatticeLogZ(side, sigma)
	if err != nil {
		tb.Fatal(err)
	}
	d, j := m.D, make([]float32, len(m.J)) // the energy of float32 bits, as a model's
	for i, v := range m.J {
		j[i] = float32(v)
	}
	base := make([]float64, d)
	for i := range base {
		base[i] = 0.5
	}
	res, err := AIS(testutil.Backend(), context.New(), func(*context.Context) losses.EnergyFn {
		return func(x *Node) *Node {
			s := AddScalar(MulScalar(x, 2), -1)
			return Neg(ReduceSum(Mul(MatMul(s, Reshape(Const(x.Graph(), j), d, d)), s), 1))
		}
	}, base, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return res, exact
}

// TestAISMatchesKaufman: on the 8×8 periodic Ising lattice at K = 0.4,
// near the critical coupling 0.4407 (64 bits, 2⁶⁴ states), AIS at 2,000
// temperatures lands within 0.15 nats of Kaufman's exact log Z, forward
// and reverse, and is judged converged.
func TestAISMatchesKaufman(t *testing.T) {
	res, exact := latticeAIS(t, 8, 0.2, AISConfig{AnnealConfig: sampling.AnnealConfig{Temperatures: 2000, Seed: 1}})
	t.Logf("exact %.3f: forward %.3f [%.3f, %.3f], check %.3f, reverse %.3f, effective chains %.0f",
		exact, res.LogZ, res.Interval.Lo, res.Interval.Hi, res.Check.LogZ, res.Upper.LogZ, res.EffectiveChains)
	if math.Abs(res.LogZ-exact) > 0.15 || math.Abs(res.Upper.LogZ-exact) > 0.15 || !res.Converged {
		t.Errorf("log Z %.3f forward, %.3f reverse, exact %.3f; converged %v %q", res.LogZ, res.Upper.LogZ, exact, res.Converged, res.Warnings)
	}
}

// BenchmarkAISOnIsingLattices is docs/discrete.md's table of how far
// discrete AIS is from the exact log Z of Ising lattices, and whether its
// checks see it, at its defaults and with four times the work:
//
//	go test -run '^$' -bench AISOnIsingLattices -benchtime 1x ./discrete
func BenchmarkAISOnIsingLattices(b *testing.B) {
	fmt.Println("| lattice | K = 2σ | temperatures × transitions | exact log Z | forward − exact | check − exact | reverse − exact | effective chains | converged |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for range b.N {
		for _, side := range []int{8, 16} {
			for _, sigma := range []float64{0.1, 0.2, 0.3} {
				for _, work := range []struct{ temperatures, transitions int }{{2000, 1}, {8000, 1}, {2000, 4}} {
					res, exact := latticeAIS(b, side, sigma, AISConfig{AnnealConfig: sampling.AnnealConfig{Temperatures: work.temperatures, Seed: 1}, Transitions: work.transitions})
					fmt.Printf("| %d×%d | %.1f | %d × %d | %.3f | %+.3f | %+.3f | %+.3f | %.0f of %d | %v |\n", side, side, 2*sigma, work.temperatures, work.transitions,
						exact, res.LogZ-exact, res.Check.LogZ-exact, res.Upper.LogZ-exact, res.EffectiveChains, res.Chains, res.Converged)
				}
			}
		}
	}
}
