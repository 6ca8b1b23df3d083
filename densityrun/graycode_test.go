package densityrun

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/edlebm/edlebm/density"
)

func TestCellOfAndDrawCells(t *testing.T) {
	g := density.Grid{Extent: [4]float64{-2, 2, -2, 2}, Size: 4}
	cells := g.Points()
	for i := 0; i < len(cells); i += 2 {
		if c, ok := cellOf(g, cells[i], cells[i+1]); !ok || c != i/2 {
			t.Errorf("the centre of cell %d falls in cell %d (%v)", i/2, c, ok)
		}
	}
	if _, ok := cellOf(g, 2.5, 0); ok {
		t.Error("a point outside the square has a cell")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		got := regridded(rng, g, []float32{0.2, -1.9, 3, 0})
		if c, ok := cellOf(g, got[0], got[1]); !ok || c != 2 || got[2] != 3 || got[3] != 0 {
			t.Fatalf("regridded = %v: want the first point still in cell 2, the second (outside) unchanged", got)
		}
	}
	// softmax(−e) of e = 0, ln 2, +large: 2/3, 1/3, 0.
	probs := softmaxNeg([]float64{0, math.Ln2, 1e4})
	if math.Abs(probs[0]-2.0/3) > 1e-12 || math.Abs(probs[1]-1.0/3) > 1e-12 || probs[2] != 0 {
		t.Errorf("softmaxNeg = %v, want [2/3 1/3 0]", probs)
	}
	// Draws follow the probabilities: cell 1 and 2 of four, 1:3.
	weights := make([]float64, len(cells)/2)
	weights[1], weights[2] = 0.25, 0.75
	drawn := drawCells(rand.New(rand.NewPCG(1, 2)), g, weights, 4000)
	counts := map[int]int{}
	for i := 0; i < len(drawn); i += 2 {
		c, _ := cellOf(g, drawn[i], drawn[i+1])
		counts[c]++
	}
	if len(counts) != 2 || math.Abs(float64(counts[1])/4000-0.25) > 0.03 {
		t.Errorf("4,000 draws landed in cells %v, want cells 1 and 2 about 1:3", counts)
	}
}
