// Command toy-studies runs the paper's two one-dimensional studies of energy
// discrepancy and writes their curves as CSV and PNG:
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
//     and the log-density MSE of each against the exact density.
//
//     go run ./cmd/toy-studies -study mixture
//     go run ./cmd/toy-studies -study w
//     go run ./cmd/toy-studies -study dsm
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
	"github.com/edlebm/edlebm/plots"
)

func main() {
	study := flag.String("study", "mixture", "study to run: mixture or w")
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
	flag.Parse()

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
	default:
		err = fmt.Errorf("flag -study %q: want mixture, w or dsm", *study)
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

// dsmStudy trains ED (t, M 4, w 1) and denoising score matching (noise
// variance t) on points of the toy set data for every t of tsFlag, and
// writes each run's log-density MSE against the exact density (dsm.csv,
// dsm.png; NaN where training diverged).
func dsmStudy(b backends.Backend, out string, seed uint64, data, tsFlag string, points, epochs int) error {
	ts, err := parseFloats("-dsm-t", tsFlag)
	if err != nil {
		return err
	}
	set, err := toy2d.New(data)
	if err != nil {
		return fmt.Errorf("flag -dsm-data: %w", err)
	}
	if _, exact := set.LogDensity(0, 0); !exact {
		return fmt.Errorf("flag -dsm-data %s: no exact density to compare with", data)
	}
	const batch, evalN = 128, 5000
	if points < batch {
		return fmt.Errorf("flag -dsm-points %d: want at least one batch of %d", points, batch)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	train := set.Sample(rng, points)
	isPoints, testPoints := set.Sample(rng, evalN), set.Sample(rng, evalN)
	logp := func(pts []float32) []float64 {
		out := make([]float64, len(pts)/2)
		for i := range out {
			out[i], _ = set.LogDensity(float64(pts[2*i]), float64(pts[2*i+1]))
		}
		return out
	}
	logpIS, logpTest := logp(isPoints), logp(testPoints)
	eval := append(append([]float32{}, isPoints...), testPoints...)
	methods := []string{"ed", "dsm"}
	series := make([]plots.Series, len(methods))
	var rows [][]float64
	for _, t := range ts {
		row := []float64{t}
		for i, method := range methods {
			cfg := density.DefaultConfig(method)
			cfg.ED.T, cfg.DSMVariance = t, t
			if method != "dsm" {
				cfg.DSMVariance = 0
			}
			_, energies, err := density.TrainOnPoints(b, cfg, int64(seed), train, 2, batch, epochs, eval)
			mse := math.NaN()
			switch {
			case errors.Is(err, density.ErrNonFinite):
				fmt.Printf("%s, t = %g: %v\n", method, t, err)
			case err != nil:
				return err
			default:
				mse = density.LogDensityMSEFromEnergies(energies[:evalN], logpIS, energies[evalN:], logpTest)
			}
			fmt.Printf("%s, t = %g: log-density MSE %.4f\n", method, t, mse)
			row = append(row, mse)
			series[i].Name = method
			series[i].X, series[i].Y = append(series[i].X, t), append(series[i].Y, mse)
		}
		rows = append(rows, row)
	}
	if err := plots.WriteCSV(filepath.Join(out, "dsm.csv"), []string{"t", "ed_mse", "dsm_mse"}, rows); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(out, "dsm.png"), plots.LinePlot{
		Title:  fmt.Sprintf("%s: log-density MSE against the noise scale t (%d epochs of %d points)", data, epochs, points),
		XLabel: "t", YLabel: "log-density MSE", LogY: true, Series: series,
	})
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
