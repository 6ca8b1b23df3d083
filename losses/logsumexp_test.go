package losses

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// inFloat32 runs fn on its float64 inputs converted to float32 and returns
// its outputs converted back, so that the computation itself is float32.
func inFloat32(fn func(in []*Node) []*Node) func(in []*Node) []*Node {
	return func(in []*Node) []*Node {
		in32 := make([]*Node, len(in))
		for i, n := range in {
			in32[i] = ConvertDType(n, dtypes.Float32)
		}
		out := fn(in32)
		for i, n := range out {
			out[i] = ConvertDType(n, dtypes.Float64)
		}
		return out
	}
}

// TestLogSumExpInFloat32 feeds logSumExp rows whose exponentials overflow
// (e^300) or underflow (e^−200) float32 and checks the value and its
// gradient, the softmax, against float64 loops.
func TestLogSumExpInFloat32(t *testing.T) {
	rows := [][]float64{{100, 200, 300}, {-300, -200, -250}, {-150, 0, 150}, {1, 2, 3}}
	x := array{Dims: []int{len(rows), 3}}
	for _, r := range rows {
		x.Data = append(x.Data, r...)
	}
	out := run(t, inFloat32(func(in []*Node) []*Node {
		lse := logSumExp(in[0], 1)
		// Weights make each row's gradient distinguishable.
		weighted := ReduceAllSum(Mul(lse, Const(in[0].Graph(), []float32{1, 2, 3, 4})))
		return []*Node{lse, Gradient(weighted, in[0])[0]}
	}), x)
	for i, r := range rows {
		want := logSumExpNaive(r)
		assertClose(t, "logsumexp", out[0][i], want, 1e-6)
		for j, v := range r {
			softmax := math.Exp(v - want)
			if got := out[1][i*3+j] / float64(i+1); math.IsNaN(got) || math.Abs(got-softmax) > 1e-6 {
				t.Errorf("row %d: ∂logsumexp/∂x[%d] = %g, want softmax %g", i, j, got, softmax)
			}
		}
	}
}

// TestEnergyDiscrepancyInFloat32AtLargeEnergyGaps computes ED in float32
// with a steep quadratic energy whose gaps E(x) − E(y) reach ±100 and more,
// beyond float32's exp range, and compares with the float64 loop.
func TestEnergyDiscrepancyInFloat32AtLargeEnergyGaps(t *testing.T) {
	for _, cfg := range []EDConfig{{T: 1, M: 4, W: 1}, {T: 1, M: 4, W: 0}} {
		c := edCase{"steep", 6, []int{2}, cfg}
		rng := rand.New(rand.NewPCG(5, 6))
		a, b, x, xi, xiPrime := c.inputs(rng)
		for i := range a.Data {
			a.Data[i] *= 200
		}
		for i := range x.Data {
			x.Data[i] *= 2
		}
		var maxGap, minGap float64
		for i := range c.batch {
			ex := quadraticNaive(a.Data, b.Data, x.Data[2*i:2*i+2])
			for j := range cfg.M {
				y := make([]float64, 2)
				for d := range y {
					y[d] = x.Data[2*i+d] + xi.Data[2*i+d] + xiPrime.Data[(i*cfg.M+j)*2+d]
				}
				gap := ex - quadraticNaive(a.Data, b.Data, y)
				maxGap, minGap = math.Max(maxGap, gap), math.Min(minGap, gap)
			}
		}
		if maxGap < 100 || minGap > -100 {
			t.Fatalf("test inputs: energy gaps in [%g, %g], want beyond ±100", minGap, maxGap)
		}
		got := run(t, inFloat32(func(in []*Node) []*Node {
			return []*Node{EnergyDiscrepancyWithNoise(quadratic(in[0], in[1]), in[2], in[3], in[4], cfg)}
		}), a, b, x, xi, xiPrime)[0][0]
		assertClose(t, fmt.Sprintf("float32 ED with w = %g", cfg.W), got, edNaive(a.Data, b.Data, x, xi, xiPrime, cfg), 1e-5)
	}
}
