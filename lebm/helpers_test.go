package lebm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	_ "github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/metrics"

	"github.com/edlebm/edlebm/nets"

	"github.com/edlebm/edlebm/internal/scopes"
)

// testBackend is the tests' backend (testutil.Backend): SimpleGo unless
// $EDLEBM_TEST_BACKEND names another.
var testBackend = testutil.Backend

const (
	testNz    = 4
	testBatch = 4
	testSize  = 8 // images are testSize × testSize × 1
	// testChainBlock replaces ChainBlock in the tests' models (newModel):
	// XLA compiles the sampling blocks in a fraction of the time.
	testChainBlock = 4
)

// tinyConfig is a small float64 model: nz 4, a 2-layer generator to 8×8×1
// (4×4×8, then 8×8×1), a 4→16→16→1 prior and short chains.
func tinyConfig(t testing.TB) Config {
	t.Helper()
	cfg, err := DefaultConfig("svhn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Generator = nets.GeneratorConfig{Nz: testNz, Layers: []nets.ConvTLayer{
		{Out: 8, Kernel: 4, Stride: 1, Padding: 0}, {Out: 1, Kernel: 4, Stride: 2, Padding: 1}}}
	cfg.Prior = nets.MLPConfig{Hidden: []int{16, 16}, Activation: nets.ActLeakyReLU, LeakySlope: 0.1}
	cfg.PosteriorLangevin.Steps = 5
	cfg.TestPosteriorLangevin.Steps = 5
	cfg.PriorLangevin.Steps = 5
	cfg.GenerationLangevin.Steps = 5
	cfg.ED.M = 4
	cfg.DType = "float64"
	cfg.Seed = 7
	return cfg
}

// oneLayerConfig is tinyConfig with a one-layer generator (an 8×8 kernel on
// the 1×1 latent image), whose forward pass naiveDecode computes by hand.
func oneLayerConfig(t testing.TB) Config {
	cfg := tinyConfig(t)
	cfg.Generator = nets.GeneratorConfig{Nz: testNz, Layers: []nets.ConvTLayer{{Out: 1, Kernel: testSize, Stride: 1, Padding: 0}}}
	return cfg
}

// runGraph builds fn (a context graph function with *Node inputs and
// outputs, see context.NewExecAny) on ctx, runs it on the float64 inputs and
// returns its outputs as float64 slices.
func runGraph(t testing.TB, ctx *context.Context, fn any, inputs ...*tensors.Tensor) [][]float64 {
	t.Helper()
	exec, err := context.NewExecAny(testBackend(), ctx, fn)
	if err != nil {
		t.Fatal(err)
	}
	return testutil.ExecTensors(t, exec, inputs...)
}

// isModelState tells whether v is the model's state, not GoMLX's training
// bookkeeping: the moving averages its trainer keeps for display under
// "/metrics" (in scopes named per process, left out of checkpoints) and
// the loop's target step under "/trainer".
func isModelState(v *context.Variable) bool {
	return !scopes.Within(v.Scope(), "/"+metrics.Scope) && !scopes.Within(v.Scope(), train.TrainerAbsoluteScope)
}

// variableValues returns the flat float64 values of the variables of ctx
// under scope (e.g. "/generator") that are model state (isModelState), by
// scope-qualified name.
func variableValues(t testing.TB, ctx *context.Context, scope string) map[string][]float64 {
	t.Helper()
	values := map[string][]float64{}
	for v := range ctx.IterVariables() {
		if !scopes.Within(v.Scope(), scope) || !isModelState(v) {
			continue
		}
		value, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		values[v.ScopeAndName()] = flatFloat64(t, value)
	}
	if len(values) == 0 {
		t.Fatalf("no variables under scope %q", scope)
	}
	return values
}

// flatFloat64 returns the values of a float or integer tensor as float64.
func flatFloat64(t testing.TB, x *tensors.Tensor) []float64 {
	t.Helper()
	switch x.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](x)
	case dtypes.Float32:
		return convertAll(tensors.MustCopyFlatData[float32](x))
	case dtypes.Int64:
		return convertAll(tensors.MustCopyFlatData[int64](x))
	case dtypes.Uint64:
		return convertAll(tensors.MustCopyFlatData[uint64](x))
	}
	t.Fatalf("unexpected dtype %s", x.DType())
	return nil
}

func convertAll[T float32 | int64 | uint64](values []T) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = float64(v)
	}
	return out
}

// variable returns the flat values of one variable.
func variable(t testing.TB, ctx *context.Context, scope, name string) []float64 {
	t.Helper()
	v := ctx.GetVariableByScopeAndName(scope, name)
	if v == nil {
		t.Fatalf("no variable %s/%s", scope, name)
	}
	return tensors.MustCopyFlatData[float64](v.MustValue())
}

// setVariable overwrites a float64 variable's values.
func setVariable(t testing.TB, ctx *context.Context, scope, name string, values []float64) {
	t.Helper()
	v := ctx.GetVariableByScopeAndName(scope, name)
	if v == nil {
		t.Fatalf("no variable %s/%s", scope, name)
	}
	if err := v.SetValue(tensors.FromFlatDataAndDimensions(values, v.Shape().Dimensions...)); err != nil {
		t.Fatal(err)
	}
}

// naiveModel is an independent float64 forward pass of a oneLayerConfig
// model, from its variables.
type naiveModel struct {
	cfg      Config
	genW     []float64 // [8, 8, nz, 1]
	genB     float64
	priorW   [][]float64 // per layer, [in, out] row-major
	priorB   [][]float64
	priorIn  []int
	priorOut []int
}

// readNaiveModel reads the variables of a oneLayerConfig model from ctx.
func readNaiveModel(t testing.TB, ctx *context.Context, cfg Config) naiveModel {
	t.Helper()
	m := naiveModel{cfg: cfg,
		genW: variable(t, ctx, "/generator/layer_0", "weights"),
		genB: variable(t, ctx, "/generator/layer_0", "biases")[0],
	}
	in := cfg.Generator.Nz
	widths := append(append([]int{}, cfg.Prior.Hidden...), 1)
	for i, out := range widths {
		scope := fmt.Sprintf("/prior/layer_%d", i)
		m.priorW = append(m.priorW, variable(t, ctx, scope, "weights"))
		m.priorB = append(m.priorB, variable(t, ctx, scope, "biases"))
		m.priorIn, m.priorOut = append(m.priorIn, in), append(m.priorOut, out)
		in = out
	}
	return m
}

// decode is G(z) for one latent: pixel (y, x) = tanh(b + Σ_c z_c W[y, x, c]).
func (m naiveModel) decode(z []float64) []float64 {
	nz := len(z)
	img := make([]float64, testSize*testSize)
	for p := range img {
		s := m.genB
		for c := range nz {
			s += z[c] * m.genW[p*nz+c]
		}
		img[p] = math.Tanh(s)
	}
	return img
}

// f is the prior MLP's energy of one latent.
func (m naiveModel) f(z []float64) float64 {
	h := z
	for l := range m.priorW {
		out := make([]float64, m.priorOut[l])
		for o := range out {
			s := m.priorB[l][o]
			for i, hi := range h {
				s += hi * m.priorW[l][i*m.priorOut[l]+o]
			}
			if l < len(m.priorW)-1 {
				s = activation(m.cfg.Prior, s)
			}
			out[o] = s
		}
		h = out
	}
	return h[0]
}

func activation(cfg nets.MLPConfig, s float64) float64 {
	switch cfg.Activation {
	case nets.ActLeakyReLU:
		if s < 0 {
			return cfg.LeakySlope * s
		}
		return s
	case nets.ActSoftplus:
		return math.Log1p(math.Exp(s))
	}
	panic("test: unsupported activation " + cfg.Activation)
}

// u is the full prior energy U(z) = f(z) + ‖z‖²/(2σ0²).
func (m naiveModel) u(z []float64) float64 {
	return m.f(z) + dot(z, z)/(2*m.cfg.PriorSigma*m.cfg.PriorSigma)
}

// likelihood is ‖x − G(z)‖²/(2σ²) for one example.
func (m naiveModel) likelihood(x, z []float64) float64 {
	var sse float64
	for p, g := range m.decode(z) {
		sse += (x[p] - g) * (x[p] - g)
	}
	return sse / (2 * m.cfg.Sigma * m.cfg.Sigma)
}

// posterior is U_post(z) for one example.
func (m naiveModel) posterior(x, z []float64) float64 { return m.likelihood(x, z) + m.u(z) }

// row returns example i of a flat [B, n] array.
func row(a []float64, i, n int) []float64 { return a[i*n : (i+1)*n] }

// gradient returns the central-difference gradient of f at z.
func gradient(f func([]float64) float64, z []float64, h float64) []float64 {
	z = append([]float64{}, z...)
	grad := make([]float64, len(z))
	for i := range z {
		orig := z[i]
		z[i] = orig + h
		up := f(z)
		z[i] = orig - h
		down := f(z)
		z[i] = orig
		grad[i] = (up - down) / (2 * h)
	}
	return grad
}

// secondDerivative returns the central second difference of f at z along v.
func secondDerivative(f func([]float64) float64, z, v []float64, h float64) float64 {
	up, down := make([]float64, len(z)), make([]float64, len(z))
	for i := range z {
		up[i], down[i] = z[i]+h*v[i], z[i]-h*v[i]
	}
	return (f(up) - 2*f(z) + f(down)) / (h * h)
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// randomValues draws n N(0, scale²) values.
func randomValues(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

// structuredImages returns testBatch distinct 8×8 patterns in [−0.8, 0.8]:
// horizontal stripes, vertical stripes, a checkerboard and a centred square.
func structuredImages() []float64 {
	patterns := []func(y, x int) bool{
		func(y, x int) bool { return y%2 == 0 },
		func(y, x int) bool { return x%2 == 0 },
		func(y, x int) bool { return (x+y)%2 == 0 },
		func(y, x int) bool { return x >= 2 && x < 6 && y >= 2 && y < 6 },
	}
	data := make([]float64, 0, testBatch*testSize*testSize)
	for _, on := range patterns {
		for y := range testSize {
			for x := range testSize {
				v := -0.8
				if on(y, x) {
					v = 0.8
				}
				data = append(data, v)
			}
		}
	}
	return data
}

// imagesTensor makes a [B, 8, 8, 1] tensor of the config's dtype.
func imagesTensor(cfg Config, data []float64) *tensors.Tensor {
	n := len(data) / (testSize * testSize)
	if cfg.DType == "float32" {
		f32 := make([]float32, len(data))
		for i, v := range data {
			f32[i] = float32(v)
		}
		return tensors.FromFlatDataAndDimensions(f32, n, testSize, testSize, 1)
	}
	return tensors.FromFlatDataAndDimensions(append([]float64{}, data...), n, testSize, testSize, 1)
}
