// Command train-toy reproduces the paper's density-estimation experiments:
// it trains the energy MLP on a 2-D toy data set with energy discrepancy,
// score matching and/or contrastive divergence, and writes, per method, the
// learned energy and density as heat maps, Langevin samples, and — for data
// with an exact density — the log-density MSE over training as CSV and plot.
//
//	go run ./cmd/train-toy -data 25gaussians -methods ed,sm,cd -steps 50000
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
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/ui/commandline"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/cmd/internal/flagcheck"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/settings"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

type options struct {
	// stop ends the run after the step it receives in, saved
	// (training.StopOn); nil: never.
	stop                                          <-chan os.Signal
	data, methods, out, backend, set              string
	steps, batch, evalEvery, evalN, grid, samples int
	seed                                          int64
	extent                                        float64
	cdEps, sampleEps                              float64
	sampleSteps                                   int
	// model applies the short flags of density's settings table (-ed-t,
	// -hidden, -lr, …) that were given.
	model func(*density.Config) error
	// cdEpsGiven tells whether -cd-eps was given.
	cdEpsGiven bool
}

// parseFlags parses args and checks every setting, naming the flag at
// fault in any error.
func parseFlags(args []string) (options, error) {
	o, fs, err := parseOnly(args)
	if err != nil {
		return o, err
	}
	if _, err := o.configs(); err != nil {
		return o, flagcheck.Blame(fs, err, []string{"methods"}, func(args []string) error {
			alone, _, err := parseOnly(args)
			if err == nil {
				_, err = alone.configs()
			}
			return err
		})
	}
	return o, flagcheck.Check(
		flagcheck.Rule{Flag: "steps", Value: o.steps, OK: o.steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "batch", Value: o.batch, OK: o.batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "eval-every", Value: o.evalEvery, OK: o.evalEvery >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "eval-n", Value: o.evalN, OK: o.evalN >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "samples", Value: o.samples, OK: o.samples >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "grid", Value: o.grid, OK: o.grid >= 2, Want: "≥ 2"},
	)
}

// parseOnly parses args into options without checking them.
func parseOnly(args []string) (options, *flag.FlagSet, error) {
	var o options
	def := density.DefaultConfig("ed")
	fs := flag.NewFlagSet("train-toy", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "25gaussians", "2-D data set: "+strings.Join(toy2d.Names(), ", "))
	fs.StringVar(&o.methods, "methods", "ed,sm,cd", "comma-separated training methods: ed, sm, cd, dsm")
	fs.StringVar(&o.out, "out", "out/toy", "output directory (a folder per data set and method is made in it)")
	fs.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.steps, "steps", 50000, "training steps")
	fs.IntVar(&o.batch, "batch", 128, "fresh data samples per step")
	fs.Int64Var(&o.seed, "seed", 1, "random seed (initialisation, data and noise)")
	o.model = density.DeclareFlags(fs, density.DefaultConfig("dsm")) // dsm's, to show -dsm-t's default
	fs.Float64Var(&o.cdEps, "cd-eps", def.CD.Langevin.StepSize*def.CD.Langevin.StepSize, "CD: Langevin step ε (x += ε/2 ∇log p + √ε ξ; the setting toy_cd_step_size is √ε)")
	fs.StringVar(&o.set, "set", "", "GoMLX context settings of each method's model, applied after the flags: \"toy_ed_t=0.5;learning_rate=3e-4\" or \"file:settings.txt\"; the settings: "+
		strings.Join(density.SettingNames(), ", "))
	fs.IntVar(&o.evalEvery, "eval-every", 1000, "steps between log-density MSE evaluations")
	fs.IntVar(&o.evalN, "eval-n", 5000, "samples for the importance-sampled normaliser and for the MSE")
	fs.IntVar(&o.grid, "grid", 200, "heat-map resolution (points per axis)")
	fs.Float64Var(&o.extent, "extent", 4.5, "heat maps and samples cover [-extent, extent]²")
	fs.IntVar(&o.samples, "samples", 5000, "Langevin samples drawn for the samples picture")
	fs.IntVar(&o.sampleSteps, "sample-steps", 100, "Langevin steps for the samples picture")
	// Step size 0.1 in the losses.LangevinConfig sense (noise std 0.1): a
	// larger ε's noise is wider than the 25 Gaussians' modes and smears them.
	fs.Float64Var(&o.sampleEps, "sample-eps", 0.01, "Langevin step ε for the samples picture (x += ε/2 ∇log p + √ε ξ)")
	if err := fs.Parse(args); err != nil {
		return o, fs, err
	}
	if fs.NArg() > 0 {
		return o, fs, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { o.cdEpsGiven = o.cdEpsGiven || f.Name == "cd-eps" })
	return o, fs, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Fatalf("train-toy: %v", err)
	}
	o.stop = training.StopSignals()
	if err := run(o); err != nil && !errors.Is(err, training.ErrStopped) {
		log.Fatalf("train-toy: %v", err)
	}
}

func run(o options) error {
	set, err := toy2d.New(o.data)
	if err != nil {
		return fmt.Errorf("flag -data: %w", err)
	}
	configs, err := o.configs()
	if err != nil {
		return err
	}
	b, err := backend.OpenForCommand(o.backend)
	if err != nil {
		return err
	}
	defer b.Finalize()

	dir := filepath.Join(o.out, o.data)
	writer, err := training.Folder{Dir: dir}.Claim()
	if err != nil {
		return fmt.Errorf("flag -out: %w", err)
	}
	defer writer.Release()
	curves := map[string][]point{}
	for _, cfg := range configs {
		if changes := cfg.Changes(density.DefaultConfig(cfg.Method)); len(changes) > 0 {
			fmt.Printf("%s: settings changed from the paper's: %s\n", cfg.Method, strings.Join(changes, ", "))
		}
		curve, err := trainOne(b, set, cfg, o, filepath.Join(dir, cfg.Method))
		if err != nil {
			return fmt.Errorf("method %s: %w", cfg.Method, err)
		}
		curves[cfg.Method] = curve
	}
	if _, exact := set.LogDensity(0, 0); exact {
		return writeCurves(dir, o.data, configs, curves)
	}
	return nil
}

// configs builds one validated config per requested method: the
// method's defaults, the short flags given, then -set.
func (o options) configs() ([]density.Config, error) {
	var out []density.Config
	for _, method := range strings.Split(o.methods, ",") {
		method = strings.TrimSpace(method)
		if slices.Contains(density.BinaryMethods, method) {
			return nil, fmt.Errorf("method %s is for binary data, not the points of the plane: want one of %v", method, density.Methods)
		}
		cfg := density.DefaultConfig(method)
		if err := o.model(&cfg); err != nil {
			return nil, err
		}
		if o.cdEpsGiven {
			cfg.CD.Langevin.StepSize = math.Sqrt(o.cdEps)
		}
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("method %s: %w", cfg.Method, err)
		}
		method := cfg.Method
		cfg, err := cfg.WithSettings(o.set)
		if err != nil {
			return nil, fmt.Errorf("flag -set: method %s: %w", method, err)
		}
		if cfg.Method != method {
			return nil, fmt.Errorf("flag -set: %s=%s: choose methods with -methods", density.ParamPrefix+"method", cfg.Method)
		}
		out = append(out, cfg)
	}
	return out, nil
}

type point struct {
	step int
	mse  float64
}

// trainOne trains one method and writes its pictures; it returns the
// log-density MSE curve (empty for data without an exact density).
func trainOne(b backends.Backend, set *toy2d.Set, cfg density.Config, o options, dir string) ([]point, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	model, err := density.New(b, cfg, o.seed)
	if err != nil {
		return nil, err
	}
	ds, err := toy2d.NewDataset(set, o.batch, uint64(o.seed))
	if err != nil {
		return nil, err
	}
	curve, err := resume(model, ds, o, dir)
	if err != nil {
		return nil, err
	}
	fmt.Printf("training %s on %s from step %d to %d → %s\n", cfg.Method, o.data, model.Step(), o.steps, dir)

	loop := model.NewLoop()
	commandline.AttachProgressBar(loop)
	_, exact := set.LogDensity(0, 0)
	if exact {
		logp := func(p []float32) float64 {
			v, _ := set.LogDensity(float64(p[0]), float64(p[1]))
			return v
		}
		train.EveryNSteps(loop, o.evalEvery, "log-density MSE", 0, func(loop *train.Loop, _ []*tensors.Tensor) error {
			// Evaluation samples depend on the step only, so a resumed run
			// evaluates exactly as an uninterrupted one.
			evalRNG := rand.New(rand.NewPCG(uint64(o.seed), uint64(model.Step())))
			mse, err := model.LogDensityMSE(set.Sample(evalRNG, o.evalN), set.Sample(evalRNG, o.evalN), 2, logp)
			if err != nil {
				return err
			}
			curve = append(curve, point{int(model.Step()), mse})
			return writeCurve(filepath.Join(dir, "mse.csv"), curve)
		})
	}
	// Checkpoint as often as the curve is extended, so a stopped run
	// resumes with both.
	train.EveryNSteps(loop, o.evalEvery, "checkpoint", 1, func(*train.Loop, []*tensors.Tensor) error {
		return model.Save(training.Folder{Dir: dir}.Checkpoints())
	})
	training.StopOn(loop, o.stop, func() error { return model.Save(training.Folder{Dir: dir}.Checkpoints()) })
	if _, err := loop.RunToGlobalStep(ds, o.steps); err != nil {
		return curve, err
	}
	if err := writePictures(model, o, dir); err != nil {
		return curve, err
	}
	if exact {
		fmt.Printf("%s: final log-density MSE %.4f\n", cfg.Method, curve[len(curve)-1].mse)
	}
	return curve, nil
}

// writePictures draws the learned energy, its density and Langevin samples.
func writePictures(model *density.Model, o options, dir string) error {
	grid := density.Grid{Extent: [4]float64{-o.extent, o.extent, -o.extent, o.extent}, Size: o.grid}
	energy, dens, err := model.EnergyAndDensity(grid)
	if err != nil {
		return err
	}
	opts := plots.HeatmapOptions{Scale: max(1, 400/o.grid)}
	if err := plots.WriteHeatmap(filepath.Join(dir, "energy.png"), energy, o.grid, o.grid, opts); err != nil {
		return err
	}
	if err := plots.WriteHeatmap(filepath.Join(dir, "density.png"), dens, o.grid, o.grid, opts); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(o.seed), 0x5a3))
	init := make([]float32, 2*o.samples)
	for i := range init {
		init[i] = float32((2*rng.Float64() - 1) * o.extent)
	}
	samples, err := model.Sample(init, 2, losses.LangevinConfig{StepSize: math.Sqrt(o.sampleEps), Steps: o.sampleSteps})
	if err != nil {
		return err
	}
	return plots.WriteScatterDensity(filepath.Join(dir, "samples.png"), samples, grid.Extent, 100, 4)
}

// runSettings are a train-toy run's settings beyond its model's: its
// checkpoints store them beside the model's (as context parameters), so
// that a resumed run is checked to be the same run.
type runSettings struct {
	data  string
	seed  int64
	batch int
}

func (r *runSettings) params() []settings.Param {
	return []settings.Param{
		{Key: density.ParamPrefix + "data", Ptr: &r.data},
		{Key: density.ParamPrefix + "seed", Ptr: &r.seed},
		{Key: density.ParamPrefix + "batch", Ptr: &r.batch},
	}
}

// resume continues a stopped run found in dir: it restores the model
// (which checks the model's settings), checks the run's, moves the data
// stream to the model's step and returns the log-density curve so far. A
// new run stores its settings in the model's context for its checkpoints.
func resume(model *density.Model, ds *toy2d.Dataset, o options, dir string) ([]point, error) {
	run := runSettings{o.data, o.seed, o.batch}
	ckptDir := training.Folder{Dir: dir}.Checkpoints()
	if _, err := checkpoint.Latest(ckptDir); errors.Is(err, os.ErrNotExist) {
		settings.Set(model.Context(), run.params())
		return nil, nil
	}
	if err := model.Restore(ckptDir); err != nil {
		return nil, fmt.Errorf("resuming: %w; use another -out or the same flags", err)
	}
	var saved runSettings
	if err := settings.Get(model.Context(), saved.params()); err != nil {
		return nil, fmt.Errorf("resuming from %s: %w", ckptDir, err)
	}
	if diff := settings.Changes(run.params(), saved.params()); len(diff) > 0 {
		return nil, fmt.Errorf("%s holds a run with other settings (this one has %s); use another -out or the same flags", ckptDir, strings.Join(diff, ", "))
	}
	if err := ds.Seek(int(model.Step())); err != nil {
		return nil, err
	}
	return readCurve(filepath.Join(dir, "mse.csv"), int(model.Step()))
}

// readCurve reads a curve written by writeCurve, up to step.
func readCurve(path string, upTo int) ([]point, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var curve []point
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		var p point
		if _, err := fmt.Sscanf(line, "%d,%g", &p.step, &p.mse); err != nil {
			return nil, fmt.Errorf("%s line %d: %q: %w", path, i+2, line, err)
		}
		if p.step <= upTo {
			curve = append(curve, p)
		}
	}
	return curve, nil
}

// writeCurve writes one method's log-density MSE curve as CSV.
func writeCurve(path string, curve []point) error {
	rows := make([][]float64, len(curve))
	for i, p := range curve {
		rows[i] = []float64{float64(p.step), p.mse}
	}
	return plots.WriteCSV(path, []string{"step", "log_density_mse"}, rows)
}

// writeCurves writes all methods' log-density MSE curves side by side.
func writeCurves(dir, data string, configs []density.Config, curves map[string][]point) error {
	header := []string{"step"}
	var series []plots.Series
	for _, cfg := range configs {
		header = append(header, cfg.Method+"_mse")
		s := plots.Series{Name: strings.ToUpper(cfg.Method)}
		for _, p := range curves[cfg.Method] {
			s.X, s.Y = append(s.X, float64(p.step)), append(s.Y, p.mse)
		}
		series = append(series, s)
	}
	rows := make([][]float64, len(series[0].X))
	for i := range rows {
		rows[i] = []float64{series[0].X[i]}
		for _, s := range series {
			rows[i] = append(rows[i], s.Y[i])
		}
	}
	if err := plots.WriteCSV(filepath.Join(dir, "mse.csv"), header, rows); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(dir, "mse.png"), plots.LinePlot{
		Title: "Log-density MSE on " + data, XLabel: "training step", YLabel: "MSE", LogY: true, Series: series,
	})
}
