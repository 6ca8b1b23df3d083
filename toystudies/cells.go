package toystudies

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
)

// ToySet is the training data of a 2-D study: a toy set with an exact
// density, how many of its points are drawn, and how many epochs each
// run trains over them (in batches of 128).
type ToySet struct {
	Data           string
	Points, Epochs int
}

// toyBench is the data of the 2-D studies: training points of a toy set
// with an exact density, and the points the log-density MSE is measured on.
type toyBench struct {
	b                backends.Backend
	name             string
	seed             uint64
	epochs           int
	points, eval     []float32 // points: training; eval: importance-sampling points, test points, then the picture's grid
	logpIS, logpTest []float64
	grid             density.Grid
}

// studyBatch and studyEvalN are the 2-D studies' batch size and number of
// importance-sampling and of test points.
const studyBatch, studyEvalN = 128, 5000

// newToyBench draws the training and evaluation points of set and makes
// s.Dir; flags names the flags that set set.Data and set.Points, for the
// errors.
func (s Study) newToyBench(set ToySet, flags [2]string) (*toyBench, error) {
	fail := func(err error) (*toyBench, error) {
		return nil, fmt.Errorf("flags %s %s, %s %d: %w", flags[0], set.Data, flags[1], set.Points, err)
	}
	toy, err := toy2d.New(set.Data)
	if err != nil {
		return fail(err)
	}
	if _, exact := toy.LogDensity(0, 0); !exact {
		return fail(fmt.Errorf("%s has no exact density to compare with", set.Data))
	}
	if set.Points < studyBatch {
		return fail(fmt.Errorf("%d training points: want at least one batch of %d", set.Points, studyBatch))
	}
	if err := s.makeDir(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(s.Seed, 3))
	tb := &toyBench{b: s.Backend, name: set.Data, seed: s.Seed, epochs: set.Epochs, points: toy.Sample(rng, set.Points)}
	isPoints, testPoints := toy.Sample(rng, studyEvalN), toy.Sample(rng, studyEvalN)
	logp := func(pts []float32) []float64 {
		out := make([]float64, len(pts)/2)
		for i := range out {
			out[i], _ = toy.LogDensity(float64(pts[2*i]), float64(pts[2*i+1]))
		}
		return out
	}
	tb.logpIS, tb.logpTest = logp(isPoints), logp(testPoints)
	// train-toy's default picture extent, [−4.5, 4.5]², holds every toy set.
	tb.grid = density.Grid{Extent: [4]float64{-4.5, 4.5, -4.5, 4.5}, Size: 48}
	tb.eval = slices.Concat(isPoints, testPoints, tb.grid.Points())
	return tb, nil
}

// run trains cfg and returns its log-density MSE and its energies on the
// grid, or NaN, nil and the step whose loss was not finite.
func (tb *toyBench) run(cfg density.Config) (mse float64, gridEnergies []float64, divergedAt int, err error) {
	_, energies, divergedAt, err := tb.train(cfg)
	if err != nil || divergedAt > 0 {
		return math.NaN(), nil, divergedAt, err
	}
	n := 2 * studyEvalN
	mse = density.LogDensityMSEFromEnergies(energies[:studyEvalN], tb.logpIS, energies[studyEvalN:n], tb.logpTest)
	return mse, energies[n:], 0, nil
}

// train trains cfg on the bench's points and returns the loss of every
// step and the energies at tb.eval, or, for a run stopped by a non-finite
// loss, the history so far, nil and that step.
func (tb *toyBench) train(cfg density.Config) (history, evalEnergies []float64, divergedAt int, err error) {
	history, evalEnergies, err = density.TrainOnPoints(tb.b, cfg, int64(tb.seed), tb.points, 2, studyBatch, tb.epochs, tb.eval)
	if errors.Is(err, density.ErrNonFinite) {
		return history, nil, len(history), nil
	}
	return history, evalEnergies, 0, err
}

// cellResult is a grid cell's outcome as kept in its file.
type cellResult struct {
	MSE        float `json:"mse"`
	DivergedAt int   `json:"diverged_at_step"`
	// Energies are the trained energy on the picture's grid, none for a
	// run that diverged.
	Energies []float `json:"grid_energies"`
	// AdamEpsilon is the run's Adam ε, for the record (cells written
	// before it was kept trained with GoMLX's 1e-7).
	AdamEpsilon float64 `json:"adam_epsilon,omitempty"`
}

// float is a float64 whose JSON form also holds NaN and ±Inf (as the
// strings "NaN", "+Inf", "-Inf"), which a collapsed energy reaches.
type float float64

// MarshalJSON writes f as a JSON number, or a string when not finite.
func (f float) MarshalJSON() ([]byte, error) {
	if v := float64(f); math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(float64(f))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *float) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		v, err := strconv.ParseFloat(s, 64)
		*f = float(v)
		return err
	}
	return json.Unmarshal(data, (*float64)(f))
}

// floats converts between []float64 and []float.
func floats[T, U ~float64](v []T) []U {
	if v == nil {
		return nil
	}
	out := make([]U, len(v))
	for i, x := range v {
		out[i] = U(x)
	}
	return out
}

// cell is run for one study cell, ED or DSM trained with cfg, its result
// read from or kept in a file in dir named by everything it depends on: the
// toy set, the method's settings, the seed and the training points and
// epochs.
func (tb *toyBench) cell(dir string, cfg density.Config) (mse float64, gridEnergies []float64, divergedAt int, err error) {
	var settings string
	switch cfg.Method {
	case "ed":
		settings = fmt.Sprintf("t%g-M%d-w%g", cfg.ED.T, cfg.ED.M, cfg.ED.W)
	case "dsm":
		settings = fmt.Sprintf("dsm-t%g", cfg.DSMVariance)
	default:
		return 0, nil, 0, fmt.Errorf("study cell of method %q: want ed or dsm", cfg.Method)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-seed%d-points%d-epochs%d.json", tb.name, settings, tb.seed, len(tb.points)/2, tb.epochs))
	if data, err := os.ReadFile(path); err == nil {
		var r cellResult
		if err := json.Unmarshal(data, &r); err != nil || (r.Energies != nil && len(r.Energies) != tb.grid.Size*tb.grid.Size) {
			return 0, nil, 0, fmt.Errorf("%s: not a finished cell (%v): delete it to run the cell again", path, err)
		}
		return float64(r.MSE), floats[float, float64](r.Energies), r.DivergedAt, nil
	}
	if mse, gridEnergies, divergedAt, err = tb.run(cfg); err != nil {
		return 0, nil, 0, err
	}
	r := cellResult{MSE: float(mse), DivergedAt: divergedAt, Energies: floats[float64, float](gridEnergies), AdamEpsilon: cfg.AdamEpsilon}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, nil, 0, err
	}
	return mse, gridEnergies, divergedAt, atomicfile.WriteJSON(path, r)
}
