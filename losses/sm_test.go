package losses

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// softplusEnergy is E(x) = Σ_d c_d softplus(x_d + x_{d+1 mod D}) + ½ Σ x_d²,
// with cross terms so the Hessian is not diagonal.
func softplusEnergy(c *Node) EnergyFn {
	return func(x *Node) *Node {
		dim := c.Shape().Size()
		// Rolled copy x_{d+1 mod D} via a permutation matrix (no slicing).
		perm := make([][]float64, dim)
		for d := range perm {
			perm[d] = make([]float64, dim)
		}
		for d := range perm {
			perm[(d+1)%dim][d] = 1
		}
		rolled := MatMul(x, Const(x.Graph(), perm))
		terms := Mul(InsertAxes(c, 0), Softplus(Add(x, rolled)))
		return ReduceSum(Add(terms, MulScalar(Square(x), 0.5)), 1)
	}
}

func softplusEnergyNaive(c, x []float64) float64 {
	var e float64
	for d := range x {
		u := x[d] + x[(d+1)%len(x)]
		e += c[d]*math.Log1p(math.Exp(u)) + 0.5*x[d]*x[d]
	}
	return e
}

// scoreMatchingByFiniteDifferences computes mean ½‖∇E‖² − ΔE with central
// differences of the energy.
func scoreMatchingByFiniteDifferences(energy func([]float64) float64, x array) float64 {
	batch, dim := x.Dims[0], x.Dims[1]
	const h = 1e-4
	var total float64
	for i := range batch {
		p := append([]float64(nil), x.Data[i*dim:(i+1)*dim]...)
		e0 := energy(p)
		for d := range dim {
			orig := p[d]
			p[d] = orig + h
			up := energy(p)
			p[d] = orig - h
			down := energy(p)
			p[d] = orig
			grad := (up - down) / (2 * h)
			second := (up - 2*e0 + down) / (h * h)
			total += 0.5*grad*grad - second
		}
	}
	return total / float64(batch)
}

func TestScoreMatchingOfGaussianIsClosedForm(t *testing.T) {
	// E = ½ Σ a_d x_d² + b·x: ∇E = a⊙x + b, ΔE = Σ a_d.
	rng := rand.New(rand.NewPCG(31, 32))
	a, b := array{Data: []float64{0.5, 2, 1.5}, Dims: []int{3}}, testutil.RandomArray(rng, 1, 3)
	x := testutil.RandomArray(rng, 1, 6, 3)
	got := run(t, func(in []*Node) []*Node {
		return []*Node{ScoreMatching(quadratic(in[0], in[1]), in[2])}
	}, a, b, x)[0][0]
	var want float64
	for i := range 6 {
		for d := range 3 {
			g := a.Data[d]*x.Data[3*i+d] + b.Data[d]
			want += (0.5*g*g - a.Data[d]) / 6
		}
	}
	assertClose(t, "SM", got, want, 1e-12)
}

func TestScoreMatchingMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	c := array{Data: []float64{1.5, -0.7, 0.9}, Dims: []int{3}}
	x := testutil.RandomArray(rng, 1, 5, 3)
	got := run(t, func(in []*Node) []*Node {
		return []*Node{ScoreMatching(softplusEnergy(in[0]), in[1])}
	}, c, x)[0][0]
	want := scoreMatchingByFiniteDifferences(func(p []float64) float64 { return softplusEnergyNaive(c.Data, p) }, x)
	assertClose(t, "SM", got, want, 1e-5)
}

// The gradient of the SM loss with respect to the energy's parameters needs
// third derivatives of the energy; check it against finite differences of
// the (finite-difference) loss.
func TestScoreMatchingParameterGradientMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	c := array{Data: []float64{1.5, -0.7}, Dims: []int{2}}
	x := testutil.RandomArray(rng, 1, 4, 2)
	grad := run(t, func(in []*Node) []*Node {
		return Gradient(ScoreMatching(softplusEnergy(in[0]), in[1]), in[0])
	}, c, x)[0]
	loss := func() float64 {
		return run(t, func(in []*Node) []*Node {
			return []*Node{ScoreMatching(softplusEnergy(in[0]), in[1])}
		}, c, x)[0][0]
	}
	for k := range c.Data {
		const h = 1e-5
		orig := c.Data[k]
		c.Data[k] = orig + h
		up := loss()
		c.Data[k] = orig - h
		down := loss()
		c.Data[k] = orig
		assertClose(t, "∂SM/∂c", grad[k], (up-down)/(2*h), 1e-6)
	}
}

func TestSlicedScoreMatchingMatchesNaiveLoop(t *testing.T) {
	// Quadratic energy: vᵀ∇²E v = Σ a_d v_d², vᵀ∇E = Σ v_d (a_d x_d + b_d).
	rng := rand.New(rand.NewPCG(37, 38))
	const k, batch, dim = 3, 4, 2
	a, b := array{Data: []float64{0.7, 1.9}, Dims: []int{dim}}, testutil.RandomArray(rng, 1, dim)
	x, v := testutil.RandomArray(rng, 1, batch, dim), testutil.RandomArray(rng, 1, k, batch, dim)
	for _, vr := range []bool{false, true} {
		got := run(t, func(in []*Node) []*Node {
			return []*Node{SlicedScoreMatchingWithProjections(quadratic(in[0], in[1]), in[2], in[3], vr)}
		}, a, b, x, v)[0][0]
		var want float64
		for p := range k {
			for i := range batch {
				var vHv, vg, gg float64
				for d := range dim {
					vd := v.Data[(p*batch+i)*dim+d]
					g := a.Data[d]*x.Data[i*dim+d] + b.Data[d]
					vHv += a.Data[d] * vd * vd
					vg += vd * g
					gg += g * g
				}
				fit := 0.5 * vg * vg
				if vr {
					fit = 0.5 * gg
				}
				want += (fit - vHv) / (k * batch)
			}
		}
		assertClose(t, "sliced SM", got, want, 1e-12)
	}
}

// DSM against a loop, for examples that are vectors and for examples with
// two axes (images are [B, H, W, C]): the loss sums each example's axes.
func TestDenoisingScoreMatchingMatchesNaiveLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	const batch, sigma = 5, 0.3
	for _, example := range [][]int{{2}, {2, 3}} {
		dim := 1
		for _, d := range example {
			dim *= d
		}
		a, b := testutil.RandomArray(rng, 1, dim), testutil.RandomArray(rng, 1, dim)
		for i := range a.Data {
			a.Data[i] += 1.5 // positive curvatures
		}
		dims := append([]int{batch}, example...)
		x, xi := testutil.RandomArray(rng, 1, dims...), testutil.RandomArray(rng, 1, dims...)
		got := run(t, func(in []*Node) []*Node {
			return []*Node{DenoisingScoreMatchingWithNoise(quadratic(in[0], in[1]), in[2], in[3], sigma)}
		}, a, b, x, xi)[0][0]
		var want float64
		for i := range batch {
			for d := range dim {
				noisy := x.Data[i*dim+d] + sigma*xi.Data[i*dim+d]
				r := xi.Data[i*dim+d]/sigma - (a.Data[d]*noisy + b.Data[d])
				want += 0.5 * r * r / batch
			}
		}
		assertClose(t, fmt.Sprintf("DSM, examples %v", example), got, want, 1e-12)
	}
}
