package losses

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	. "github.com/gomlx/gomlx/pkg/core/graph"
)

func TestBernoulliEnergyDiscrepancyMatchesNaiveLoop(t *testing.T) {
	cases := []struct {
		name string
		cfg  BernoulliEDConfig
	}{
		{"stabilised", BernoulliEDConfig{Epsilon: 0.1, M: 4, W: 1}},
		{"no stabiliser", BernoulliEDConfig{Epsilon: 0.3, M: 2, W: 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const batch, dim = 4, 6
			rng := rand.New(rand.NewPCG(11, 12))
			a, b := testutil.RandomArray(rng, 1, dim), testutil.RandomArray(rng, 1, dim)
			x := bitsArray(rng, 0.5, batch, dim)
			xi := bitsArray(rng, c.cfg.Epsilon, batch, dim)
			xiPrime := bitsArray(rng, c.cfg.Epsilon, batch, c.cfg.M, dim)
			got := run(t, func(in []*Node) []*Node {
				return []*Node{BernoulliEnergyDiscrepancyWithNoise(quadratic(in[0], in[1]), in[2], in[3], in[4], c.cfg)}
			}, a, b, x, xi, xiPrime)[0][0]

			var want float64
			for i := range batch {
				xRow := x.Data[i*dim : (i+1)*dim]
				var terms []float64
				if c.cfg.W > 0 {
					terms = append(terms, math.Log(c.cfg.W))
				}
				for j := range c.cfg.M {
					y := make([]float64, dim)
					for d := range dim {
						flips := int(xi.Data[i*dim+d]) + int(xiPrime.Data[(i*c.cfg.M+j)*dim+d])
						y[d] = xRow[d]
						if flips%2 == 1 {
							y[d] = 1 - xRow[d]
						}
					}
					terms = append(terms, quadraticNaive(a.Data, b.Data, xRow)-quadraticNaive(a.Data, b.Data, y))
				}
				want += logSumExpNaive(terms) - math.Log(float64(c.cfg.M))
			}
			assertClose(t, "Bernoulli ED", got, want/batch, 1e-9)
		})
	}
}
