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
//     colour scale; the separating columns are grey);
//   - METHOD/: each method's checkpoint and metrics log: a stopped run
//     (Ctrl-C) resumes.
//
// Usage:
//
//	go run ./cmd/train-ising [-side 5] [-sigma 0.2] [-l1 0.001] [-steps 3000] [-out runs/ising]
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/discrete"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/training"
)

type options struct {
	// stop ends the run after the step it receives in, saved
	// (training.Steps); nil: never.
	stop                         <-chan os.Signal
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
	o.stop = training.StopSignals()
	if err := run(o); err != nil && !errors.Is(err, training.ErrStopped) {
		fmt.Fprintln(os.Stderr, "train-ising:", err)
		os.Exit(1)
	}
}

// configs returns each method's setting, checked.
func (o options) configs() ([]discrete.IsingConfig, error) {
	if err := flagcheck.Check(
		flagcheck.Rule{Name: "side", Value: o.side, OK: o.side >= 3, Want: "≥ 3"},
		flagcheck.Rule{Name: "sigma", Value: o.sigma, OK: !math.IsNaN(o.sigma) && !math.IsInf(o.sigma, 0), Want: "a finite number"},
		flagcheck.Rule{Name: "n", Value: o.n, OK: o.n >= o.batch, Want: fmt.Sprintf("≥ -batch %d", o.batch)},
		flagcheck.Rule{Name: "data-sweeps", Value: o.dataSweeps, OK: o.dataSweeps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "steps", Value: o.steps, OK: o.steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "batch", Value: o.batch, OK: o.batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "eval-every", Value: o.evalEvery, OK: o.evalEvery >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "lr", Value: o.lr, OK: o.lr > 0 && !math.IsInf(o.lr, 1), Want: "a finite number > 0"},
		flagcheck.Rule{Name: "ed-epsilon", Value: o.epsilon, OK: o.epsilon > 0 && o.epsilon < 1, Want: "a flip probability in (0, 1)"},
		flagcheck.Rule{Name: "ed-m", Value: o.m, OK: o.m >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "ed-w", Value: o.w, OK: o.w >= 0 && !math.IsInf(o.w, 1), Want: "a finite number ≥ 0"},
		flagcheck.Rule{Name: "cd-sweeps", Value: o.cdSweeps, OK: o.cdSweeps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "l1", Value: o.l1, OK: o.l1 >= 0 && !math.IsInf(o.l1, 1), Want: "a finite number ≥ 0"},
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

// run trains the models of o (densityrun.Ising).
func run(o options) error {
	cfgs, err := o.configs()
	if err != nil {
		return err
	}
	return flagcheck.Flags{"Side": "side", "Out": "out"}.Explain(densityrun.Ising(densityrun.IsingOptions{Side: o.side, Sigma: o.sigma, N: o.n, DataSweeps: o.dataSweeps, Configs: cfgs,
		Out: o.out, Backend: o.backend, Steps: o.steps, Batch: o.batch, Seed: int64(o.seed), EvalEvery: o.evalEvery, Stop: o.stop}))
}
