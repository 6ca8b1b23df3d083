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
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/toystudies"
)

func main() {
	mix, stab, dsm := toystudies.DefaultMixtureOptions(), toystudies.DefaultStabiliserOptions(), toystudies.DefaultDSMOptions()
	grid, div := toystudies.DefaultGridOptions("tm"), toystudies.DefaultDivergenceOptions()
	study := flag.String("study", "mixture", "study to run: mixture, w, dsm, tm, wm, divergence or init-report")
	out := flag.String("out", "out/studies", "output directory")
	backendFlag := flag.String("backend", "auto", backend.FlagUsage)
	seed := flag.Uint64("seed", 1, "random seed")
	flag.IntVar(&mix.Points, "n", mix.Points, "mixture: data points for the loss curves")
	curveTs := floatsFlag(flag.CommandLine, "curve-t", mix.CurveT, "mixture: values of t for the loss curves (M 32, w 1)")
	estTs := floatsFlag(flag.CommandLine, "est-t", mix.EstimationT, "mixture: values of t for the estimation study")
	estMs := intsFlag(flag.CommandLine, "est-m", mix.EstimationM, "mixture: values of M for the estimation study")
	flag.IntVar(&mix.Repetitions, "reps", mix.Repetitions, "mixture: repetitions of the estimation study")
	flag.IntVar(&mix.EstimationPoints, "est-n", mix.EstimationPoints, "mixture: data points per estimation repetition")
	ws := floatsFlag(flag.CommandLine, "w", stab.W, "w study: stabiliser values")
	flag.IntVar(&stab.Epochs, "epochs", stab.Epochs, "w study: epochs over 4,096 N(0,1) points (batch 128)")
	flag.Float64Var(&stab.LearningRate, "w-lr", stab.LearningRate, "w study: Adam learning rate")
	flag.StringVar(&dsm.Data, "dsm-data", dsm.Data, "dsm study: toy set, one with an exact density ("+strings.Join(toy2d.Names(), ", ")+")")
	dsmTs := floatsFlag(flag.CommandLine, "dsm-t", dsm.T, "dsm study: noise scales t (ED's perturbation and DSM's noise variance)")
	flag.IntVar(&dsm.Points, "dsm-points", dsm.Points, "dsm study: training points")
	flag.IntVar(&dsm.Epochs, "dsm-epochs", dsm.Epochs, "dsm study: epochs per run (batches of 128; 130 epochs of 20,000 points ≈ 20,000 steps: ED on 25gaussians needs ≈ 10,000 to settle)")
	flag.StringVar(&grid.Data, "grid-data", grid.Data, "tm and wm studies: toy set with an exact density")
	gridValues := flag.String("grid-values", "", fmt.Sprintf("tm study: values of t (default %s); wm study: values of w (default %s); divergence study: values of w (default %s)",
		join(grid.Values), join(toystudies.DefaultGridOptions("wm").Values), join(div.W)))
	gridMs := intsFlag(flag.CommandLine, "grid-m", grid.M, "tm, wm and divergence studies: values of M (the paper's grids add 128, whose cells take ≈ 17 minutes of a core each: ≈ 1½ hours a grid instead of ≈ ½; scripts/toy-grids.sh runs them)")
	flag.IntVar(&grid.Points, "grid-points", grid.Points, "tm and wm studies: training points")
	flag.IntVar(&grid.Epochs, "grid-epochs", grid.Epochs, "tm and wm studies: epochs per cell (batches of 128; 65 of 20,000 points ≈ 10,000 steps)")
	flag.IntVar(&div.Epochs, "div-epochs", div.Epochs, "divergence study: epochs per run (on -grid-data, -grid-points, -grid-m; 7 of 20,000 points ≈ 1,100 steps)")
	initDir := flag.String("init-dir", "docs/results/toy-init", "init-report: folder of scripts/toy-init-compare.sh's runs; the table and curves are written there")
	flag.Parse()

	if *study == "init-report" {
		if err := toystudies.InitReport(*initDir); err != nil {
			log.Fatalf("toy-studies: %v", err)
		}
		return
	}
	b, err := backend.OpenForCommand(*backendFlag)
	if err != nil {
		log.Fatalf("toy-studies: %v", err)
	}
	defer b.Finalize()
	s := toystudies.Study{Backend: b, Dir: *out, Seed: *seed, Log: os.Stdout}
	mix.CurveT, mix.EstimationT, mix.EstimationM, stab.W, dsm.T, grid.M = *curveTs, *estTs, *estMs, *ws, *dsmTs, *gridMs
	switch *study {
	case "mixture":
		err = s.Mixture(mix)
	case "w":
		err = s.Stabiliser(stab)
	case "dsm":
		err = s.DSM(dsm)
	case "tm", "wm":
		grid.Kind, grid.Values = *study, toystudies.DefaultGridOptions(*study).Values
		if *gridValues != "" {
			grid.Values, err = gridValuesFlag(*gridValues)
		}
		if err == nil {
			err = s.Grid(grid)
		}
	case "divergence":
		div.ToySet.Data, div.ToySet.Points, div.M = grid.Data, grid.Points, grid.M
		if *gridValues != "" {
			div.W, err = gridValuesFlag(*gridValues)
		}
		if err == nil {
			err = s.Divergence(div)
		}
	default:
		err = fmt.Errorf("flag -study %q: want mixture, w, dsm, tm, wm, divergence or init-report", *study)
	}
	if err != nil {
		log.Fatalf("toy-studies: %v", err)
	}
}

// floatsFlag defines on fs a flag of comma-separated numbers with the default
// def.
func floatsFlag(fs *flag.FlagSet, name string, def []float64, usage string) *[]float64 {
	v := &def
	fs.Func(name, fmt.Sprintf("%s (comma-separated; default %s)", usage, join(def)), func(text string) (err error) {
		*v, err = parseNumbers(text)
		return err
	})
	return v
}

// intsFlag defines on fs a flag of comma-separated whole numbers with the
// default def.
func intsFlag(fs *flag.FlagSet, name string, def []int, usage string) *[]int {
	v := &def
	fs.Func(name, fmt.Sprintf("%s (comma-separated; default %s)", usage, join(def)), func(text string) error {
		values, err := parseNumbers(text)
		if err != nil {
			return err
		}
		ints := make([]int, len(values))
		for i, x := range values {
			if ints[i] = int(x); float64(ints[i]) != x {
				return errors.New("want comma-separated whole numbers")
			}
		}
		*v = ints
		return nil
	})
	return v
}

// parseNumbers reads comma-separated numbers.
func parseNumbers(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, errors.New("want comma-separated numbers")
		}
		out = append(out, v)
	}
	return out, nil
}

// gridValuesFlag reads -grid-values, whose default depends on -study.
func gridValuesFlag(text string) ([]float64, error) {
	values, err := parseNumbers(text)
	if err != nil {
		return nil, fmt.Errorf("flag -grid-values %q: %w", text, err)
	}
	return values, nil
}

// join writes values as a flag takes them.
func join[T int | float64](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}
