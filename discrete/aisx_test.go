package discrete

import (
	"os"
	"strconv"
	"testing"
	"time"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/datasets/ising"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
)

func TestAISIsingExplore(t *testing.T) {
	side, _ := strconv.Atoi(os.Getenv("SIDE"))
	temps, _ := strconv.Atoi(os.Getenv("T"))
	trans, _ := strconv.Atoi(os.Getenv("TRANS"))
	for _, sigma := range []float64{0.1, 0.2, 0.3} {
		m, _ := ising.Lattice(side, sigma)
		exact, _ := ising.LatticeLogZ(side, sigma)
		j := make([]float32, len(m.J))
		for i, v := range m.J {
			j[i] = float32(v)
		}
		d := m.D
		energyOf := func(*context.Context) losses.EnergyFn {
			return func(x *Node) *Node {
				s := AddScalar(MulScalar(x, 2), -1)
				return Neg(ReduceSum(Mul(MatMul(s, Reshape(Const(x.Graph(), j), d, d)), s), 1))
			}
		}
		base := make([]float64, d)
		for i := range base {
			base[i] = 0.5
		}
		start := time.Now()
		res, err := AIS(testutil.Backend(), context.New(), energyOf, base, AISConfig{AnnealConfig: sampling.AnnealConfig{Temperatures: temps, Seed: 1, Spacing: os.Getenv("SPACING")}, Transitions: trans})
		if err != nil {
			t.Fatal(err)
		}
		v := 0.0
		mean := 0.0
		for _, w := range res.LogWeights {
			mean += w / float64(len(res.LogWeights))
		}
		for _, w := range res.LogWeights {
			v += (w - mean) * (w - mean) / float64(len(res.LogWeights))
		}
		t.Logf("var %.3f predicted %.3f", v, res.Length*res.Length/float64(res.Temperatures))
		t.Logf("σ %.2f: exact %.3f forward %.3f [%.3f %.3f] check %.3f upper %.3f acc %.2f ess %.0f length %.1f conv %v %.1fs", sigma, exact, res.LogZ, res.Interval.Lo, res.Interval.Hi, res.Check.LogZ, res.Upper.LogZ, res.Acceptance, res.EffectiveChains, res.Length, res.Converged, time.Since(start).Seconds())
	}
}
