package nets

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	_ "github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// testBackend is the tests' backend (testutil.Backend): SimpleGo with
// sequential ops unless $EDLEBM_TEST_BACKEND names another.
var testBackend = testutil.Backend

// array is the tests' float64 tensor.
type array = testutil.Array

// run executes fn on the test backend and returns its outputs as flat float64 slices.
var run = testutil.Run

// runCtx is run for graph functions of a context, whose variables are
// initialised on first use.
func runCtx(t testing.TB, ctx *context.Context, fn func(ctx *context.Context, inputs []*Node) []*Node, inputs ...array) [][]float64 {
	t.Helper()
	exec, err := context.NewExec(testBackend(), ctx, fn)
	if err != nil {
		t.Fatal(err)
	}
	return testutil.ExecFlat(t, exec, inputs...)
}

// centralDiff returns the finite-difference gradient of f with respect to
// every entry of x (which it perturbs in place and restores).
func centralDiff(f func() float64, x []float64, h float64) []float64 {
	grad := make([]float64, len(x))
	for i := range x {
		orig := x[i]
		x[i] = orig + h
		up := f()
		x[i] = orig - h
		down := f()
		x[i] = orig
		grad[i] = (up - down) / (2 * h)
	}
	return grad
}

// dot is Σ a_i·b_i.
func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// variableData returns the current value of a float64 variable.
func variableData(t testing.TB, ctx *context.Context, scope, name string) []float64 {
	t.Helper()
	v := ctx.InspectVariable(scope, name)
	if v == nil {
		t.Fatalf("no variable %q in scope %q", name, scope)
	}
	value, err := v.Value()
	if err != nil {
		t.Fatal(err)
	}
	if value.DType() == dtypes.Float32 {
		var data []float64
		for _, v := range tensors.MustCopyFlatData[float32](value) {
			data = append(data, float64(v))
		}
		return data
	}
	data, err := tensors.CopyFlatData[float64](value)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// randomizeVariables replaces every float64 variable with N(0, scale²)
// values, so that tests do not depend on the initialisation (zero biases
// would hide a missing bias).
func randomizeVariables(t testing.TB, ctx *context.Context, rng *rand.Rand, scale float64) {
	t.Helper()
	for v := range ctx.IterVariables() {
		if v.Shape().DType != dtypes.Float64 {
			continue
		}
		if err := v.SetValue(testutil.RandomArray(rng, scale, v.Shape().Dimensions...).Tensor()); err != nil {
			t.Fatal(err)
		}
	}
}

// assertValidate checks a Validate error: none when wantErr is empty, else
// one containing wantErr.
func assertValidate(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("Validate() = %v, want nil", err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("Validate() = %v, want an error containing %q", err, wantErr)
	}
}
