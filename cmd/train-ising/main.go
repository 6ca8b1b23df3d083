// Command train-ising reproduces the paper's Ising experiment (appendix,
// "Energy Discrepancy on the Discrete Space {0,1}^d", after Grathwohl et
// al. 2021): it draws samples of a periodic-lattice Ising model with
// couplings J = σ·A by Gibbs sampling, learns J from them with the
// Bernoulli energy discrepancy and with contrastive divergence (persistent
// Gibbs chains), and writes into -out:
//
//   - rmse.csv: the RMSE of the learned J against the truth, by method,
//     step and elapsed seconds;
//   - rmse.png and rmse-time.png: those curves over steps and over time;
//   - couplings.png: the true J beside each method's learned J (one
//     colour scale; the separating columns are grey).
//
// Usage:
//
//	go run ./cmd/train-ising [-side 5] [-sigma 0.2] [-l1 0.001] [-steps 3000] [-out runs/ising]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/ising"
	"github.com/edlebm/edlebm/discrete"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

type options struct {
	side                         int
	sigma, lr, epsilon, w, l1    float64
	n, dataSweeps, steps, batch  int
	m, cdSweeps, evalEvery, seed int
	methods, backend, out        string
}

func main() {
	var o options
	flag.IntVar(&o.side, "side", 5, "lattice side: the model has side² spins (the paper's D = 25 and 100: 5 and 10)")
	flag.Float64Var(&o.sigma, "sigma", 0.2, "coupling strength σ of J = σ·A (negative: antiferromagnetic)")
	flag.IntVar(&o.n, "n", 2000, "training samples")
	flag.IntVar(&o.dataSweeps, "data-sweeps", 500, "Gibbs sweeps of each training sample's chain")
	flag.IntVar(&o.steps, "steps", 3000, "training steps per method")
	flag.IntVar(&o.batch, "batch", 100, "batch size (and CD's number of persistent chains)")
	flag.Float64Var(&o.lr, "lr", 3e-3, "Adam's learning rate")
	flag.Float64Var(&o.epsilon, "ed-epsilon", 0.1, "ED: bit-flip probability ε")
	flag.IntVar(&o.m, "ed-m", 32, "ED: negative samples per example")
	flag.Float64Var(&o.w, "ed-w", 1, "ED: stabiliser w")
	flag.Float64Var(&o.l1, "l1", 0.001, "L1 penalty weight on J, for both methods (0: none)")
	flag.IntVar(&o.cdSweeps, "cd-sweeps", 1, "CD: Gibbs sweeps of the persistent chains per step")
	flag.IntVar(&o.evalEvery, "eval-every", 50, "steps between RMSE measurements")
	flag.IntVar(&o.seed, "seed", 1, "random seed (data and training)")
	flag.StringVar(&o.methods, "methods", "ed,cd", "methods to train, comma-separated: ed, cd")
	flag.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	flag.StringVar(&o.out, "out", "runs/ising", "output folder")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "train-ising:", err)
		os.Exit(1)
	}
}

// configs returns each method's setting, checked.
func (o options) configs() ([]discrete.IsingConfig, error) {
	if err := flagcheck.Check(
		flagcheck.Rule{Flag: "side", Value: o.side, OK: o.side >= 3, Want: "≥ 3"},
		flagcheck.Rule{Flag: "sigma", Value: o.sigma, OK: !math.IsNaN(o.sigma) && !math.IsInf(o.sigma, 0), Want: "a finite number"},
		flagcheck.Rule{Flag: "n", Value: o.n, OK: o.n >= o.batch, Want: fmt.Sprintf("≥ -batch %d", o.batch)},
		flagcheck.Rule{Flag: "data-sweeps", Value: o.dataSweeps, OK: o.dataSweeps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "steps", Value: o.steps, OK: o.steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "batch", Value: o.batch, OK: o.batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "eval-every", Value: o.evalEvery, OK: o.evalEvery >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "lr", Value: o.lr, OK: o.lr > 0 && !math.IsInf(o.lr, 1), Want: "a finite number > 0"},
		flagcheck.Rule{Flag: "ed-epsilon", Value: o.epsilon, OK: o.epsilon > 0 && o.epsilon < 1, Want: "a flip probability in (0, 1)"},
		flagcheck.Rule{Flag: "ed-m", Value: o.m, OK: o.m >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "ed-w", Value: o.w, OK: o.w >= 0 && !math.IsInf(o.w, 1), Want: "a finite number ≥ 0"},
		flagcheck.Rule{Flag: "cd-sweeps", Value: o.cdSweeps, OK: o.cdSweeps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "l1", Value: o.l1, OK: o.l1 >= 0 && !math.IsInf(o.l1, 1), Want: "a finite number ≥ 0"},
	); err != nil {
		return nil, err
	}
	var cfgs []discrete.IsingConfig
	for _, method := range strings.Split(o.methods, ",") {
		cfg := discrete.DefaultIsingConfig(strings.TrimSpace(method))
		cfg.LearningRate, cfg.CDSweeps, cfg.L1 = o.lr, o.cdSweeps, o.l1
		cfg.ED.Epsilon, cfg.ED.M, cfg.ED.W = o.epsilon, o.m, o.w
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("flag -methods %s: %w", o.methods, err)
		}
		cfgs = append(cfgs, cfg)
	}
	return cfgs, nil
}

func run(o options) error {
	cfgs, err := o.configs()
	if err != nil {
		return err
	}
	truth, err := ising.Lattice(o.side, o.sigma)
	if err != nil {
		return fmt.Errorf("flag -side: %w", err)
	}
	b, err := backend.OpenForCommand(o.backend)
	if err != nil {
		return err
	}
	defer b.Finalize()
	writer, err := training.Folder{Dir: o.out}.Claim()
	if err != nil {
		return fmt.Errorf("flag -out: %w", err)
	}
	defer writer.Release()
	fmt.Printf("sampling %d states of the %d×%d lattice (σ = %g), %d Gibbs sweeps each\n", o.n, o.side, o.side, o.sigma, o.dataSweeps)
	spins, err := truth.Sample(o.n, o.dataSweeps, uint64(o.seed))
	if err != nil {
		return err
	}
	bits := ising.Bits(spins)
	d := truth.D

	var rows [][]float64
	var byStep, byTime []plots.Series
	panels := [][]float64{truth.J}
	for mi, cfg := range cfgs {
		model, err := discrete.NewIsingModel(b, d, cfg, int64(o.seed))
		if err != nil {
			return err
		}
		curve := plots.Series{Name: cfg.Method}
		timed := plots.Series{Name: cfg.Method}
		var elapsed time.Duration
		batches := o.n / o.batch
		for step := 1; step <= o.steps; step++ {
			k := (step - 1) % batches
			x := tensors.FromFlatDataAndDimensions(append([]float32{}, bits[k*o.batch*d:(k+1)*o.batch*d]...), o.batch, d)
			start := time.Now()
			_, err := model.TrainStep(x)
			elapsed += time.Since(start)
			x.FinalizeAll()
			if err != nil {
				return fmt.Errorf("%s: %w", cfg.Method, err)
			}
			if step%o.evalEvery == 0 || step == o.steps {
				j, err := model.Couplings()
				if err != nil {
					return err
				}
				rmse := discrete.RMSE(j, truth.J)
				rows = append(rows, []float64{float64(mi), float64(step), elapsed.Seconds(), rmse})
				curve.X, curve.Y = append(curve.X, float64(step)), append(curve.Y, rmse)
				timed.X, timed.Y = append(timed.X, elapsed.Seconds()), append(timed.Y, rmse)
				fmt.Printf("\r%s: step %d/%d, RMSE %.4f", cfg.Method, step, o.steps, rmse)
			}
		}
		fmt.Printf(" (%.1f s of training)\n", elapsed.Seconds())
		j, err := model.Couplings()
		if err != nil {
			return err
		}
		panels = append(panels, j)
		byStep, byTime = append(byStep, curve), append(byTime, timed)
	}
	return writeOutputs(o, cfgs, rows, byStep, byTime, panels, d)
}

// writeOutputs writes the table, the curves and the couplings picture.
func writeOutputs(o options, cfgs []discrete.IsingConfig, rows [][]float64, byStep, byTime []plots.Series, panels [][]float64, d int) error {
	methods := make([]string, len(cfgs))
	for i, c := range cfgs {
		methods[i] = c.Method
	}
	header := []string{"method (" + strings.Join(methods, "=0,") + "=" + fmt.Sprint(len(methods)-1) + ")", "step", "seconds", "rmse"}
	if err := plots.WriteCSV(filepath.Join(o.out, "rmse.csv"), header, rows); err != nil {
		return err
	}
	title := fmt.Sprintf("Ising %d×%d, σ = %g: RMSE of the learned J", o.side, o.side, o.sigma)
	if err := plots.WriteLinePlot(filepath.Join(o.out, "rmse.png"), plots.LinePlot{Title: title, XLabel: "step", YLabel: "RMSE", LogY: true, Series: byStep}); err != nil {
		return err
	}
	if err := plots.WriteLinePlot(filepath.Join(o.out, "rmse-time.png"), plots.LinePlot{Title: title, XLabel: "training seconds", YLabel: "RMSE", LogY: true, Series: byTime}); err != nil {
		return err
	}
	// Truth, then each method, side by side with a grey column between.
	cols := len(panels)*(d+1) - 1
	picture := make([]float64, d*cols)
	for r := range d {
		for p, panel := range panels {
			for c := range d {
				picture[r*cols+p*(d+1)+c] = panel[r*d+c]
			}
			if p < len(panels)-1 {
				picture[r*cols+p*(d+1)+d] = math.NaN()
			}
		}
	}
	lo, hi := -math.Abs(o.sigma), math.Abs(o.sigma)
	if lo == hi {
		lo, hi = -1, 1
	}
	if err := plots.WriteHeatmap(filepath.Join(o.out, "couplings.png"), picture, d, cols,
		plots.HeatmapOptions{Scale: max(1, 240/d), Min: lo, Max: hi, RowZeroAtTop: true}); err != nil {
		return err
	}
	fmt.Printf("wrote rmse.csv, rmse.png, rmse-time.png and couplings.png (truth, then %s) in %s\n", strings.Join(methods, ", "), o.out)
	return nil
}
