package densityrun

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/settings"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// ToyOptions say what Toy trains: the paper's 2-D density-estimation
// experiment, as cmd/train-toy runs it.
type ToyOptions struct {
	// Data is the toy set's name (toy2d.Names).
	Data string
	// Configs are the models to train, one per method, each in its own
	// folder Out/Data/METHOD.
	Configs []density.Config
	// Out is the output folder; Backend the GoMLX backend
	// (backend.Resolve's syntax; "" for auto).
	Out, Backend string
	// Steps and Batch are each method's training steps and fresh samples
	// per step; Seed seeds everything.
	Steps, Batch int
	Seed         int64
	// EvalEvery is how often, in steps, the log-density MSE is measured
	// (on EvalN samples) and the model checkpointed.
	EvalEvery, EvalN int
	// Grid is the heat maps' points per axis over [−Extent, Extent]².
	Grid   int
	Extent float64
	// Samples Langevin samples of SampleSteps steps of ε = SampleEps
	// (x += ε/2 ∇log p + √ε ξ) are drawn for samples.png.
	Samples, SampleSteps int
	SampleEps            float64
	// AIS estimates each model's log Z on the square (ToyLogLikelihood),
	// for the held-out log-likelihood of TestN fresh points; Chains 0
	// skips it.
	AIS   sampling.AISConfig
	TestN int
	// Stop ends the run at the end of the step it receives in, saved, with
	// training.ErrStopped; nil: never.
	Stop <-chan os.Signal
}

// Toy trains every configuration of o on the toy set and writes, per
// method, the learned energy and density as heat maps, Langevin samples,
// its metrics log (with the log-density MSE every o.EvalEvery steps, for
// sets with an exact density) and mse.csv; and, all methods together, the
// curves as mse.csv and mse.png. A stopped run resumes each method from its
// checkpoint; one with other settings is refused, naming them.
func Toy(o ToyOptions) error {
	set, err := toy2d.New(o.Data)
	if err != nil {
		return fmt.Errorf("Options.Data: %w", err)
	}
	dir := filepath.Join(o.Out, o.Data)
	b, done, err := openRun(o.Backend, dir)
	if err != nil {
		return err
	}
	defer done()
	curves := map[string][]Record{}
	var logLiks []ToyLogLikelihood
	for _, cfg := range o.Configs {
		if changes := cfg.Changes(density.DefaultConfig(cfg.Method)); len(changes) > 0 {
			fmt.Printf("%s: settings changed from the paper's: %s\n", cfg.Method, strings.Join(changes, ", "))
		}
		model, curve, err := trainToy(b, set, cfg, o, training.Folder{Dir: filepath.Join(dir, cfg.Method)})
		if err != nil {
			return fmt.Errorf("method %s: %w", cfg.Method, err)
		}
		curves[cfg.Method] = curve
		if o.AIS.Chains > 0 {
			r, err := toyLogLikelihood(b, model, cfg, set, o)
			if err != nil {
				return fmt.Errorf("method %s: %w", cfg.Method, err)
			}
			fmt.Printf("%s: held-out log-likelihood %.4f (95 %% interval %.4f to %.4f; the data's own %.4f), log Z %.4f by AIS\n",
				cfg.Method, r.TestLogLikelihood, r.TestInterval.Lo, r.TestInterval.Hi, r.Exact, r.LogZ)
			logLiks = append(logLiks, r)
		}
	}
	if len(logLiks) > 0 {
		if err := writeToyLogLikelihoods(dir, logLiks); err != nil {
			return err
		}
	}
	if _, exact := set.LogDensity(0, 0); exact {
		return writeToyCurves(dir, o.Data, o.Configs, curves)
	}
	return nil
}

// trainToy trains one method and writes its pictures; it returns the
// model and its log-density MSE curve (empty for data without an exact
// density).
func trainToy(b backends.Backend, set *toy2d.Set, cfg density.Config, o ToyOptions, folder training.Folder) (*density.Model, []Record, error) {
	if err := os.MkdirAll(folder.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	model, err := density.New(b, cfg, o.Seed)
	if err != nil {
		return nil, nil, err
	}
	ds, err := toy2d.NewDataset(set, o.Batch, uint64(o.Seed))
	if err != nil {
		return nil, nil, err
	}
	if err := resumeRun(model, folder, runSettings{o.Data, o.Seed, o.Batch}); err != nil {
		return nil, nil, err
	}
	if err := ds.Seek(int(model.Step())); err != nil {
		return nil, nil, err
	}
	fmt.Printf("training %s on %s from step %d to %d → %s\n", cfg.Method, o.Data, model.Step(), o.Steps, folder.Dir)
	fit := FitOptions{Folder: folder, To: int64(o.Steps), Every: int64(o.EvalEvery), Stop: o.Stop,
		Legacy: func(upTo int64) ([]Record, error) { return readCurve(folder.Path(curveFile), upTo) }}
	_, exact := set.LogDensity(0, 0)
	if exact {
		logp := func(p []float32) float64 {
			v, _ := set.LogDensity(float64(p[0]), float64(p[1]))
			return v
		}
		fit.MeasureEvery = int64(o.EvalEvery)
		fit.Measure = func(step int64) (float64, error) {
			// Evaluation samples depend on the step only, so a resumed run
			// evaluates exactly as an uninterrupted one.
			evalRNG := rand.New(rand.NewPCG(uint64(o.Seed), uint64(step)))
			return model.LogDensityMSE(set.Sample(evalRNG, o.EvalN), set.Sample(evalRNG, o.EvalN), 2, logp)
		}
	}
	history, err := Fit(model, ds, fit)
	if err != nil {
		return nil, nil, err
	}
	if err := plotLoss(folder, cfg.Method+" training loss", history); err != nil {
		return nil, nil, err
	}
	if err := writeToyPictures(model, o, folder); err != nil {
		return nil, nil, err
	}
	if !exact {
		return model, nil, nil
	}
	curve := measured(history)
	if len(curve) > 0 {
		fmt.Printf("%s: final log-density MSE %.4f\n", cfg.Method, curve[len(curve)-1].LogDensityMSE)
	}
	return model, curve, writeCurve(folder.Path(curveFile), curve)
}

// curveFile is a method's log-density MSE curve, written from its metrics
// log (and, in runs written before the log existed, read for a resume).
const curveFile = "mse.csv"

// measured are the records of history that hold a log-density MSE.
func measured(history []Record) []Record {
	var out []Record
	for _, r := range history {
		if r.LogDensityMSE != 0 {
			out = append(out, r)
		}
	}
	return out
}

// writeToyPictures draws the learned energy, its density and Langevin
// samples.
func writeToyPictures(model *density.Model, o ToyOptions, folder training.Folder) error {
	grid := density.Grid{Extent: [4]float64{-o.Extent, o.Extent, -o.Extent, o.Extent}, Size: o.Grid}
	energy, dens, err := model.EnergyAndDensity(grid)
	if err != nil {
		return err
	}
	opts := plots.HeatmapOptions{Scale: max(1, 400/o.Grid)}
	if err := plots.WriteHeatmap(folder.Path("energy.png"), energy, o.Grid, o.Grid, opts); err != nil {
		return err
	}
	if err := plots.WriteHeatmap(folder.Path("density.png"), dens, o.Grid, o.Grid, opts); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x5a3))
	init := make([]float32, 2*o.Samples)
	for i := range init {
		init[i] = float32((2*rng.Float64() - 1) * o.Extent)
	}
	samples, err := model.Sample(init, 2, losses.LangevinConfig{StepSize: math.Sqrt(o.SampleEps), Steps: o.SampleSteps})
	if err != nil {
		return err
	}
	return plots.WriteScatterDensity(folder.Path("samples.png"), samples, grid.Extent, 100, 4)
}

// runSettings are a toy or Gray-code run's settings beyond its model's:
// its checkpoints store them beside the model's (as context parameters),
// so that a resumed run is checked to be the same run.
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

// resumeRun restores the model from the checkpoint in folder, when there
// is one (which checks the model's settings), and checks the run's against
// run. A new run stores run in the model's context for its checkpoints.
func resumeRun(model *density.Model, folder training.Folder, run runSettings) error {
	ckptDir := folder.Checkpoints()
	if isFresh(folder) {
		settings.Set(model.Context(), run.params())
		return nil
	}
	if err := model.Restore(ckptDir); err != nil {
		return fmt.Errorf("resuming: %w; use another -out or the same flags", err)
	}
	var saved runSettings
	if err := settings.Get(model.Context(), saved.params()); err != nil {
		return fmt.Errorf("resuming from %s: %w", ckptDir, err)
	}
	if diff := settings.Changes(run.params(), saved.params()); len(diff) > 0 {
		return fmt.Errorf("%s holds a run with other settings (this one has %s); use another -out or the same flags", ckptDir, strings.Join(diff, ", "))
	}
	return nil
}

// readCurve reads a curve written by writeCurve, up to step upTo.
func readCurve(path string, upTo int64) ([]Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var curve []Record
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		var r Record
		if _, err := fmt.Sscanf(line, "%d,%g", &r.Step, &r.LogDensityMSE); err != nil {
			return nil, fmt.Errorf("%s line %d: %q: %w", path, i+2, line, err)
		}
		if r.Step <= upTo {
			curve = append(curve, r)
		}
	}
	return curve, nil
}

// writeCurve writes one method's log-density MSE curve as CSV.
func writeCurve(path string, curve []Record) error {
	rows := make([][]float64, len(curve))
	for i, r := range curve {
		rows[i] = []float64{float64(r.Step), r.LogDensityMSE}
	}
	return plots.WriteCSV(path, []string{"step", "log_density_mse"}, rows)
}

// writeToyCurves writes all methods' log-density MSE curves side by side.
func writeToyCurves(dir, data string, configs []density.Config, curves map[string][]Record) error {
	header := []string{"step"}
	var series []plots.Series
	for _, cfg := range configs {
		header = append(header, cfg.Method+"_mse")
		s := plots.Series{Name: strings.ToUpper(cfg.Method)}
		for _, r := range curves[cfg.Method] {
			s.X, s.Y = append(s.X, float64(r.Step)), append(s.Y, r.LogDensityMSE)
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
	if err := plots.WriteCSV(filepath.Join(dir, curveFile), header, rows); err != nil {
		return err
	}
	return plots.WriteLinePlot(filepath.Join(dir, "mse.png"), plots.LinePlot{
		Title: "Log-density MSE on " + data, XLabel: "step", YLabel: "MSE", LogY: true, Series: series,
	})
}
