package losses

import (
	"fmt"
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// One step of Gibbs with gradients from each of the 8 states of 3
// interacting bits lands in each state with the probability of the
// Metropolis–Hastings kernel computed here by enumeration: the proposal
// from the energy's analytic gradient, the acceptance from the exact
// energies and the reverse proposal. The chain's fraction of accepted
// proposals is checked against the kernel too. Two steps, in one call or
// in two (the second call starting from the first's gradient-stopped
// states: GoMLX's gradient with respect to a StopGradient node is zero, so
// the proposal once ignored the energy there), follow the squared kernel.
func TestGibbsWithGradientsMatchesEnumeration(t *testing.T) {
	for _, tc := range []struct{ steps, calls int }{{1, 1}, {2, 1}, {1, 2}} {
		t.Run(fmt.Sprintf("%d steps × %d calls", tc.steps, tc.calls), func(t *testing.T) { testGWGKernel(t, tc.steps, tc.calls) })
	}
}

func testGWGKernel(t *testing.T, steps, calls int) {
	w := [3][3]float64{{0, 1.5, -1}, {1.5, 0, 0.5}, {-1, 0.5, 0}}
	b := [3]float64{-0.5, 0.3, 0.8}
	bits := func(s int) [3]float64 { return [3]float64{float64(s >> 2 & 1), float64(s >> 1 & 1), float64(s & 1)} }
	energyNaive := func(x [3]float64) float64 {
		e := 0.0
		for i := range 3 {
			e += b[i] * x[i]
			for j := i + 1; j < 3; j++ {
				e += w[i][j] * x[i] * x[j]
			}
		}
		return e
	}
	// proposal returns q(i | x) = softmax((2xᵢ − 1)·∂E/∂xᵢ / 2).
	proposal := func(x [3]float64) [3]float64 {
		var q [3]float64
		total := 0.0
		for i := range 3 {
			grad := b[i]
			for j := range 3 {
				grad += w[i][j] * x[j]
			}
			q[i] = math.Exp((2*x[i] - 1) * grad / 2)
			total += q[i]
		}
		for i := range q {
			q[i] /= total
		}
		return q
	}
	var kernel [8][8]float64
	var acceptance [8]float64
	for s := range 8 {
		x, q := bits(s), proposal(bits(s))
		for i := range 3 {
			next := s ^ (4 >> i)
			alpha := math.Min(1, math.Exp(energyNaive(x)-energyNaive(bits(next)))*proposal(bits(next))[i]/q[i])
			kernel[s][next] = q[i] * alpha
			acceptance[s] += q[i] * alpha
		}
		kernel[s][s] = math.Max(0, 1-acceptance[s]) // 0, not −1e-17, when every flip is accepted
	}
	if steps*calls == 2 {
		var k2 [8][8]float64
		for a := range 8 {
			for b := range 8 {
				for c := range 8 {
					k2[a][c] += kernel[a][b] * kernel[b][c]
				}
			}
		}
		kernel = k2
	}

	const n = 20000 // chains from each state
	starts := make([]float64, 0, 8*n*3)
	for s := range 8 {
		for range n {
			x := bits(s)
			starts = append(starts, x[:]...)
		}
	}
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(5); err != nil {
		t.Fatal(err)
	}
	exec := context.MustNewExec(testBackend(), ctx, func(ctx *context.Context, x *Node) (*Node, *Node) {
		g := x.Graph()
		wNode := Const(g, [][]float64{w[0][:], w[1][:], w[2][:]})
		bNode := Const(g, b[:])
		energy := func(x *Node) *Node {
			pairs := MulScalar(ReduceSum(Mul(MatMul(x, wNode), x), 1), 0.5)
			return Add(pairs, ReduceSum(Mul(x, InsertAxes(bNode, 0)), 1))
		}
		var acceptance *Node
		for range calls {
			x, acceptance = GibbsWithGradients(ctx, energy, x, steps)
		}
		return x, acceptance
	})
	out := exec.MustExec(tensors.FromFlatDataAndDimensions(starts, 8*n, 3))
	flat := tensors.MustCopyFlatData[float64](out[0])
	wantAcceptance := 0.0
	for s := range 8 {
		counts := make([]float64, 8)
		for k := s * n; k < (s+1)*n; k++ {
			counts[int(flat[3*k])<<2|int(flat[3*k+1])<<1|int(flat[3*k+2])]++
		}
		for next := range 8 {
			got, want := counts[next]/n, kernel[s][next]
			sigma := math.Sqrt(want * (1 - want) / n)
			if !(math.Abs(got-want) <= 4*sigma+1e-4) {
				t.Errorf("%03b → %03b: frequency %.4f after one step, want %.4f ± %.4f (4σ)", s, next, got, want, 4*sigma)
			}
		}
		wantAcceptance += acceptance[s] / 8
	}
	if steps*calls > 1 {
		return
	}
	got := tensors.ToScalar[float64](out[1])
	if sigma := math.Sqrt(wantAcceptance * (1 - wantAcceptance) / (8 * n)); !(math.Abs(got-wantAcceptance) <= 4*sigma) {
		t.Errorf("acceptance %.4f, want %.4f ± %.4f (4σ)", got, wantAcceptance, 4*sigma)
	}
}

// Many steps of Gibbs with gradients leave chains distributed as
// p ∝ exp(−E): from all-zero states, 25 steps on 4 bits (a graph of 5
// steps run 5 times) reach the exact probabilities by enumeration.
func TestGibbsWithGradientsReachesTheTarget(t *testing.T) {
	bias := []float64{1.2, -0.7, 0.3, -1.5}
	coupling := 0.8 // between neighbouring bits
	energyNaive := func(s int) float64 {
		e := 0.0
		for i := range 4 {
			xi := float64(s >> i & 1)
			e += bias[i] * xi
			if i > 0 {
				e -= coupling * xi * float64(s>>(i-1)&1)
			}
		}
		return e
	}
	want := make([]float64, 16)
	z := 0.0
	for s := range 16 {
		want[s] = math.Exp(-energyNaive(s))
		z += want[s]
	}
	const n = 40000
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(11); err != nil {
		t.Fatal(err)
	}
	exec := context.MustNewExec(testBackend(), ctx, func(ctx *context.Context, x *Node) *Node {
		g := x.Graph()
		biasNode := InsertAxes(Const(g, bias), 0)
		// The chain's adjacency: Σᵢ xᵢxᵢ₊₁ = ½ xᵀAx.
		adjacency := Const(g, [][]float64{{0, 1, 0, 0}, {1, 0, 1, 0}, {0, 1, 0, 1}, {0, 0, 1, 0}})
		energy := func(x *Node) *Node {
			pairs := MulScalar(ReduceSum(Mul(MatMul(x, adjacency), x), 1), 0.5)
			return Sub(ReduceSum(Mul(x, biasNode), 1), MulScalar(pairs, coupling))
		}
		next, _ := GibbsWithGradients(ctx, energy, x, 5)
		return next
	})
	chains := tensors.FromFlatDataAndDimensions(make([]float64, 4*n), n, 4)
	for range 5 {
		chains = exec.MustExec(chains)[0]
	}
	flat := tensors.MustCopyFlatData[float64](chains)
	counts := make([]float64, 16)
	for k := range n {
		s := 0
		for i := range 4 {
			s |= int(flat[4*k+i]) << i
		}
		counts[s]++
	}
	for s := range 16 {
		p := want[s] / z
		sigma := math.Sqrt(p * (1 - p) / n)
		if got := counts[s] / n; !(math.Abs(got-p) <= 4*sigma+2e-3) {
			t.Errorf("state %04b: frequency %.4f after 25 steps, want %.4f ± %.4f", s, got, p, 4*sigma)
		}
	}
}
