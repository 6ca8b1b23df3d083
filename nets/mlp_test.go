package nets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// scalarAct is an activation with its first and second derivatives.
type scalarAct func(a float64) (f, d1, d2 float64)

func sigmoid(a float64) float64 { return 1 / (1 + math.Exp(-a)) }

// naiveActs are the activations written independently of GoMLX.
var naiveActs = map[string]func(slope float64) scalarAct{
	ActSoftplus: func(float64) scalarAct {
		return func(a float64) (float64, float64, float64) {
			s := sigmoid(a)
			return math.Max(a, 0) + math.Log1p(math.Exp(-math.Abs(a))), s, s * (1 - s)
		}
	},
	ActLeakyReLU: func(slope float64) scalarAct {
		return func(a float64) (float64, float64, float64) {
			if a >= 0 {
				return a, 1, 0
			}
			return slope * a, slope, 0
		}
	},
	ActSwish: func(float64) scalarAct {
		return func(a float64) (float64, float64, float64) {
			s := sigmoid(a)
			return a * s, s + a*s*(1-s), s * (1 - s) * (2 + a*(1-2*s))
		}
	},
	ActTanh: func(float64) scalarAct {
		return func(a float64) (float64, float64, float64) {
			th := math.Tanh(a)
			return th, 1 - th*th, -2 * th * (1 - th*th)
		}
	},
}

// naiveMLP is the energy MLP in plain loops; weights[l] is [in, out] row-major.
type naiveMLP struct {
	weights, biases [][]float64
	widths          []int // input, hidden..., 1
	act             scalarAct
}

// readNaiveMLP reads back the variables EnergyMLP created in ctx.
func readNaiveMLP(t *testing.T, ctx *context.Context, inDim int, cfg MLPConfig) naiveMLP {
	m := naiveMLP{widths: append(append([]int{inDim}, cfg.Hidden...), 1), act: naiveActs[cfg.Activation](cfg.LeakySlope)}
	for l := range len(cfg.Hidden) + 1 {
		scope := ctx.In(fmt.Sprintf("layer_%d", l)).Scope()
		m.weights = append(m.weights, variableData(t, ctx, scope, "weights"))
		m.biases = append(m.biases, variableData(t, ctx, scope, "biases"))
	}
	return m
}

// forward returns the energy of x and, by forward-mode differentiation
// along every input axis d, Σ_d ∂²E/∂x_d² (the Laplacian).
func (m naiveMLP) forward(x []float64) (energy, laplacian float64) {
	dim := len(x)
	h := x
	// dh[d][j] = ∂h_j/∂x_d, d2h[d][j] = ∂²h_j/∂x_d².
	dh, d2h := make([][]float64, dim), make([][]float64, dim)
	for d := range dim {
		dh[d], d2h[d] = make([]float64, dim), make([]float64, dim)
		dh[d][d] = 1
	}
	last := len(m.weights) - 1
	for l, w := range m.weights {
		in, out := m.widths[l], m.widths[l+1]
		a := append([]float64(nil), m.biases[l]...)
		da, d2a := make([][]float64, dim), make([][]float64, dim)
		for d := range dim {
			da[d], d2a[d] = make([]float64, out), make([]float64, out)
		}
		for j := range out {
			for i := range in {
				a[j] += h[i] * w[i*out+j]
				for d := range dim {
					da[d][j] += dh[d][i] * w[i*out+j]
					d2a[d][j] += d2h[d][i] * w[i*out+j]
				}
			}
		}
		if l == last {
			for d := range dim {
				laplacian += d2a[d][0]
			}
			return a[0], laplacian
		}
		h = make([]float64, out)
		for j := range out {
			f, d1, d2 := m.act(a[j])
			h[j] = f
			for d := range dim {
				da[d][j], d2a[d][j] = d1*da[d][j], d2*da[d][j]*da[d][j]+d1*d2a[d][j]
			}
		}
		dh, d2h = da, d2a
	}
	panic("unreachable")
}

// rows splits flat [n, dim] data into examples.
func rows(a array) [][]float64 {
	n, dim := a.Dims[0], a.Dims[1]
	out := make([][]float64, n)
	for i := range out {
		out[i] = a.Data[i*dim : (i+1)*dim]
	}
	return out
}

// TestSoftplusAtExtremes checks softplus and its first two derivatives
// against log1p(eˣ), σ(x) and σ(x)σ(−x) = σ(x)(1 − σ(x)) from far below zero (where
// the values underflow slowly) to far above (where eˣ would overflow), in
// float64 and float32: the value within its documented absolute error (an
// ulp of 1 in Log, plus the rounding of the sum), the derivatives within a
// few ulps relative.
func TestSoftplusAtExtremes(t *testing.T) {
	xs := []float64{-100, -60, -20, -3, -1e-3, 0, 1e-3, 0.7, 5, 20, 60, 100}
	for _, tc := range []struct {
		dtype          dtypes.DType
		valueAbs, dRel float64
	}{
		{dtypes.Float64, 3e-16, 1e-14},
		{dtypes.Float32, 2e-7, 2e-6},
	} {
		got := run(t, func(in []*Node) []*Node {
			x := ConvertDType(in[0], tc.dtype)
			y := softplus(x)
			d1 := Gradient(ReduceAllSum(y), x)[0]
			d2 := Gradient(ReduceAllSum(d1), x)[0]
			return []*Node{ConvertDType(y, dtypes.Float64), ConvertDType(d1, dtypes.Float64), ConvertDType(d2, dtypes.Float64)}
		}, array{Data: xs, Dims: []int{len(xs)}})
		for i, x := range xs {
			s := sigmoid(x)
			value := math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
			if d := math.Abs(got[0][i] - value); d > tc.valueAbs*math.Max(1, value) {
				t.Errorf("%s softplus(%g) = %.17g, want %.17g (off by %.2g)", tc.dtype, x, got[0][i], value, d)
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"σ", got[1][i], s}, {"σ(1 − σ)", got[2][i], s * sigmoid(-x)}} {
				// float32's σ underflows below e^−87: compare what it can hold.
				if tc.dtype == dtypes.Float32 && c.want < 1e-30 {
					continue
				}
				if math.Abs(c.got-c.want) > tc.dRel*c.want {
					t.Errorf("%s softplus′ at %g: %s = %.17g, want %.17g", tc.dtype, x, c.name, c.got, c.want)
				}
			}
		}
	}
}

var mlpCases = []MLPConfig{
	{Hidden: []int{5, 4}, Activation: ActSoftplus},
	{Hidden: []int{5, 4}, Activation: ActLeakyReLU, LeakySlope: 0.1},
	{Hidden: []int{6}, Activation: ActSwish},
	{Hidden: []int{3, 4, 5}, Activation: ActTanh},
}

// TestEnergyMLPValueAndGradient checks E(x) and ∇ₓE against the naive loops
// and their central differences, with random (nonzero) biases.
func TestEnergyMLPValueAndGradient(t *testing.T) {
	for _, cfg := range mlpCases {
		t.Run(cfg.Activation, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(len(cfg.Hidden))))
			x := testutil.RandomArray(rng, 1.5, 4, 3)
			ctx := context.New()
			build := func(ctx *context.Context, in []*Node) []*Node {
				e := EnergyMLP(ctx, in[0], cfg)
				return []*Node{e, Gradient(ReduceAllSum(e), in[0])[0]}
			}
			runCtx(t, ctx, build, x) // creates the variables
			randomizeVariables(t, ctx, rng, 0.7)
			got := runCtx(t, ctx.Reuse(), build, x)
			m := readNaiveMLP(t, ctx, 3, cfg)

			for i, xi := range rows(x) {
				e, _ := m.forward(xi)
				want := centralDiff(func() float64 { e, _ := m.forward(xi); return e }, xi, 1e-5)
				testutil.AssertAllClose(t, fmt.Sprintf("E(x_%d)", i), got[0][i:i+1], []float64{e}, 1e-12)
				testutil.AssertAllClose(t, fmt.Sprintf("∇E(x_%d)", i), got[1][i*3:(i+1)*3], want, 1e-7)
			}
		})
	}
}

// laplacianGraph returns ΔE per example via one extra backward pass per
// input dimension, masking with one-hot rows (Slice's gradient needs Pad,
// which SimpleGo lacks).
func laplacianGraph(energy *Node, x *Node) *Node {
	dim := x.Shape().Dimensions[1]
	grad := Gradient(ReduceAllSum(energy), x)[0]
	var lap *Node
	for d := range dim {
		oneHot := OneHot(Const(x.Graph(), []int32{int32(d)}), dim, x.DType())
		row := ReduceSum(Mul(Gradient(ReduceAllSum(Mul(grad, oneHot)), x)[0], oneHot), 1)
		if lap == nil {
			lap = row
		} else {
			lap = Add(lap, row)
		}
	}
	return lap
}

// TestEnergyMLPLaplacian checks the score-matching derivatives: ΔE against
// second central differences of the naive energy, and ∂(Σ ΔE)/∂θ (third
// order) against central differences, in every weight and bias θ, of the
// naive forward-mode Laplacian.
func TestEnergyMLPLaplacian(t *testing.T) {
	for _, cfg := range []MLPConfig{mlpCases[0], mlpCases[2], mlpCases[3]} {
		t.Run(cfg.Activation, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, uint64(len(cfg.Hidden))))
			x := testutil.RandomArray(rng, 1.5, 3, 2)
			ctx := context.New()
			var scopes []string
			build := func(ctx *context.Context, in []*Node) []*Node {
				lap := laplacianGraph(EnergyMLP(ctx, in[0], cfg), in[0])
				outs := []*Node{lap}
				scopes = scopes[:0]
				var params []*Node
				for v := range ctx.IterVariables() {
					if strings.HasPrefix(v.Scope(), "/layer_") {
						scopes = append(scopes, v.ScopeAndName())
						params = append(params, v.ValueGraph(in[0].Graph()))
					}
				}
				return append(outs, Gradient(ReduceAllSum(lap), params...)...)
			}
			runCtx(t, ctx, build, x)
			randomizeVariables(t, ctx, rng, 0.7)
			got := runCtx(t, ctx.Reuse(), build, x)
			m := readNaiveMLP(t, ctx, 2, cfg)

			const h = 1e-3
			for i, xi := range rows(x) {
				e0, _ := m.forward(xi)
				var want float64
				for d := range xi {
					orig := xi[d]
					xi[d] = orig + h
					up, _ := m.forward(xi)
					xi[d] = orig - h
					down, _ := m.forward(xi)
					xi[d] = orig
					want += (up - 2*e0 + down) / (h * h)
				}
				testutil.AssertAllClose(t, fmt.Sprintf("ΔE(x_%d)", i), got[0][i:i+1], []float64{want}, 1e-5)
			}

			sumLaplacian := func() float64 {
				var s float64
				for _, xi := range rows(x) {
					_, lap := m.forward(xi)
					s += lap
				}
				return s
			}
			params := map[string][]float64{}
			for l := range m.weights {
				params[fmt.Sprintf("/layer_%d/weights", l)] = m.weights[l]
				params[fmt.Sprintf("/layer_%d/biases", l)] = m.biases[l]
			}
			for i, name := range scopes {
				testutil.AssertAllClose(t, "∂ΣΔE/∂"+name, got[1+i], centralDiff(sumLaplacian, params[name], 1e-5), 1e-6)
			}
		})
	}
}

func TestMLPConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     MLPConfig
		wantErr string // "" for a valid config
	}{
		{"lebm prior", LEBMPriorMLP(), ""},
		{"toy", ToyEnergyMLP(), ""},
		{"no hidden layers", MLPConfig{Activation: ActTanh}, ""},
		{"width 1", MLPConfig{Hidden: []int{1}, Activation: ActSwish}, ""},
		{"ReLU (slope 0)", MLPConfig{Hidden: []int{4}, Activation: ActLeakyReLU}, ""},
		{"zero width", MLPConfig{Hidden: []int{4, 0}, Activation: ActSoftplus}, "hidden layer 1 width = 0"},
		{"unknown activation", MLPConfig{Hidden: []int{4}, Activation: "relu6"}, `activation "relu6"`},
		{"slope too big", MLPConfig{Hidden: []int{4}, Activation: ActLeakyReLU, LeakySlope: 1}, "slope = 1"},
		{"negative slope", MLPConfig{Hidden: []int{4}, Activation: ActLeakyReLU, LeakySlope: -0.1}, "slope = -0.1"},
		{"Xavier init", MLPConfig{Hidden: []int{4}, Activation: ActTanh, Init: InitXavier}, ""},
		{"unknown init", MLPConfig{Hidden: []int{4}, Activation: ActTanh, Init: "kaiming"}, `init "kaiming"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertValidate(t, tc.cfg.Validate(), tc.wantErr)
		})
	}
}

// TestMLPPresets checks the presets' layer widths and activations, as
// stored in the variables' shapes, against the paper: the LEBM prior is
// the table of LEBM architectures in appendix "Experimental Details of
// LEBMs" (Linear 200, 200, 1; LeakyReLU 0.1 in its "Model Architectures"
// paragraph), the toy energy 2→128⁴→1 with softplus is the density
// experiments' network (appendix "Additional Density Estimation Results").
func TestMLPPresets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    MLPConfig
		in     int
		widths []int
		act    string
		slope  float64
	}{
		{"lebm prior", LEBMPriorMLP(), 100, []int{100, 200, 200, 1}, ActLeakyReLU, 0.1},
		{"toy", ToyEnergyMLP(), 2, []int{2, 128, 128, 128, 128, 1}, ActSoftplus, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Activation != tc.act || tc.cfg.LeakySlope != tc.slope {
				t.Errorf("activation %q slope %v, want %q slope %v", tc.cfg.Activation, tc.cfg.LeakySlope, tc.act, tc.slope)
			}
			ctx := context.New()
			rng := rand.New(rand.NewPCG(5, 5))
			got := runCtx(t, ctx, func(ctx *context.Context, in []*Node) []*Node {
				return []*Node{EnergyMLP(ctx, in[0], tc.cfg)}
			}, testutil.RandomArray(rng, 1, 3, tc.in))
			if len(got[0]) != 3 {
				t.Errorf("got %d energies for 3 examples", len(got[0]))
			}
			for l := range len(tc.widths) - 1 {
				scope := ctx.In(fmt.Sprintf("layer_%d", l)).Scope()
				w := ctx.InspectVariable(scope, "weights")
				if w == nil || w.Shape().Dimensions[0] != tc.widths[l] || w.Shape().Dimensions[1] != tc.widths[l+1] {
					t.Errorf("layer %d weights %v, want [%d %d]", l, w.Shape(), tc.widths[l], tc.widths[l+1])
				}
			}
		})
	}
}

// moments returns the mean, standard deviation and kurtosis (E[(v−μ)⁴]/σ⁴)
// of v.
func moments(v []float64) (mean, std, kurtosis float64) {
	n := float64(len(v))
	for _, x := range v {
		mean += x / n
	}
	var m2, m4 float64
	for _, x := range v {
		d := (x - mean) * (x - mean)
		m2, m4 = m2+d/n, m4+d*d/n
	}
	return mean, math.Sqrt(m2), m4 / (m2 * m2)
}

// The energy MLP's dense layers start as MLPConfig.Init says, checked
// against the moments of the intended distributions: PyTorch's nn.Linear
// default (the default, also for ""), weights and biases uniform in
// ±1/√fan_in — inside the bound, mean 0, std bound/√3, kurtosis 1.8 — and
// Xavier-normal weights — std √(2/(fan_in+fan_out)), kurtosis 3 — with
// zero biases. Tolerances are 5 standard errors.
func TestEnergyMLPInit(t *testing.T) {
	in, hidden := 64, []int{256, 128}
	rng := rand.New(rand.NewPCG(3, 4))
	x := testutil.RandomArray(rng, 1, 2, in)
	for _, init := range []string{"", InitPyTorch, InitXavier} {
		t.Run(fmt.Sprintf("init %q", init), func(t *testing.T) {
			cfg := MLPConfig{Hidden: hidden, Activation: ActSoftplus, Init: init}
			ctx := context.New()
			if err := ctx.SetRNGStateFromSeed(11); err != nil {
				t.Fatal(err)
			}
			runCtx(t, ctx, func(ctx *context.Context, in []*Node) []*Node {
				return []*Node{EnergyMLP(ctx, in[0], cfg)}
			}, x)
			fanIn := in
			for i, fanOut := range append(hidden, 1) {
				scope := ctx.In(fmt.Sprintf("layer_%d", i)).Scope()
				w, b := variableData(t, ctx, scope, "weights"), variableData(t, ctx, scope, "biases")
				n := float64(len(w))
				mean, std, kurt := moments(w)
				wantStd, wantKurt, bound := math.Sqrt(2/float64(fanIn+fanOut)), 3.0, math.Inf(1)
				if init != InitXavier {
					bound = 1 / math.Sqrt(float64(fanIn))
					wantStd, wantKurt = bound/math.Sqrt(3), 1.8
				}
				if math.Abs(mean) > 5*wantStd/math.Sqrt(n) {
					t.Errorf("%s weights mean %.3g, want 0 ± %.2g", scope, mean, 5*wantStd/math.Sqrt(n))
				}
				if math.Abs(std/wantStd-1) > 5/math.Sqrt(2*n) {
					t.Errorf("%s weights std %.5g, want %.5g", scope, std, wantStd)
				}
				// The kurtosis of a sample of n has standard error below
				// √(24/n) for both distributions; only the layers with
				// enough weights tell them apart.
				if tol := 5 * math.Sqrt(24/n); tol < 0.6 && math.Abs(kurt-wantKurt) > tol {
					t.Errorf("%s weights kurtosis %.3g, want %.3g ± %.2g", scope, kurt, wantKurt, tol)
				}
				for j, v := range w {
					if math.Abs(v) > bound {
						t.Fatalf("%s weight %d = %v outside ±%v", scope, j, v, bound)
					}
				}
				for j, v := range b {
					if (init == InitXavier && v != 0) || math.Abs(v) > bound {
						t.Fatalf("%s bias %d = %v, want 0 (Xavier) or within ±%v (PyTorch)", scope, j, v, bound)
					}
				}
				if init != InitXavier && len(b) >= 100 {
					bMean, bStd, _ := moments(b)
					nb := float64(len(b))
					if math.Abs(bMean) > 5*wantStd/math.Sqrt(nb) || math.Abs(bStd-wantStd) > 5*wantStd/math.Sqrt(nb) {
						t.Errorf("%s biases mean %.3g, std %.3g; want 0 and %.3g", scope, bMean, bStd, wantStd)
					}
				}
				fanIn = fanOut
			}
		})
	}
}
