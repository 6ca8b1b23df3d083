package losses

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/edlebm/edlebm/internal/testutil"

	. "github.com/gomlx/gomlx/pkg/core/graph"
)

var testBackend = testutil.Backend

// array is the tests' float64 tensor.
type array = testutil.Array

// bitsArray draws 0/1 values with P(1) = p.
func bitsArray(rng *rand.Rand, p float64, dims ...int) array {
	a := testutil.RandomArray(rng, 1, dims...)
	for i := range a.Data {
		a.Data[i] = 0
		if rng.Float64() < p {
			a.Data[i] = 1
		}
	}
	return a
}

// run executes fn on the test backend and returns its outputs as flat float64 slices.
var run = testutil.Run

// quadratic is E(x) = ½ Σ a_d x_d² + Σ b_d x_d per example, over the
// flattened example; a and b are graph nodes so tests can differentiate
// with respect to them.
func quadratic(a, b *Node) EnergyFn {
	return func(x *Node) *Node {
		flat := Reshape(x, x.Shape().Dimensions[0], a.Shape().Size())
		return ReduceSum(Add(MulScalar(Mul(InsertAxes(a, 0), Square(flat)), 0.5), Mul(InsertAxes(b, 0), flat)), 1)
	}
}

// quadraticNaive evaluates the same energy on one example.
func quadraticNaive(a, b, x []float64) float64 {
	var e float64
	for d := range x {
		e += 0.5*a[d]*x[d]*x[d] + b[d]*x[d]
	}
	return e
}

// logSumExpNaive is log Σ exp(v) in float64 with the max shift.
var logSumExpNaive = floats.LogSumExp // gonum's, independent of this package

func assertClose(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.10g, want %.10g (tolerance %g)", what, got, want, tol)
	}
}
