package toystudies

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/plots"
)

// initRun is one training run of the initialisation comparison: its
// log-density MSE over steps (the last point is the run's result).
type initRun struct {
	impl, init, data, method string
	seed                     int
	steps, mse               []float64
}

// label names the run in a plot's legend.
func (r initRun) label() string {
	name := map[string]string{"go": "Go", "pytorch": "PyTorch"}[r.impl]
	init := map[string]string{"pytorch": "authors' init", "xavier": "Xavier"}[r.init]
	return fmt.Sprintf("%s, %s, seed %d", name, init, r.seed)
}

// InitReport reads the runs that scripts/toy-init-compare.sh keeps under
// dir — Go's go/INIT-sSEED/DATA/METHOD/mse.csv and PyTorch's
// pytorch/DATA-INIT-sSEED.jsonl (one JSON line a method, with the MSE curve
// when toy_bench.py recorded one) — and writes dir/toy-init.md, the last
// MSE of every run by seed, and dir/curves-DATA-METHOD.png, every run's
// MSE over the steps on a log scale.
func InitReport(dir string) error {
	runs, err := readGoInitRuns(dir)
	if err != nil {
		return err
	}
	pyRuns, err := readPyTorchInitRuns(dir)
	if err != nil {
		return err
	}
	runs = append(runs, pyRuns...)
	if len(runs) == 0 {
		return fmt.Errorf("%s: no runs (want go/INIT-sSEED/DATA/METHOD/mse.csv or pytorch/*.jsonl)", dir)
	}
	slices.SortFunc(runs, func(a, b initRun) int {
		return cmp.Or(strings.Compare(a.data, b.data), strings.Compare(a.method, b.method),
			strings.Compare(a.impl, b.impl), strings.Compare(a.init, b.init), cmp.Compare(a.seed, b.seed))
	})
	if err := writeInitTable(filepath.Join(dir, "toy-init.md"), runs); err != nil {
		return err
	}
	for _, data := range uniqueValues(runs, func(r initRun) string { return r.data }) {
		for _, method := range initMethods {
			var series []plots.Series
			for _, r := range runs {
				if r.data == data && r.method == method {
					series = append(series, plots.Series{Name: r.label(), X: r.steps, Y: r.mse})
				}
			}
			if len(series) == 0 {
				continue
			}
			err := plots.WriteLinePlot(filepath.Join(dir, fmt.Sprintf("curves-%s-%s.png", data, method)), plots.LinePlot{
				Title:  fmt.Sprintf("%s, %s: log-density MSE of the EMA model", data, strings.ToUpper(method)),
				XLabel: "step", YLabel: "log-density MSE", LogY: true, Series: series,
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// initMethods are the methods of the comparison, in the table's order.
var initMethods = []string{"ed", "sm", "cd"}

// readGoInitRuns reads every dir/go/INIT-sSEED/DATA/METHOD/mse.csv.
func readGoInitRuns(dir string) ([]initRun, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "go", "*-s*", "*", "*", "mse.csv"))
	if err != nil {
		return nil, err
	}
	var runs []initRun
	for _, path := range paths {
		parts := strings.Split(filepath.ToSlash(path), "/")
		initSeed, data, method := parts[len(parts)-4], parts[len(parts)-3], parts[len(parts)-2]
		cut := strings.LastIndex(initSeed, "-s")
		seed, err := strconv.Atoi(initSeed[cut+2:])
		if err != nil {
			return nil, fmt.Errorf("%s: folder %q: want INIT-sSEED with a whole-number seed", path, initSeed)
		}
		steps, mse, err := readMSECurve(path)
		if err != nil {
			return nil, err
		}
		runs = append(runs, initRun{impl: "go", init: initSeed[:cut], data: data, method: method, seed: seed, steps: steps, mse: mse})
	}
	return runs, nil
}

// readMSECurve reads train-toy's mse.csv: a step,log_density_mse header and
// at least one row.
func readMSECurve(path string) (steps, mse []float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(records) < 2 || strings.Join(records[0], ",") != "step,log_density_mse" {
		return nil, nil, fmt.Errorf("%s: want a step,log_density_mse header and at least one row", path)
	}
	for i, rec := range records[1:] {
		s, err1 := strconv.ParseFloat(rec[0], 64)
		v, err2 := strconv.ParseFloat(rec[1], 64)
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("%s: line %d: %q: want two numbers", path, i+2, strings.Join(rec, ","))
		}
		steps, mse = append(steps, s), append(mse, v)
	}
	return steps, mse, nil
}

// readPyTorchInitRuns reads every dir/pytorch/*.jsonl line written by
// toy_bench.py --check --json. A line without a curve (written before the
// script recorded one) counts as its last step alone.
func readPyTorchInitRuns(dir string) ([]initRun, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "pytorch", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var runs []initRun
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		lines, err := readPyTorchLines(f, path)
		f.Close()
		if err != nil {
			return nil, err
		}
		runs = append(runs, lines...)
	}
	return runs, nil
}

func readPyTorchLines(r io.Reader, path string) ([]initRun, error) {
	var runs []initRun
	scanner := bufio.NewScanner(r)
	for n := 1; scanner.Scan(); n++ {
		var line struct {
			Data, Init, Method string
			Seed, Steps        int
			MSE                *float64     `json:"logdens_mse_ema"`
			Curve              [][2]float64 `json:"curve"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		if line.Data == "" || line.Method == "" || line.MSE == nil {
			return nil, fmt.Errorf("%s: line %d: want data, method and logdens_mse_ema", path, n)
		}
		run := initRun{impl: "pytorch", init: line.Init, data: line.Data, method: line.Method, seed: line.Seed}
		for _, p := range line.Curve {
			run.steps, run.mse = append(run.steps, p[0]), append(run.mse, p[1])
		}
		if len(run.steps) == 0 || run.steps[len(run.steps)-1] != float64(line.Steps) {
			run.steps, run.mse = append(run.steps, float64(line.Steps)), append(run.mse, *line.MSE)
		}
		runs = append(runs, run)
	}
	return runs, scanner.Err()
}

// writeInitTable writes the Markdown table of the runs' last MSE: a row per
// data set and method, a column per implementation and initialisation, a
// value per seed (and their mean when there are several).
func writeInitTable(path string, runs []initRun) error {
	columns := []struct{ impl, init, title string }{
		{"go", "pytorch", "Go, PyTorch init"},
		{"go", "xavier", "Go, Xavier init"},
		{"pytorch", "pytorch", "PyTorch, PyTorch init"},
		{"pytorch", "xavier", "PyTorch, Xavier init"},
	}
	steps := runs[0].steps[len(runs[0].steps)-1]
	return atomicfile.Write(path, func(w io.Writer) error {
		fmt.Fprintf(w, "# Toy log-density MSE after %g steps: PyTorch's nn.Linear init vs Xavier\n\n", steps)
		fmt.Fprintf(w, "EMA model, importance-sampled log Z, 5,000 samples; one value per seed (seeds in order), then their mean.\n"+
			"Made by `go run ./cmd/toy-studies -study init-report -init-dir DIR`; curves in curves-DATA-METHOD.png.\n\n")
		fmt.Fprint(w, "| data | method |")
		for _, c := range columns {
			fmt.Fprintf(w, " %s |", c.title)
		}
		fmt.Fprint(w, "\n|---|---|"+strings.Repeat("---|", len(columns))+"\n")
		for _, data := range uniqueValues(runs, func(r initRun) string { return r.data }) {
			for _, method := range initMethods {
				fmt.Fprintf(w, "| %s | %s |", data, method)
				for _, c := range columns {
					var last []float64
					for _, r := range runs {
						if r.data == data && r.method == method && r.impl == c.impl && r.init == c.init {
							last = append(last, r.mse[len(r.mse)-1])
						}
					}
					fmt.Fprintf(w, " %s |", seedsCell(last))
				}
				fmt.Fprintln(w)
			}
		}
		return nil
	})
}

// seedsCell formats one value per seed, "a / b (mean m)", or "–" for none.
func seedsCell(v []float64) string {
	if len(v) == 0 {
		return "–"
	}
	parts := make([]string, len(v))
	sum := 0.0
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'g', 3, 64)
		sum += x
	}
	cell := strings.Join(parts, " / ")
	if len(v) > 1 {
		cell += fmt.Sprintf(" (mean %.3g)", sum/float64(len(v)))
	}
	return cell
}

// uniqueValues returns key(r) for the runs, sorted, each once.
func uniqueValues(runs []initRun, key func(initRun) string) []string {
	var values []string
	for _, r := range runs {
		values = append(values, key(r))
	}
	slices.Sort(values)
	return slices.Compact(values)
}
