package densityrun

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/floats"

	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/sampling"
)

// TestToyLogLikelihoodOnTheSquare: after some ED training on the 8
// Gaussians, AIS's log Z on the square [−4.5, 4.5]² is within 0.15 of a
// midpoint quadrature of exp(−E) over a 200 × 200 grid of that square,
// which its bootstrap interval holds; the held-out log-likelihood is
// −E − log Z averaged over the points, recomputed here; and the data's
// own mean log-density at the same points is the closed form's.
func TestToyLogLikelihoodOnTheSquare(t *testing.T) {
	b := testutil.Backend()
	cfg := density.DefaultConfig("ed")
	cfg.MLP.Hidden = []int{16, 16}
	model, err := density.New(b, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	set, err := toy2d.New("8gaussians")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		x := tensors.FromFlatDataAndDimensions(set.Sample(rng, 64), 64, 2)
		if _, err := model.TrainStep(x); err != nil {
			t.Fatal(err)
		}
	}
	const extent, size = 4.5, 200
	o := ToyOptions{Extent: extent, Seed: 1, TestN: 400,
		AIS: sampling.AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 128, Temperatures: 200, Seed: 1}, BaseStd: extent / 2}}
	r, err := toyLogLikelihood(b, model, cfg, set, o)
	if err != nil {
		t.Fatal(err)
	}

	grid := density.Grid{Extent: [4]float64{-extent, extent, -extent, extent}, Size: size}
	energies, err := model.Energies(grid.Points(), 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range energies {
		energies[i] = -energies[i]
	}
	cell := (2 * extent / size) * (2 * extent / size)
	quadrature := floats.LogSumExp(energies) + math.Log(cell)
	t.Logf("log Z on the square: AIS %.4f [%.4f, %.4f], quadrature %.4f", r.LogZ, r.LogZInterval.Lo, r.LogZInterval.Hi, quadrature)
	if math.Abs(r.LogZ-quadrature) > 0.15 || quadrature < r.LogZInterval.Lo || quadrature > r.LogZInterval.Hi {
		t.Errorf("AIS log Z on the square %.4f [%.4f, %.4f], quadrature %.4f", r.LogZ, r.LogZInterval.Lo, r.LogZInterval.Hi, quadrature)
	}
	// The run's own quadrature, on a finer grid, agrees with this one.
	if math.Abs(r.QuadratureLogZ-quadrature) > 0.02 || !r.AIS.Converged {
		t.Errorf("the run's quadrature log Z %.4f, this test's %.4f; AIS converged %v %q", r.QuadratureLogZ, quadrature, r.AIS.Converged, r.AIS.Warnings)
	}

	points := set.Sample(rand.New(rand.NewPCG(uint64(o.Seed), 0x7e57)), o.TestN)
	at, err := model.Energies(points, 2)
	if err != nil {
		t.Fatal(err)
	}
	var logLik, exact float64
	for i, e := range at {
		logLik += (-e - r.LogZ) / float64(o.TestN)
		v, _ := set.LogDensity(float64(points[2*i]), float64(points[2*i+1]))
		exact += v / float64(o.TestN)
	}
	if r.Outside != 0 || math.Abs(r.TestLogLikelihood-logLik) > 1e-9 || math.Abs(r.Exact-exact) > 1e-9 {
		t.Errorf("held-out log-likelihood %v (exact %v, %d outside), recomputed %v (exact %v, 0 outside)", r.TestLogLikelihood, r.Exact, r.Outside, logLik, exact)
	}
	if !(r.TestInterval.Lo < r.TestLogLikelihood && r.TestLogLikelihood < r.TestInterval.Hi) || !(r.AISAcceptance > 0.5) {
		t.Errorf("interval %+v around %v, AIS acceptance %v", r.TestInterval, r.TestLogLikelihood, r.AISAcceptance)
	}
}
