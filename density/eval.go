package density

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"gonum.org/v1/gonum/floats"

	"github.com/edlebm/edlebm/losses"
)

// LogDensityMSE is the log-density error the paper reports for the 2-D
// sets (the mean squared difference of log-densities), for data with an
// exact log-density: the normaliser is estimated by importance sampling from the
// data, log Z ≈ logsumexp(−E(xᵢ) − log p(xᵢ)) − log N over the samples
// isSamples, and the error is mean((−E(x) − log Z − log p(x))²) over
// testSamples. Both sample sets hold flat dim-dimensional points.
func (m *Model) LogDensityMSE(isSamples, testSamples []float32, dim int, logDensity func(point []float32) float64) (float64, error) {
	eIS, err := m.Energies(isSamples, dim)
	if err != nil {
		return 0, err
	}
	eTest, err := m.Energies(testSamples, dim)
	if err != nil {
		return 0, err
	}
	return LogDensityMSEFromEnergies(eIS, logDensities(isSamples, dim, logDensity),
		eTest, logDensities(testSamples, dim, logDensity)), nil
}

// LogDensityMSEFromEnergies computes LogDensityMSE from energies and exact
// log-densities at the importance samples and the test samples (NaN when
// either is empty).
func LogDensityMSEFromEnergies(eIS, logpIS, eTest, logpTest []float64) float64 {
	if len(eIS) == 0 || len(eTest) == 0 {
		return math.NaN()
	}
	weights := make([]float64, len(eIS))
	for i := range eIS {
		weights[i] = -eIS[i] - logpIS[i]
	}
	logZ := floats.LogSumExp(weights) - math.Log(float64(len(eIS)))
	var mse float64
	for i := range eTest {
		d := -eTest[i] - logZ - logpTest[i]
		mse += d * d / float64(len(eTest))
	}
	return mse
}

func logDensities(points []float32, dim int, logDensity func([]float32) float64) []float64 {
	out := make([]float64, len(points)/dim)
	for i := range out {
		out[i] = logDensity(points[i*dim : (i+1)*dim])
	}
	return out
}

// Grid is a regular grid of 2-D points over an extent.
type Grid struct {
	// Extent is xmin, xmax, ymin, ymax.
	Extent [4]float64
	// Size is the number of points along each axis.
	Size int
}

// Points lists the grid's points row by row, row 0 at the lowest y (the
// layout plots.WriteHeatmap draws with y upwards).
func (g Grid) Points() []float32 {
	pts := make([]float32, 0, 2*g.Size*g.Size)
	for r := range g.Size {
		y := g.coord(2, r)
		for c := range g.Size {
			pts = append(pts, float32(g.coord(0, c)), float32(y))
		}
	}
	return pts
}

func (g Grid) coord(axis, i int) float64 {
	lo, hi := g.Extent[axis], g.Extent[axis+1]
	return lo + (hi-lo)*(float64(i)+0.5)/float64(g.Size)
}

// EnergyAndDensity evaluates the averaged energy on the grid and the density
// exp(−E)/Z it defines, Z by quadrature over the grid.
func (m *Model) EnergyAndDensity(g Grid) (energy, density []float64, err error) {
	energy, err = m.Energies(g.Points(), 2)
	if err != nil {
		return nil, nil, err
	}
	logZ := g.logZ(energy)
	density = make([]float64, len(energy))
	for i, e := range energy {
		density[i] = math.Exp(-e - logZ)
	}
	return energy, density, nil
}

// GridLogZ is log Z of the averaged energy over the grid's square by the
// midpoint rule: log Σ exp(−E) + log(cell area) over the grid's points,
// the cells' centres.
func (m *Model) GridLogZ(g Grid) (float64, error) {
	energy, err := m.Energies(g.Points(), 2)
	if err != nil {
		return 0, err
	}
	return g.logZ(energy), nil
}

// logZ is the midpoint rule's log Z of the energies at the grid's points.
func (g Grid) logZ(energy []float64) float64 {
	cell := (g.Extent[1] - g.Extent[0]) * (g.Extent[3] - g.Extent[2]) / float64(g.Size*g.Size)
	negE := make([]float64, len(energy))
	for i, e := range energy {
		negE[i] = -e
	}
	return floats.LogSumExp(negE) + math.Log(cell)
}

// Sample runs Langevin dynamics on the averaged energy from the flat
// dim-dimensional points init and returns the final points.
func (m *Model) Sample(init []float32, dim int, cfg losses.LangevinConfig) ([]float32, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dim <= 0 || len(init)%dim != 0 {
		return nil, fmt.Errorf("density: %d values are not a whole number of %d-dimensional points", len(init), dim)
	}
	if !m.hasAverages() {
		return nil, fmt.Errorf("density: the model has not been trained yet (no parameter averages)")
	}
	exec, err := context.NewExec(m.backend, m.ctx, func(ctx *context.Context, x *Node) *Node {
		energy := AveragedEnergy(ctx, m.cfg) // with the base, if the model has one
		return losses.Langevin(ctx, energy, x, cfg)
	})
	if err != nil {
		return nil, err
	}
	defer exec.Finalize()
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(init, len(init)/dim, dim))
	if err != nil {
		return nil, err
	}
	return tensors.CopyFlatData[float32](out[0])
}
