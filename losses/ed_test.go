package losses

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// edNaive computes the Gaussian energy discrepancy with plain loops.
func edNaive(a, b []float64, x, xi, xiPrime array, cfg EDConfig) float64 {
	batch, dim := x.Dims[0], len(a)
	sqrtT := math.Sqrt(cfg.T)
	var total float64
	for i := range batch {
		xi0 := x.Data[i*dim : (i+1)*dim]
		ex := quadraticNaive(a, b, xi0)
		var terms []float64
		if cfg.W > 0 {
			terms = append(terms, math.Log(cfg.W))
		}
		for j := range cfg.M {
			y := make([]float64, dim)
			for d := range dim {
				y[d] = xi0[d] + sqrtT*xi.Data[i*dim+d] + sqrtT*xiPrime.Data[(i*cfg.M+j)*dim+d]
			}
			terms = append(terms, ex-quadraticNaive(a, b, y))
		}
		l := logSumExpNaive(terms)
		if !cfg.DropLogM {
			l -= math.Log(float64(cfg.M))
		}
		total += l
	}
	return total / float64(batch)
}

type edCase struct {
	name        string
	batch       int
	exampleDims []int
	cfg         EDConfig
}

var edCases = []edCase{
	{"paper toy setting", 5, []int{2}, EDConfig{T: 1, M: 4, W: 1}},
	{"no stabiliser, one negative", 4, []int{3}, EDConfig{T: 0.25, M: 1, W: 0}},
	{"small w, rank-3 examples", 3, []int{2, 3}, EDConfig{T: 0.5, M: 8, W: 0.05}},
	{"authors' form without log M", 4, []int{2}, EDConfig{T: 2, M: 16, W: 1, DropLogM: true}},
}

func (c edCase) inputs(rng *rand.Rand) (a, b, x, xi, xiPrime array) {
	dim := 1
	for _, d := range c.exampleDims {
		dim *= d
	}
	a = testutil.RandomArray(rng, 0.5, dim)
	for i := range a.Data {
		a.Data[i] = 0.5 + math.Abs(a.Data[i])
	}
	b = testutil.RandomArray(rng, 0.5, dim)
	x = testutil.RandomArray(rng, 1, append([]int{c.batch}, c.exampleDims...)...)
	xi = testutil.RandomArray(rng, 1, x.Dims...)
	xiPrime = testutil.RandomArray(rng, 1, append([]int{c.batch, c.cfg.M}, c.exampleDims...)...)
	return
}

func TestEnergyDiscrepancyMatchesNaiveLoop(t *testing.T) {
	for _, c := range edCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			a, b, x, xi, xiPrime := c.inputs(rng)
			got := run(t, func(in []*Node) []*Node {
				return []*Node{EnergyDiscrepancyWithNoise(quadratic(in[0], in[1]), in[2], in[3], in[4], c.cfg)}
			}, a, b, x, xi, xiPrime)[0][0]
			assertClose(t, "ED", got, edNaive(a.Data, b.Data, x, xi, xiPrime, c.cfg), 1e-9)
		})
	}
}

func TestEnergyDiscrepancyGradientMatchesFiniteDifferences(t *testing.T) {
	for _, c := range edCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			a, b, x, xi, xiPrime := c.inputs(rng)
			out := run(t, func(in []*Node) []*Node {
				loss := EnergyDiscrepancyWithNoise(quadratic(in[0], in[1]), in[2], in[3], in[4], c.cfg)
				return Gradient(loss, in[0], in[1])
			}, a, b, x, xi, xiPrime)
			for p, param := range []array{a, b} {
				for k := range param.Data {
					const h = 1e-6
					orig := param.Data[k]
					param.Data[k] = orig + h
					up := edNaive(a.Data, b.Data, x, xi, xiPrime, c.cfg)
					param.Data[k] = orig - h
					down := edNaive(a.Data, b.Data, x, xi, xiPrime, c.cfg)
					param.Data[k] = orig
					assertClose(t, "∂ED/∂θ", out[p][k], (up-down)/(2*h), 1e-6)
				}
			}
		})
	}
}

// For U(y) = y²/(2σ²) and w = 0, as M → ∞ the per-example loss tends to
// U(x) + log E_ξ′ exp(−U(x̄ + √t ξ′)) = x²/(2σ²) − x̄²/(2(σ²+t)) + ½ log(σ²/(σ²+t)).
func TestEnergyDiscrepancyLargeMApproachesClosedForm(t *testing.T) {
	const sigma2, tVar, m = 1.5, 0.5, 40000
	rng := rand.New(rand.NewPCG(5, 6))
	x := array{Data: []float64{-1.2, 0.3, 2.0}, Dims: []int{3, 1}}
	xi := array{Data: []float64{0.4, -0.7, 1.1}, Dims: []int{3, 1}}
	xiPrime := testutil.RandomArray(rng, 1, 3, m, 1)
	cfg := EDConfig{T: tVar, M: m, W: 0}
	got := run(t, func(in []*Node) []*Node {
		a := Const(in[0].Graph(), []float64{1 / sigma2})
		b := Const(in[0].Graph(), []float64{0})
		return []*Node{EnergyDiscrepancyWithNoise(quadratic(a, b), in[0], in[1], in[2], cfg)}
	}, x, xi, xiPrime)[0][0]
	var want float64
	for i, xv := range x.Data {
		xBar := xv + math.Sqrt(tVar)*xi.Data[i]
		want += xv*xv/(2*sigma2) - xBar*xBar/(2*(sigma2+tVar)) + 0.5*math.Log(sigma2/(sigma2+tVar))
	}
	want /= 3
	assertClose(t, "ED with M → ∞", got, want, 5e-3)
}

// ED's minimiser is the data distribution: fitting the variance v of the
// energy x²/(2v) to N(0, 2) data by gradient descent on ED recovers v ≈ 2.
func TestEnergyDiscrepancyRecoversDataVariance(t *testing.T) {
	const dataVar = 2.0
	for _, cfg := range []EDConfig{{T: 1, M: 32, W: 1}, {T: 0.5, M: 32, W: 0}} {
		ctx := context.New()
		if err := ctx.SetRNGStateFromSeed(7); err != nil {
			t.Fatal(err)
		}
		exec, err := context.NewExec(testBackend(), ctx, func(ctx *context.Context, logVar, x *Node) []*Node {
			energy := func(y *Node) *Node {
				return ReduceSum(Div(Square(y), MulScalar(Exp(logVar), 2)), 1)
			}
			loss := EnergyDiscrepancy(ctx, energy, x, cfg)
			return []*Node{Gradient(loss, logVar)[0]}
		})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(8, 9))
		logVar, avg := 0.0, 0.0
		const steps, lr, batch = 400, 0.5, 1024
		for step := range steps {
			x := testutil.RandomArray(rng, math.Sqrt(dataVar), batch, 1)
			out, err := exec.Exec(logVar, x.Tensor())
			if err != nil {
				t.Fatal(err)
			}
			logVar -= lr * tensors.ToScalar[float64](out[0])
			if step >= steps-100 {
				avg += math.Exp(logVar) / 100
			}
		}
		if math.Abs(avg-dataVar) > 0.1*dataVar {
			t.Errorf("%+v: fitted variance %.3f, want the data variance %.1f ± 10%%", cfg, avg, dataVar)
		} else {
			t.Logf("%+v: fitted variance %.3f (data %.1f)", cfg, avg, dataVar)
		}
	}
}
