package densityrun

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"gonum.org/v1/gonum/stat"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
)

// ToyLogLikelihood is a toy model's held-out log-likelihood. A toy
// energy has no base that makes exp(−E) integrable over the plane, so the
// model is its density on the plotted square [−Extent, Extent]², the one
// the heat maps show: log p(x) = −E(x) − log Z, Z = ∫ over the square of
// exp(−E), estimated by annealed importance sampling.
type ToyLogLikelihood struct {
	Method string `json:"method"`
	Step   int64  `json:"step"`
	// TestLogLikelihood is the mean over the held-out points inside the
	// square (Outside counts the others, whose likelihood is 0), with
	// its 95 % bootstrap interval over the points.
	TestLogLikelihood float64       `json:"test_loglik"`
	TestInterval      eval.Interval `json:"test_loglik_interval"`
	Outside           int           `json:"outside"`
	// Exact is the data's own mean log-density at the same points, for
	// sets that have one (NaN otherwise, and then absent from the JSON).
	Exact float64 `json:"-"`
	// LogZ, its interval over the chains and the acceptance of AIS's
	// transitions; AIS holds them with their evidence of convergence.
	LogZ          float64            `json:"log_z"`
	LogZInterval  eval.Interval      `json:"log_z_interval"`
	AISAcceptance float64            `json:"ais_acceptance"`
	AIS           sampling.AISResult `json:"ais"`
	// QuadratureLogZ is log Z by the midpoint rule on a quadratureSide²
	// grid over the square: a check on AIS that needs no sampling.
	QuadratureLogZ float64 `json:"quadrature_log_z"`
}

// quadratureSide is the side of the grid of ToyLogLikelihood's quadrature:
// cells of 0.0225 on the default square of side 9, far finer than the toy
// models' energies vary.
const quadratureSide = 400

// outsidePenalty is the energy added outside the square: exp(−E) of a
// chain there vanishes (no weight, every proposal out rejected) while the
// arithmetic stays finite.
const outsidePenalty = 1e12

// squareEnergy is energy on the square [−extent, extent]² and
// outsidePenalty more outside it, for chains of dtype float64 (the network
// is float32).
func squareEnergy(energy losses.EnergyFn, extent float64) losses.EnergyFn {
	return func(x *Node) *Node {
		e := ConvertDType(energy(ConvertDType(x, dtypes.Float32)), x.DType())
		inside := LogicalAll(LessOrEqual(Abs(x), Scalar(x.Graph(), x.DType(), extent)), 1)
		return Where(inside, e, AddScalar(e, outsidePenalty))
	}
}

// toyLogLikelihood estimates the model's log Z on the square by AIS and
// its held-out log-likelihood at o.TestN fresh points of the set.
func toyLogLikelihood(b backends.Backend, model *density.Model, cfg density.Config, set *toy2d.Set, o ToyOptions) (ToyLogLikelihood, error) {
	r := ToyLogLikelihood{Method: cfg.Method, Step: model.Step(), Exact: math.NaN()}
	ais, err := sampling.AIS(b, model.Context(), func(ctx *context.Context) losses.EnergyFn {
		return squareEnergy(density.AveragedEnergy(ctx, cfg), o.Extent)
	}, 2, o.AIS)
	if err != nil {
		return r, fmt.Errorf("AIS: %w", err)
	}
	r.LogZ, r.LogZInterval, r.AISAcceptance, r.AIS = ais.LogZ, ais.Interval, ais.Acceptance, ais
	reportAIS(cfg.Method, ais)
	if r.QuadratureLogZ, err = model.GridLogZ(density.Grid{Extent: [4]float64{-o.Extent, o.Extent, -o.Extent, o.Extent}, Size: quadratureSide}); err != nil {
		return r, err
	}
	fmt.Printf("%s: log Z by quadrature over the square (%d² points) %.4f\n", cfg.Method, quadratureSide, r.QuadratureLogZ)
	points := set.Sample(rand.New(rand.NewPCG(uint64(o.Seed), 0x7e57)), o.TestN)
	energies, err := model.Energies(points, 2)
	if err != nil {
		return r, err
	}
	var logLik, exact []float64
	for i, e := range energies {
		x, y := float64(points[2*i]), float64(points[2*i+1])
		if math.Abs(x) > o.Extent || math.Abs(y) > o.Extent {
			r.Outside++
			continue
		}
		logLik = append(logLik, -e-r.LogZ)
		if v, ok := set.LogDensity(x, y); ok {
			exact = append(exact, v)
		}
	}
	if len(logLik) == 0 {
		return r, fmt.Errorf("all %d held-out points lie outside the square of side %g", o.TestN, 2*o.Extent)
	}
	r.TestLogLikelihood = stat.Mean(logLik, nil)
	if len(exact) == len(logLik) {
		r.Exact = stat.Mean(exact, nil)
	}
	r.TestInterval, err = eval.MeanInterval(logLik, 1000, uint64(o.Seed))
	return r, err
}

// writeToyLogLikelihoods writes the methods' held-out log-likelihoods
// beside the data's exact value (empty where the set has none) as
// SummaryFile, the name a vectors run gives its own.
func writeToyLogLikelihoods(dir string, results []ToyLogLikelihood) error {
	return atomicfile.Write(filepath.Join(dir, SummaryFile), func(w io.Writer) error {
		c := csv.NewWriter(w)
		c.Write([]string{"method", "test_loglik", "lo", "hi", "exact", "log_z", "log_z_lo", "log_z_hi", "ais_acceptance", "outside", "steps", "log_z_check", "log_z_upper", "ais_converged", "log_z_quadrature"})
		f := func(v float64) string {
			if math.IsNaN(v) {
				return ""
			}
			return strconv.FormatFloat(v, 'g', 8, 64)
		}
		for _, r := range results {
			c.Write([]string{r.Method, f(r.TestLogLikelihood), f(r.TestInterval.Lo), f(r.TestInterval.Hi), f(r.Exact),
				f(r.LogZ), f(r.LogZInterval.Lo), f(r.LogZInterval.Hi), f(r.AISAcceptance), strconv.Itoa(r.Outside), strconv.FormatInt(r.Step, 10),
				f(r.AIS.Check.LogZ), f(r.AIS.Upper.LogZ), strconv.FormatBool(r.AIS.Converged), f(r.QuadratureLogZ)})
		}
		c.Flush()
		return c.Error()
	})
}
