package losses

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/internal/testutil"
)

// pairEnergy is a fixed energy on encoded mixed rows, the first numeric
// values numbers and the rest one-hot blocks:
//
//	E(x) = Σ_{d<numeric} (½ x_d² + quartic·x_d⁴) + Σ_i a_i x_i + Σ_{i<j} b_ij x_i x_j.
//
// The pair terms join every column to every other, so E does not split
// into a sum over columns and the brute-force sums cannot factorise; the
// ½x² + x⁴ terms keep the numeric integrals (of e^{−E} and of e^{−2E})
// finite.
type pairEnergy struct {
	numeric int
	quartic float64
	a       []float64   // [width]
	b       [][]float64 // [width][width], symmetric, zero diagonal
}

// newPairEnergy draws a and b as N(0, scale²) from rng.
func newPairEnergy(rng *rand.Rand, numeric, width int, scale, quartic float64) pairEnergy {
	e := pairEnergy{numeric: numeric, quartic: quartic, a: make([]float64, width), b: make([][]float64, width)}
	for i := range width {
		e.a[i] = scale * rng.NormFloat64()
		e.b[i] = make([]float64, width)
	}
	for i := range width {
		for j := i + 1; j < width; j++ {
			e.b[i][j] = scale * rng.NormFloat64()
			e.b[j][i] = e.b[i][j]
		}
	}
	return e
}

// host is E(x) for one row, by loops in float64.
func (e pairEnergy) host(x []float64) float64 {
	var s float64
	for d := range e.numeric {
		s += 0.5*x[d]*x[d] + e.quartic*x[d]*x[d]*x[d]*x[d]
	}
	for i := range x {
		s += e.a[i] * x[i]
		for j := i + 1; j < len(x); j++ {
			s += e.b[i][j] * x[i] * x[j]
		}
	}
	return s
}

// graphFn is the same energy as a GoMLX function of rows [N, width]:
// x·a + ½ xᵀBx (B's diagonal is zero, so ½ xᵀBx = Σ_{i<j} b_ij x_i x_j)
// plus the numeric values' ½x² + quartic·x⁴.
func (e pairEnergy) graphFn(x *Node) *Node {
	g := x.Graph()
	a := InsertAxes(ConvertDType(Const(g, e.a), x.DType()), 0)
	b := ConvertDType(Const(g, e.b), x.DType())
	energy := Add(ReduceSum(Mul(x, a), 1), MulScalar(ReduceSum(Mul(x, MatMul(x, b)), 1), 0.5))
	if e.numeric > 0 {
		v := SliceAxis(x, 1, AxisRange(0, e.numeric))
		sq := Square(v)
		energy = Add(energy, ReduceSum(Add(MulScalar(sq, 0.5), MulScalar(Square(sq), e.quartic)), 1))
	}
	return energy
}

// hostHeatKernels is each column's q_t = exp(−tL) by gonum's matrix
// exponential, L built edge by edge (laplacian in heat_test.go): a host
// kernel independent of HeatKernel's closed forms.
func hostHeatKernels(t *testing.T, cols []CategoricalColumn) []*mat.Dense {
	t.Helper()
	qs := make([]*mat.Dense, len(cols))
	for c, col := range cols {
		var rt mat.Dense
		rt.Scale(-col.T, laplacian(col.Graph, col.Categories))
		qs[c] = new(mat.Dense)
		qs[c].Exp(&rt)
		for a := range col.Categories {
			for b := range col.Categories {
				if d := math.Abs(qs[c].At(a, b) - qs[c].At(b, a)); d > 1e-12 {
					t.Fatalf("column %d: exp(−tL) is not symmetric: q(%d|%d) − q(%d|%d) = %g", c+1, b, a, a, b, d)
				}
			}
		}
	}
	return qs
}

// uniformFor is the uniform that the inverse-CDF draw from row from of q
// maps to category to: the middle of to's interval of the row's
// cumulative sum, computed from the host kernel. The interval must not be
// thin (q(to|from) ≥ 0.05), so rounding differences between the host
// kernel and the code's cannot move the draw.
func uniformFor(t *testing.T, q *mat.Dense, from, to int) float64 {
	t.Helper()
	var below float64
	for k := range to {
		below += q.At(from, k)
	}
	p := q.At(from, to)
	if p < 0.05 {
		t.Fatalf("q(%d|%d) = %.3g: choose a likelier x̄ for this test", to, from, p)
	}
	return below + p/2
}

// forEachState calls fn with every combination of categories of cols,
// K1·K2·…, as a slice of category indices (reused between calls).
func forEachState(cols []CategoricalColumn, fn func(cats []int)) {
	cats := make([]int, len(cols))
	for {
		fn(cats)
		c := len(cols) - 1
		for ; c >= 0; c-- {
			if cats[c]++; cats[c] < cols[c].Categories {
				break
			}
			cats[c] = 0
		}
		if c < 0 {
			return
		}
	}
}

// encodeRow writes the numeric values and the categories' one-hot blocks
// into row (of the config's width).
func encodeRow(row []float64, cfg MixedEDConfig, num []float64, cats []int) {
	clear(row)
	copy(row, num)
	at := cfg.Numeric
	for c, col := range cfg.Columns {
		row[at+cats[c]] = 1
		at += col.Categories
	}
}

// kernelProduct is Π_c q_c(to_c | from_c), the categorical kernel of a
// whole row (the columns are perturbed independently).
func kernelProduct(qs []*mat.Dense, from, to []int) float64 {
	p := 1.0
	for c, q := range qs {
		p *= q.At(from[c], to[c])
	}
	return p
}

// gaussianDensity is N(v; mean, variance).
func gaussianDensity(v, mean, variance float64) float64 {
	d := v - mean
	return math.Exp(-d*d/(2*variance)) / math.Sqrt(2*math.Pi*variance)
}

// trapezoid integrates f over [lo, hi] by the trapezoidal rule with n
// intervals. On these smooth integrands, negligible at both ends, it
// converges faster than any power of the step; quadrature checks that by
// halving the step.
func trapezoid(f func(float64) float64, lo, hi float64, n int) float64 {
	h := (hi - lo) / float64(n)
	s := (f(lo) + f(hi)) / 2
	for i := 1; i < n; i++ {
		s += f(lo + float64(i)*h)
	}
	return s * h
}

// quadrature is trapezoid with n and 2n intervals; it fails t unless the
// two agree to 1e-11 relative, and returns the finer one.
func quadrature(t *testing.T, f func(float64) float64, lo, hi float64, n int) float64 {
	t.Helper()
	coarse, fine := trapezoid(f, lo, hi, n), trapezoid(f, lo, hi, 2*n)
	if math.Abs(fine-coarse) > 1e-11*math.Abs(fine) {
		t.Fatalf("quadrature over [%g, %g] has not converged: %.15g with %d intervals, %.15g with %d", lo, hi, coarse, n, fine, 2*n)
	}
	return fine
}

// exactCase is one row x and its first perturbation x̄, both chosen:
// categories, and for the numeric values x and the standard normal ξ with
// x̄ = x + √t ξ.
type exactCase struct {
	name        string
	x, xBar     []int
	xNum, xiNum []float64
}

// TestMixedEnergyDiscrepancyConvergesToTheContrastivePotential checks the
// mixed loss's value against a brute-force sum over every category: with
// w = 0 and log M kept, the per-row loss log((1/M) Σ_j exp(E(x) − E(y_j))),
// y_j ~ q_t(·|x̄), converges as M grows to
//
//	E(x) − U_q(x̄),  U_q(x̄) = −log Σ_{x′} q_t(x̄|x′) exp(−E(x′)),
//
// the contrastive potential of energy discrepancy (Schröder et al.), the
// sum over every combination of categories (and, for numeric values, the
// integral with the Gaussian kernel N(x̄; x′, t)). The two agree because
// each kernel is symmetric: Σ_y q(y|x̄) e^{−E(y)} = Σ_{x′} q(x̄|x′) e^{−E(x′)}.
//
// The check is independent of the code under test: the kernel comes from
// gonum's matrix exponential of −tL (not HeatKernel), the energy is
// evaluated by a host loop, and x̄ is fixed by choosing the uniform u (and
// the numeric ξ) from the host kernel, while u′ and ξ′ are drawn at random
// with M = 20000. Where TestMixedEnergyDiscrepancyMatchesANaiveLoop
// repeats the code's reading of the formulas with HeatKernel, this checks
// the quantity the loss is meant to estimate, so it catches drawing y_j
// from the wrong row of the kernel, a kernel at the wrong time, or numeric
// negatives around the wrong centre or with the wrong variance.
//
// Tolerance: five Monte Carlo standard errors by the delta method. The
// loss is log Z̄, Z̄ the mean of M independent Z_j = exp(E(x) − E(y_j))
// with mean μ = exp(E(x) − U_q(x̄)) and second moment
// s₂ = Σ_y q(y|x̄) exp(2E(x) − 2E(y)) (also brute force), so its standard
// error is √((s₂ − μ²)/M)/μ; log Z̄'s bias, about −SE²/2, is added to the
// tolerance.
func TestMixedEnergyDiscrepancyConvergesToTheContrastivePotential(t *testing.T) {
	const m = 20000
	for _, tc := range []struct {
		name  string
		cfg   MixedEDConfig
		cases []exactCase
	}{
		{
			// 3·4·5 = 60 states, a different time per column.
			name: "categorical",
			cfg: MixedEDConfig{M: m, W: 0, Columns: []CategoricalColumn{
				{Categories: 3, Graph: Uniform, T: 0.5},
				{Categories: 4, Graph: Ordinal, T: 0.35},
				{Categories: 5, Graph: Cyclical, T: 0.6}}},
			cases: []exactCase{
				{name: "x̄ = x", x: []int{0, 1, 2}, xBar: []int{0, 1, 2}},
				{name: "every column moves", x: []int{0, 1, 2}, xBar: []int{2, 2, 3}},
				{name: "ring wraps", x: []int{1, 3, 0}, xBar: []int{0, 3, 4}},
				{name: "ordinal end", x: []int{2, 0, 4}, xBar: []int{2, 1, 4}},
			},
		},
		{
			// One numeric value and 4·3 = 12 states.
			name: "mixed",
			cfg: MixedEDConfig{Numeric: 1, T: 0.4, M: m, W: 0, Columns: []CategoricalColumn{
				{Categories: 4, Graph: Cyclical, T: 0.3},
				{Categories: 3, Graph: Ordinal, T: 0.8}}},
			cases: []exactCase{
				{name: "categories stay", x: []int{1, 2}, xBar: []int{1, 2}, xNum: []float64{0.5}, xiNum: []float64{-1.3}},
				{name: "categories move", x: []int{0, 1}, xBar: []int{3, 0}, xNum: []float64{-0.7}, xiNum: []float64{1.6}},
				{name: "far numeric", x: []int{2, 0}, xBar: []int{2, 1}, xNum: []float64{1.4}, xiNum: []float64{0.4}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, c := tc.cfg, len(tc.cfg.Columns)
			width := cfg.Width()
			rng := rand.New(rand.NewPCG(56, uint64(width)))
			energy := newPairEnergy(rng, cfg.Numeric, width, 0.6, 0.05)
			qs := hostHeatKernels(t, cfg.Columns)

			exec, err := NewExec(testBackend(), func(in []*Node) *Node {
				if cfg.Numeric == 0 {
					return MixedEnergyDiscrepancyWithNoise(energy.graphFn, in[0], nil, nil, in[1], in[2], cfg)
				}
				return MixedEnergyDiscrepancyWithNoise(energy.graphFn, in[0], in[3], in[4], in[1], in[2], cfg)
			})
			if err != nil {
				t.Fatal(err)
			}

			for _, ec := range tc.cases {
				t.Run(ec.name, func(t *testing.T) {
					// The noise: u picks x̄'s categories, ξ its numeric values;
					// u′ and ξ′ are random.
					x := testutil.Array{Dims: []int{1, width}, Data: make([]float64, width)}
					encodeRow(x.Data, cfg, ec.xNum, ec.x)
					u := testutil.Array{Dims: []int{1, c}, Data: make([]float64, c)}
					for col := range c {
						u.Data[col] = uniformFor(t, qs[col], ec.x[col], ec.xBar[col])
					}
					uPrime := testutil.Array{Dims: []int{1, m, c}, Data: make([]float64, m*c)}
					for i := range uPrime.Data {
						uPrime.Data[i] = rng.Float64()
					}
					inputs := []testutil.Array{x, u, uPrime}
					xBarNum := make([]float64, cfg.Numeric)
					if cfg.Numeric > 0 {
						inputs = append(inputs, testutil.Array{Dims: []int{1, cfg.Numeric}, Data: ec.xiNum},
							testutil.RandomArray(rng, 1, 1, m, cfg.Numeric))
						for d := range cfg.Numeric {
							xBarNum[d] = ec.xNum[d] + math.Sqrt(cfg.T)*ec.xiNum[d]
						}
					}
					got := testutil.ExecFlat(t, exec, inputs...)[0][0]

					// Brute force. U_q(x̄) sums q(x̄|x′) e^{−E(x′)} over every
					// x′ (integrating its numeric value); s₂ sums
					// q(y|x̄) e^{2E(x) − 2E(y)} over every y.
					eX := energy.host(x.Data)
					row := make([]float64, width)
					var partition, s2 float64
					forEachState(cfg.Columns, func(cats []int) {
						toX := kernelProduct(qs, cats, ec.xBar)   // q(x̄|x′)
						fromX := kernelProduct(qs, ec.xBar, cats) // q(y|x̄)
						if cfg.Numeric == 0 {
							encodeRow(row, cfg, nil, cats)
							e := energy.host(row)
							partition += toX * math.Exp(-e)
							s2 += fromX * math.Exp(2*(eX-e))
							return
						}
						// One numeric value: ±12 standard deviations of the
						// kernel around x̄ (E is bounded below, so the
						// integrands are at most a constant times the kernel).
						sd := math.Sqrt(cfg.T)
						lo, hi := xBarNum[0]-12*sd, xBarNum[0]+12*sd
						energyAt := func(v float64) float64 {
							encodeRow(row, cfg, []float64{v}, cats)
							return energy.host(row)
						}
						partition += toX * quadrature(t, func(v float64) float64 {
							return gaussianDensity(xBarNum[0], v, cfg.T) * math.Exp(-energyAt(v))
						}, lo, hi, 600)
						s2 += fromX * quadrature(t, func(v float64) float64 {
							return gaussianDensity(v, xBarNum[0], cfg.T) * math.Exp(2*(eX-energyAt(v)))
						}, lo, hi, 600)
					})
					potential := -math.Log(partition) // U_q(x̄)
					want := eX - potential
					mu := math.Exp(want)
					se := math.Sqrt((s2-mu*mu)/m) / mu
					tol := 5*se + se*se/2
					diff := got - want
					t.Logf("loss %.6f, E(x) − U_q(x̄) = %.6f: difference %+.5f, standard error %.5f (%+.2f SE), tolerance %.5f",
						got, want, diff, se, diff/se, tol)
					if math.IsNaN(got) || math.Abs(diff) > tol {
						t.Errorf("x %v → x̄ %v%s: loss %.6f, brute-force E(x) − U_q(x̄) = %.6f, difference %.5f > tolerance %.5f (5 standard errors)",
							ec.x, ec.xBar, numericNote(ec, xBarNum), got, want, diff, tol)
					}
				})
			}
		})
	}
}

// numericNote describes a case's numeric values for a failure message.
func numericNote(ec exactCase, xBarNum []float64) string {
	if len(ec.xNum) == 0 {
		return ""
	}
	return fmt.Sprintf(" (numeric %v → %v)", ec.xNum, xBarNum)
}
