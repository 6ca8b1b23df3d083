package losses

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// laplacian is the graph Laplacian of g over k categories with unit edge
// weights, built edge by edge.
func laplacian(g CategoryGraph, k int) *mat.Dense {
	l := mat.NewDense(k, k, nil)
	edge := func(a, b int) {
		l.Set(a, a, l.At(a, a)+1)
		l.Set(b, b, l.At(b, b)+1)
		l.Set(a, b, l.At(a, b)-1)
		l.Set(b, a, l.At(b, a)-1)
	}
	switch g {
	case Uniform:
		for a := range k {
			for b := a + 1; b < k; b++ {
				edge(a, b)
			}
		}
	case Ordinal:
		for a := 0; a+1 < k; a++ {
			edge(a, a+1)
		}
	case Cyclical:
		for a := 0; a+1 < k; a++ {
			edge(a, a+1)
		}
		if k > 1 {
			edge(k-1, 0) // for k = 2 the pair's second edge
		}
	}
	return l
}

// TestHeatKernelIsTheMatrixExponential checks each structure's closed form
// against gonum's matrix exponential of −tL, L built edge by edge, for
// several K and t, and that every row is a distribution.
func TestHeatKernelIsTheMatrixExponential(t *testing.T) {
	for _, g := range CategoryGraphs {
		for _, k := range []int{1, 2, 3, 5, 12} {
			for _, time := range []float64{0, 0.01, 0.3, 2, 10} {
				t.Run(fmt.Sprintf("%s K=%d t=%v", g, k, time), func(t *testing.T) {
					got, err := HeatKernel(g, k, time)
					if err != nil {
						t.Fatal(err)
					}
					var rt, want mat.Dense
					rt.Scale(-time, laplacian(g, k))
					want.Exp(&rt)
					for a := range k {
						var row float64
						for b := range k {
							if d := math.Abs(got[a*k+b] - want.At(a, b)); d > 1e-12 {
								t.Errorf("q(%d|%d) = %.15g, exp(tR) has %.15g", b, a, got[a*k+b], want.At(a, b))
							}
							row += got[a*k+b]
						}
						if math.Abs(row-1) > 1e-12 {
							t.Errorf("row %d sums to %.15g", a, row)
						}
					}
				})
			}
		}
	}
}

// TestHeatKernelStructuresMoveAsTheirGraphs: on 6 categories a short time
// moves an ordinal value from the last category mostly to its one
// neighbour, a cyclical value equally to both (the first is one), and a
// uniform one equally everywhere; bad arguments are refused.
func TestHeatKernelStructuresMoveAsTheirGraphs(t *testing.T) {
	const k, time = 6, 0.05
	ord, _ := HeatKernel(Ordinal, k, time)
	cyc, _ := HeatKernel(Cyclical, k, time)
	uni, _ := HeatKernel(Uniform, k, time)
	last := (k - 1) * k
	if !(ord[last+k-2] > 10*ord[last+0]) || math.Abs(cyc[last+k-2]-cyc[last+0]) > 1e-12 || math.Abs(uni[last+1]-uni[last+3]) > 1e-15 {
		t.Errorf("from the last category: ordinal to its neighbour %.3g and to the first %.3g; cyclical %.3g and %.3g; uniform %.3g and %.3g",
			ord[last+k-2], ord[last], cyc[last+k-2], cyc[last], uni[last+1], uni[last+3])
	}
	for _, bad := range []struct {
		g CategoryGraph
		k int
		t float64
	}{{"tree", 3, 1}, {Uniform, 0, 1}, {Ordinal, 3, -1}, {Cyclical, 3, math.NaN()}, {Cyclical, 3, math.Inf(1)}} {
		if _, err := HeatKernel(bad.g, bad.k, bad.t); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
