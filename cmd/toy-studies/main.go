// Command toy-studies runs the paper's studies of energy discrepancy on
// toy data and writes their curves and pictures as CSV and PNG:
//
//   - mixture: losses as functions of the mixture weight ρ for data
//     0.2·N(−5,1) + 0.8·N(5,1) — ED for several t (M 32, w 1), the negative
//     log-likelihood and score matching — and the weight ED estimates, with
//     its error over repetitions, for several t and M;
//
//   - w: the energy learned from N(0,1) data by a tiny MLP under ED with
//     stabiliser w ∈ {0, 0.05, 0.25, 2}, and the loss histories;
//
//   - dsm: the paper's "Comparison with Denoising Score Matching" — ED
//     (M 4, w 1) and DSM trained on a 2-D toy set for each noise scale t,
//     the log-density MSE of each against the exact density, and both
//     learned densities side by side;
//
//   - tm and wm: the paper's "Effect of t, M, and w" — ED's density on a
//     2-D toy set for each t × M (w 1) or w × M (t 1), with each cell's
//     log-density MSE and the step at which a run diverged;
//
//   - divergence: the same paper section's "w = 0 diverges within 100
//     steps" — ED's batch loss at every step of short runs for each w × M,
//     and the densities they end with;
//
//   - init-report: no training — the table and curves of the initialisation
//     comparison whose runs scripts/toy-init-compare.sh keeps in -init-dir.
//
//     go run ./cmd/toy-studies -study mixture
//     go run ./cmd/toy-studies -study w
//     go run ./cmd/toy-studies -study dsm
//     go run ./cmd/toy-studies -study tm
//     go run ./cmd/toy-studies -study wm
//     go run ./cmd/toy-studies -study divergence
//     go run ./cmd/toy-studies -study init-report -init-dir docs/results/toy-init
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
	"github.com/edlebm/edlebm/plots"
)

func main() {
	study := flag.String("study", "mixture", "study to run: mixture, w, dsm, tm, wm, divergence or init-report")
	out := flag.String("out", "out/studies", "output directory")
	backendFlag := flag.String("backend", "auto", backend.FlagUsage)
	seed := flag.Uint64("seed", 1, "random seed")
	n := flag.Int("n", 10000, "mixture: data points for the loss curves")
	curveTs := flag.String("curve-t", "2,4,8,32", "mixture: values of t for the loss curves (M 32, w 1)")
	estTs := flag.String("est-t", "1,2,8,32", "mixture: values of t for the estimation study")
	estMs := flag.String("est-m", "4,32", "mixture: values of M for the estimation study")
	reps := flag.Int("reps", 50, "mixture: repetitions of the estimation study")
	estN := flag.Int("est-n", 1000, "mixture: data points per estimation repetition")
	ws := flag.String("w", "0,0.05,0.25,2", "w study: stabiliser values")
	epochs := flag.Int("epochs", 50, "w study: epochs over 4,096 N(0,1) points (batch 128)")
	wLR := flag.Float64("w-lr", 1e-2, "w study: Adam learning rate")
	dsmData := flag.String("dsm-data", "25gaussians", "dsm study: toy set, one with an exact density ("+strings.Join(toy2d.Names(), ", ")+")")
	dsmTs := flag.String("dsm-t", "0.01,0.03,0.1,0.3,1,3", "dsm study: noise scales t (ED's perturbation and DSM's noise variance)")
	dsmPoints := flag.Int("dsm-points", 20000, "dsm study: training points")
	dsmEpochs := flag.Int("dsm-epochs", 130, "dsm study: epochs per run (batches of 128; 130 epochs of 20,000 points ≈ 20,000 steps: ED on 25gaussians needs ≈ 10,000 to settle)")
	gridData := flag.String("grid-data", "25gaussians", "tm and wm studies: toy set with an exact density")
	gridValues := flag.String("grid-values", "", "tm study: values of t (default 0.0025,0.25,1,4); wm study: values of w (default 0,0.25,1); divergence study: values of w (default 0,1)")
	gridMs := flag.String("grid-m", "1,4,32", "tm, wm and divergence studies: values of M (the paper's grids add 128, whose cells take ≈ 17 minutes of a core each: ≈ 1½ hours a grid instead of ≈ ½; scripts/toy-grids.sh runs them)")
	gridPoints := flag.Int("grid-points", 20000, "tm and wm studies: training points")
	gridEpochs := flag.Int("grid-epochs", 65, "tm and wm studies: epochs per cell (batches of 128; 65 of 20,000 points ≈ 10,000 steps)")
	divEpochs := flag.Int("div-epochs", 7, "divergence study: epochs per run (on -grid-data, -grid-points, -grid-m; 7 of 20,000 points ≈ 1,100 steps)")
	initDir := flag.String("init-dir", "docs/results/toy-init", "init-report: folder of scripts/toy-init-compare.sh's runs; the table and curves are written there")
	flag.Parse()

	if *study == "init-report" {
		if err := initReport(*initDir); err != nil {
			log.Fatalf("toy-studies: %v", err)
		}
		return
	}
	b, err := backend.OpenForCommand(*backendFlag)
	if err != nil {
		log.Fatalf("toy-studies: %v", err)
	}
	defer b.Finalize()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatalf("toy-studies: %v", err)
	}
	switch *study {
	case "mixture":
		err = mixtureStudy(b, *out, *seed, *n, *reps, *estN, *curveTs, *estTs, *estMs)
	case "w":
		err = wStudy(b, *out, *seed, *ws, *epochs, *wLR)
	case "dsm":
		err = dsmStudy(b, *out, *seed, *dsmData, *dsmTs, *dsmPoints, *dsmEpochs)
	case "tm", "wm", "divergence":
		values := *gridValues
		if values == "" {
			values = map[string]string{"tm": "0.0025,0.25,1,4", "wm": "0,0.25,1", "divergence": "0,1"}[*study]
		}
		if *study == "divergence" {
			err = divergenceStudy(b, *out, *seed, *gridData, values, *gridMs, *gridPoints, *divEpochs)
		} else {
			err = gridStudy(b, *out, *seed, *study, *gridData, values, *gridMs, *gridPoints, *gridEpochs)
		}
	default:
		err = fmt.Errorf("flag -study %q: want mixture, w, dsm, tm, wm, divergence or init-report", *study)
	}
	if err != nil {
		log.Fatalf("toy-studies: %v", err)
	}
}

func mixtureStudy(b backends.Backend, out string, seed uint64, n, reps, estN int, curveTs, estTs, estMs string) error {
	ts, err := parseFloats("-curve-t", curveTs)
	if err != nil {
		return err
	}
	family := toy2d.MixtureWeightStudy()
	rng := rand.New(rand.NewPCG(seed, 1))
	var eds []losses.EDConfig
	header := []string{"rho"}
	for _, t := range ts {
		eds = append(eds, losses.EDConfig{T: t, M: 32, W: 1})
		header = append(header, fmt.Sprintf("ed_t%g", t))
	}
	header = append(header, "nll", "sm")
	eval, err := density.NewMixtureEvaluator(b, family, eds, family.Sample(rng, n), rng)
	if err != nil {
		return err
	}
	defer eval.Close()
	var rows [][]float64
	for i := 1; i < 100; i++ {
		rho := float64(i) / 100
		l, err := eval.At(rho)
		if err != nil {
			return err
		}
		rows = append(rows, append(append([]float64{rho}, l.ED...), l.NLL, l.SM))
	}
	if err := plots.WriteCSV(filepath.Join(out, "mixture_losses.csv"), header, rows); err != nil {
		return err
	}
	// Each curve is shifted to minimum 0 so all fit one axis.
	var series []plots.Series
	for c := 1; c < len(header); c++ {
		s := plots.Series{Name: header[c]}
		lowest := math.Inf(1)
		for _, r := range rows {
			lowest = math.Min(lowest, r[c])
		}
		for _, r := range rows {
			s.X, s.Y = append(s.X, r[0]), append(s.Y, r[c]-lowest)
		}
		series = append(series, s)
	}
	if err := plots.WriteLinePlot(filepath.Join(out, "mixture_losses.png"), plots.LinePlot{
		Title: "Losses against the mixture weight ρ (data ρ = 0.2; each minus its minimum)", XLabel: "ρ", YLabel: "loss − min", Series: series,
	}); err != nil {
		return err
	}
	for c := 1; c < len(header); c++ {
		best := rows[0]
		for _, r := range rows {
			if r[c] < best[c] {
				best = r
			}
		}
		fmt.Printf("%-8s minimised at ρ = %.2f\n", header[c], best[0])
	}
	return estimationStudy(b, out, seed, reps, estN, estTs, estMs)
}

// estimationStudy estimates ρ by minimising ED (and the NLL, for reference)
// on fresh data and noise, reps times per (t, M).
func estimationStudy(b backends.Backend, out string, seed uint64, reps, n int, estTs, estMs string) error {
	ts, err := parseFloats("-est-t", estTs)
	if err != nil {
		return err
	}
	msF, err := parseFloats("-est-m", estMs)
	if err != nil {
		return err
	}
	family := toy2d.MixtureWeightStudy()
	const truth = 0.2
	var rows [][]float64
	fmt.Printf("%6s %5s %10s %10s %10s   (%d repetitions of %d points)\n", "t", "M", "mean ρ̂", "std ρ̂", "RMSE", reps, n)
	for _, t := range append(ts, 0) { // t = 0 marks the maximum-likelihood reference
		for _, mf := range msF {
			m := int(mf)
			if t == 0 && m != int(msF[0]) {
				continue
			}
			var sum, sumSq, sqErr float64
			for r := range reps {
				rng := rand.New(rand.NewPCG(seed+uint64(r), uint64(m)))
				cfg := losses.EDConfig{T: math.Max(t, 1), M: m, W: 1}
				eval, err := density.NewMixtureEvaluator(b, family, []losses.EDConfig{cfg}, family.Sample(rng, n), rng)
				if err != nil {
					return err
				}
				rho, err := density.GoldenSectionMin(func(rho float64) (float64, error) {
					l, err := eval.At(rho)
					if t == 0 {
						return l.NLL, err
					}
					return l.ED[0], err
				}, 0.001, 0.999, 1e-4)
				eval.Close()
				if err != nil {
					return err
				}
				sum, sumSq, sqErr = sum+rho, sumSq+rho*rho, sqErr+(rho-truth)*(rho-truth)
			}
			mean := sum / float64(reps)
			std := math.Sqrt(math.Max(0, sumSq/float64(reps)-mean*mean))
			rmse := math.Sqrt(sqErr / float64(reps))
			label := fmt.Sprintf("%6g %5d", t, m)
			if t == 0 {
				label = fmt.Sprintf("%6s %5s", "MLE", "-")
			}
			fmt.Printf("%s %10.4f %10.4f %10.4f\n", label, mean, std, rmse)
			rows = append(rows, []float64{t, float64(m), mean, std, rmse})
		}
	}
	return plots.WriteCSV(filepath.Join(out, "mixture_estimates.csv"), []string{"t(0=MLE)", "M", "mean_rho", "std_rho", "rmse"}, rows)
}

func wStudy(b backends.Backend, out string, seed uint64, wsFlag string, epochs int, lr float64) error {
	ws, err := parseFloats("-w", wsFlag)
	if err != nil {
		return err
	}
	const points, batch = 4096, 128
	rng := rand.New(rand.NewPCG(seed, 2))
	data := make([]float32, points)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	grid := make([]float32, 161)
	for i := range grid {
		grid[i] = float32(-4 + 0.05*float64(i))
	}
	var energySeries, lossSeries []plots.Series
	for _, w := range ws {
		cfg := density.DefaultConfig("ed")
		cfg.ED = losses.EDConfig{T: 1, M: 4, W: w}
		cfg.MLP = nets.MLPConfig{Hidden: []int{2, 2}, Activation: "swish"}
		cfg.EMADecay = 0 // evaluate the parameters themselves
		cfg.LearningRate = lr
		history, energies, err := density.TrainOnPoints(b, cfg, int64(seed), data, 1, batch, epochs, grid)
		name := fmt.Sprintf("w = %g", w)
		if err != nil {
			fmt.Printf("%s: %v\n", name, err)
		}
		ls := plots.Series{Name: name}
		for i, l := range history {
			ls.X, ls.Y = append(ls.X, float64(i+1)), append(ls.Y, l)
		}
		lossSeries = append(lossSeries, ls)
		if energies != nil {
			es := plots.Series{Name: name}
			lowest := math.Inf(1)
			for _, e := range energies {
				lowest = math.Min(lowest, e)
			}
			for i, e := range energies {
				es.X, es.Y = append(es.X, float64(grid[i])), append(es.Y, e-lowest)
			}
			energySeries = append(energySeries, es)
		}
	}
	truth := plots.Series{Name: "data: x²/2"}
	for _, x := range grid {
		truth.X, truth.Y = append(truth.X, float64(x)), append(truth.Y, float64(x*x)/2)
	}
	if err := plots.WriteLinePlot(filepath.Join(out, "w_energies.png"), plots.LinePlot{
		Title: "Energies learned by ED (t 1, M 4) from N(0,1) data", XLabel: "x", YLabel: "E(x) − min E",
		Series: append(energySeries, truth),
	}); err != nil {
		return err
	}
	var rows [][]float64
	for i := range grid {
		row := []float64{float64(grid[i])}
		for _, s := range energySeries {
			row = append(row, s.Y[i])
		}
		rows = append(rows, row)
	}
	header := []string{"x"}
	for _, s := range energySeries {
		header = append(header, strings.ReplaceAll(s.Name, " ", ""))
	}
	if err := plots.WriteCSV(filepath.Join(out, "w_energies.csv"), header, rows); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(out, "w_losses.png"), plots.LinePlot{
		Title: "ED loss per step", XLabel: "step", YLabel: "loss", Series: lossSeries,
	})
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

func newToyBench(b backends.Backend, data string, seed uint64, points, epochs int) (*toyBench, error) {
	set, err := toy2d.New(data)
	if err != nil {
		return nil, err
	}
	if _, exact := set.LogDensity(0, 0); !exact {
		return nil, fmt.Errorf("%s has no exact density to compare with", data)
	}
	if points < studyBatch {
		return nil, fmt.Errorf("%d training points: want at least one batch of %d", points, studyBatch)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	tb := &toyBench{b: b, name: data, seed: seed, epochs: epochs, points: set.Sample(rng, points)}
	isPoints, testPoints := set.Sample(rng, studyEvalN), set.Sample(rng, studyEvalN)
	logp := func(pts []float32) []float64 {
		out := make([]float64, len(pts)/2)
		for i := range out {
			out[i], _ = set.LogDensity(float64(pts[2*i]), float64(pts[2*i+1]))
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
func (tb *toyBench) cell(dir string, cfg density.Config, points int) (mse float64, gridEnergies []float64, divergedAt int, err error) {
	var settings string
	switch cfg.Method {
	case "ed":
		settings = fmt.Sprintf("t%g-M%d-w%g", cfg.ED.T, cfg.ED.M, cfg.ED.W)
	case "dsm":
		settings = fmt.Sprintf("dsm-t%g", cfg.DSMVariance)
	default:
		return 0, nil, 0, fmt.Errorf("study cell of method %q: want ed or dsm", cfg.Method)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-seed%d-points%d-epochs%d.json", tb.name, settings, tb.seed, points, tb.epochs))
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

// dsmStudy trains ED (t, M 4, w 1) and denoising score matching (noise
// variance t) on points of the toy set data for every t of tsFlag, and
// writes each run's log-density MSE against the exact density (dsm.csv,
// dsm.png; NaN where training diverged) and the learned densities
// (dsm_density.png: ED's band at the bottom, DSM's above, t increasing to
// the right). Finished runs are kept in OUT/cells, as the grids' are.
func dsmStudy(b backends.Backend, out string, seed uint64, data, tsFlag string, points, epochs int) error {
	ts, err := parseFloats("-dsm-t", tsFlag)
	if err != nil {
		return err
	}
	tb, err := newToyBench(b, data, seed, points, epochs)
	if err != nil {
		return fmt.Errorf("flags -dsm-data %s, -dsm-points %d: %w", data, points, err)
	}
	methods := []string{"ed", "dsm"}
	series := make([]plots.Series, len(methods))
	bands := make([][][]float64, len(methods))
	var rows [][]float64
	for _, t := range ts {
		row := []float64{t}
		for i, method := range methods {
			cfg := density.DefaultConfig(method)
			cfg.ED.T = t
			if method == "dsm" {
				cfg.DSMVariance = t
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("flag -dsm-t: %w", err)
			}
			mse, energies, divergedAt, err := tb.cell(filepath.Join(out, "cells"), cfg, points)
			if err != nil {
				return err
			}
			fmt.Printf("%s, t = %g: log-density MSE %.4f%s\n", method, t, mse, divergence(divergedAt))
			row = append(row, mse)
			series[i].Name = method
			series[i].X, series[i].Y = append(series[i].X, t), append(series[i].Y, mse)
			bands[i] = append(bands[i], scaledDensity(energies, tb.grid.Size))
		}
		rows = append(rows, row)
	}
	if err := plots.WriteCSV(filepath.Join(out, "dsm.csv"), []string{"t", "ed_mse", "dsm_mse"}, rows); err != nil {
		return err
	}
	if err := writeCellPicture(filepath.Join(out, "dsm_density.png"), bands, tb.grid.Size); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(out, "dsm.png"), plots.LinePlot{
		Title:  fmt.Sprintf("%s: log-density MSE against the noise scale t (%d epochs of %d points)", data, epochs, points),
		XLabel: "t", YLabel: "log-density MSE", LogX: true, LogY: true, Series: series,
	})
}

// divergence describes a run that stopped at a non-finite loss.
func divergence(step int) string {
	if step == 0 {
		return ""
	}
	return fmt.Sprintf(" (diverged: loss not finite at step %d)", step)
}

// gridStudy is the paper's "Effect of t, M, and w": ED trained on the toy
// set data for every pair of rowValues (t with w 1 for kind "tm", w with
// t 1 for "wm") and M of msFlag. It writes grid_KIND.csv (the log-density
// MSE of each cell, and the step at which a run diverged, 0 if none) and
// grid_KIND.png (each cell's density exp(−E), scaled to its maximum; one
// band of cells per value of the first setting, increasing upwards like
// a plot's y axis, so the first value is the bottom band; columns by M,
// increasing to the right; grey cells diverged). Each finished cell is kept
// in OUT/cells, so that the study, run again with the same flags after an
// interruption, goes on from the first cell not done.
func gridStudy(b backends.Backend, out string, seed uint64, kind, data, rowsFlag, msFlag string, points, epochs int) error {
	rowValues, err := parseFloats("-grid-values", rowsFlag)
	if err != nil {
		return err
	}
	mValues, err := parseFloats("-grid-m", msFlag)
	if err != nil {
		return err
	}
	if kind != "tm" && kind != "wm" {
		return fmt.Errorf("grid kind %q: want tm or wm", kind)
	}
	tb, err := newToyBench(b, data, seed, points, epochs)
	if err != nil {
		return fmt.Errorf("flags -grid-data %s, -grid-points %d: %w", data, points, err)
	}
	bands := make([][][]float64, len(rowValues))
	var rows [][]float64
	for ri, v := range rowValues {
		for _, m := range mValues {
			cfg := density.DefaultConfig("ed")
			cfg.ED = losses.EDConfig{T: 1, M: int(m), W: 1}
			if kind == "tm" {
				cfg.ED.T = v
			} else {
				cfg.ED.W = v
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("flags -grid-values, -grid-m: %w", err)
			}
			mse, energies, divergedAt, err := tb.cell(filepath.Join(out, "cells"), cfg, points)
			if err != nil {
				return err
			}
			fmt.Printf("t %g, M %d, w %g: log-density MSE %.4f%s\n", cfg.ED.T, cfg.ED.M, cfg.ED.W, mse, divergence(divergedAt))
			rows = append(rows, []float64{v, m, mse, float64(divergedAt)})
			bands[ri] = append(bands[ri], scaledDensity(energies, tb.grid.Size))
		}
	}
	first := map[string]string{"tm": "t", "wm": "w"}[kind]
	if err := plots.WriteCSV(filepath.Join(out, "grid_"+kind+".csv"), []string{first, "M", "mse", "diverged_at_step"}, rows); err != nil {
		return err
	}
	return writeCellPicture(filepath.Join(out, "grid_"+kind+".png"), bands, tb.grid.Size)
}

// divergenceSteps are the steps whose batch loss the divergence study
// tabulates.
var divergenceSteps = []int{1, 10, 100, 1000, 10000}

// divergenceStudy tests the paper's "w = 0 and small M diverge within 100
// optimisation steps": ED (t 1) trained for a few epochs on the toy set
// data for every w of wsFlag and M of msFlag, recording the batch loss of
// every step. With w > 0 the loss is bounded below by log(w/M); with w = 0
// nothing bounds it, and divergence shows as the loss running off towards
// −∞ long before it stops being a finite float32. Writes divergence.csv
// (per run: the loss at divergenceSteps, NaN past the run's end, the
// lowest loss and the step of the first non-finite loss, 0 if none),
// divergence_losses.csv and .png (every step's loss; log step axis,
// symmetric log loss axis) and
// divergence_density.png (each run's final density, a band per w from
// the bottom, M increasing to the right).
func divergenceStudy(b backends.Backend, out string, seed uint64, data, wsFlag, msFlag string, points, epochs int) error {
	ws, err := parseFloats("-grid-values", wsFlag)
	if err != nil {
		return err
	}
	ms, err := parseFloats("-grid-m", msFlag)
	if err != nil {
		return err
	}
	tb, err := newToyBench(b, data, seed, points, epochs)
	if err != nil {
		return fmt.Errorf("flags -grid-data %s, -grid-points %d: %w", data, points, err)
	}
	header := []string{"w", "M"}
	for _, step := range divergenceSteps {
		header = append(header, fmt.Sprintf("loss_step%d", step))
	}
	header = append(header, "lowest_loss", "nonfinite_at_step")
	var rows, curveRows [][]float64
	var series []plots.Series
	bands := make([][][]float64, len(ws))
	for wi, w := range ws {
		for _, m := range ms {
			cfg := density.DefaultConfig("ed")
			cfg.ED = losses.EDConfig{T: 1, M: int(m), W: w}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("flags -grid-values, -grid-m: %w", err)
			}
			history, energies, nonFiniteAt, err := tb.train(cfg)
			if err != nil {
				return err
			}
			if energies != nil {
				energies = energies[2*studyEvalN:] // the picture's grid
			}
			row := []float64{w, m}
			for _, step := range divergenceSteps {
				row = append(row, stepLoss(history, step))
			}
			lowest := math.Inf(1)
			curve := plots.Series{Name: fmt.Sprintf("w %g, M %d", w, cfg.ED.M)}
			for i, loss := range history {
				lowest = math.Min(lowest, loss)
				curve.X, curve.Y = append(curve.X, float64(i+1)), append(curve.Y, loss)
				curveRows = append(curveRows, []float64{w, m, float64(i + 1), loss})
			}
			rows = append(rows, append(row, lowest, float64(nonFiniteAt)))
			series = append(series, curve)
			bands[wi] = append(bands[wi], scaledDensity(energies, tb.grid.Size))
			fmt.Printf("w %g, M %d: loss at steps %v: %.4g; lowest %.4g%s\n", w, cfg.ED.M, divergenceSteps, row[2:], lowest, divergence(nonFiniteAt))
		}
	}
	if err := plots.WriteCSV(filepath.Join(out, "divergence.csv"), header, rows); err != nil {
		return err
	}
	if err := plots.WriteCSV(filepath.Join(out, "divergence_losses.csv"), []string{"w", "M", "step", "loss"}, curveRows); err != nil {
		return err
	}
	if err := writeCellPicture(filepath.Join(out, "divergence_density.png"), bands, tb.grid.Size); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(out, "divergence_losses.png"), plots.LinePlot{
		Title:  fmt.Sprintf("%s: ED's batch loss (t 1) for each w and M", data),
		XLabel: "step", YLabel: "batch loss", LogX: true, SymLogY: true, Series: series,
	})
}

// stepLoss is the loss of step (1-based) in history, NaN past its end.
func stepLoss(history []float64, step int) float64 {
	if step > len(history) {
		return math.NaN()
	}
	return history[step-1]
}

// writeCellPicture draws bands of size×size cells (densities scaled to
// [0, 1], NaN grey) as one heat map: band 0 at the bottom, like a plot's
// y axis, each band's cells left to right, one grey row or column between
// neighbours, 2 pixels a cell point. Every band holds the same number of
// cells.
func writeCellPicture(path string, bands [][][]float64, size int) error {
	if len(bands) == 0 || len(bands[0]) == 0 {
		return fmt.Errorf("%s: no cells to draw", path)
	}
	cols := len(bands[0])*(size+1) - 1
	picture := make([]float64, 0, len(bands)*(size+1)*cols)
	for bi, cells := range bands {
		if len(cells) != len(bands[0]) {
			return fmt.Errorf("%s: band %d has %d cells, band 0 %d", path, bi, len(cells), len(bands[0]))
		}
		for r := range size {
			for ci, cell := range cells {
				picture = append(picture, cell[r*size:(r+1)*size]...)
				if ci < len(cells)-1 {
					picture = append(picture, math.NaN())
				}
			}
		}
		if bi < len(bands)-1 {
			for range cols {
				picture = append(picture, math.NaN())
			}
		}
	}
	return plots.WriteHeatmap(path, picture, len(picture)/cols, cols, plots.HeatmapOptions{Scale: 2, Min: 0, Max: 1, RowZeroAtTop: false})
}

// scaledDensity is exp(−E) over a size×size grid scaled to maximum 1, or
// NaN everywhere (drawn grey) for a diverged run.
func scaledDensity(energies []float64, size int) []float64 {
	out := make([]float64, size*size)
	if energies == nil {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	lowest := math.Inf(1)
	for _, e := range energies {
		lowest = math.Min(lowest, e)
	}
	for i, e := range energies {
		out[i] = math.Exp(lowest - e)
	}
	return out
}

func parseFloats(flagName, s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("flag %s %q: want comma-separated numbers", flagName, s)
		}
		out = append(out, v)
	}
	return out, nil
}
