package densityrun

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/datasets/ising"
	"github.com/edlebm/edlebm/discrete"
	"github.com/edlebm/edlebm/internal/settings"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// IsingOptions say what Ising trains: the paper's Ising experiment, as
// cmd/train-ising runs it.
type IsingOptions struct {
	// Side and Sigma make the truth: a periodic Side×Side lattice with
	// couplings J = Sigma·A and no field (ising.Lattice).
	Side  int
	Sigma float64
	// N training states are drawn, each the end of its own Gibbs chain of
	// DataSweeps sweeps.
	N, DataSweeps int
	// Configs are the models to train, one per method, each in its own
	// folder Out/METHOD.
	Configs []discrete.IsingConfig
	// Out is the output folder; Backend the GoMLX backend
	// (backend.Resolve's syntax; "" for auto).
	Out, Backend string
	// Steps and Batch are each model's training steps and states per step
	// (the training states in order, round and round); Seed seeds the data
	// and the training.
	Steps, Batch int
	Seed         int64
	// EvalEvery is how often, in steps, the RMSE of the learned couplings
	// is measured and the model checkpointed.
	EvalEvery int
	// Stop ends the run at the end of the step it receives in, saved, with
	// training.ErrStopped; nil: never.
	Stop <-chan os.Signal
}

// isingRecord is one line of an Ising model's metrics log.
type isingRecord struct {
	Step    int64   `json:"step"`
	Loss    float64 `json:"loss"`
	Seconds float64 `json:"seconds"`
	// CouplingsRMSE is the RMSE of the learned J against the truth, at the
	// steps it is measured (0 at the others).
	CouplingsRMSE float64 `json:"couplings_rmse,omitempty"`
}

// Ising draws the training states of o's lattice, trains every
// configuration of o on them and writes, in Out: rmse.csv (the RMSE of
// the learned J against the truth, by method, step and training seconds),
// rmse.png and rmse-time.png (those curves over steps and over time), and
// couplings.png (the true J beside each method's, one colour scale); each
// method's folder holds its checkpoint and metrics log, and a stopped run
// resumes from them.
func Ising(o IsingOptions) error {
	truth, err := ising.Lattice(o.Side, o.Sigma)
	if err != nil {
		return fmt.Errorf("Options.Side: %w", err)
	}
	b, done, err := openRun(o.Backend, o.Out)
	if err != nil {
		return err
	}
	defer done()
	fmt.Printf("sampling %d states of the %d×%d lattice (σ = %g), %d Gibbs sweeps each\n", o.N, o.Side, o.Side, o.Sigma, o.DataSweeps)
	spins, err := truth.Sample(o.N, o.DataSweeps, uint64(o.Seed))
	if err != nil {
		return err
	}
	bits := ising.Bits(spins)
	var curves [][]isingRecord
	panels := [][]float64{truth.J}
	for _, cfg := range o.Configs {
		curve, j, err := trainIsing(b, truth, bits, cfg, o)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Method, err)
		}
		curves, panels = append(curves, curve), append(panels, j)
	}
	return writeIsingOutputs(o, curves, panels, truth.D)
}

// trainIsing trains (or resumes) one method's model and returns the
// records that hold an RMSE and the learned couplings.
func trainIsing(b backends.Backend, truth *ising.Model, bits []float32, cfg discrete.IsingConfig, o IsingOptions) ([]isingRecord, []float64, error) {
	folder := methodFolder(o.Out, cfg.Method)
	if err := os.MkdirAll(folder.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	model, err := openIsing(b, truth.D, cfg, o, folder)
	if err != nil {
		return nil, nil, err
	}
	batches := &stateBatches{bits: bits, d: truth.D, batch: o.Batch}
	batches.next = int(model.Step()) % (len(bits) / (truth.D * o.Batch))
	steps := training.Steps[isingRecord]{
		Folder: folder,
		Record: func(step int64, outs []*tensors.Tensor, seconds float64) (isingRecord, error) {
			r := isingRecord{Step: step, Loss: float64(tensors.ToScalar[float32](outs[0])), Seconds: seconds}
			if err := discrete.CheckFinite(step, r.Loss); err != nil {
				return r, err
			}
			if step%int64(o.EvalEvery) == 0 || step == int64(o.Steps) {
				j, err := model.Couplings()
				if err != nil {
					return r, err
				}
				r.CouplingsRMSE = discrete.RMSE(j, truth.J)
			}
			return r, nil
		},
		Step:  func(r isingRecord) int64 { return r.Step },
		Save:  func([]isingRecord) error { return model.Save(folder.Checkpoints()) },
		Every: int64(o.EvalEvery), Stop: o.Stop,
	}
	fmt.Printf("training %s from step %d to %d → %s\n", cfg.Method, model.Step(), o.Steps, folder.Dir)
	history, err := steps.Run(train.NewLoop(model.Trainer()), model.Batches(batches), int64(o.Steps))
	if err != nil {
		return nil, nil, err
	}
	var curve []isingRecord
	var seconds float64
	for _, r := range history {
		seconds += r.Seconds
		if r.CouplingsRMSE != 0 {
			r.Seconds = seconds // training seconds so far, for the curve over time
			curve = append(curve, r)
		}
	}
	if len(curve) > 0 {
		fmt.Printf("%s: RMSE %.4f at step %d (%.1f s of training)\n", cfg.Method, curve[len(curve)-1].CouplingsRMSE, curve[len(curve)-1].Step, seconds)
	}
	j, err := model.Couplings()
	return curve, j, err
}

// isingRunSettings are an Ising run's settings beyond its model's: its
// checkpoints store them beside the model's, so that a resumed run is
// checked to be the same run.
type isingRunSettings struct {
	side, n, dataSweeps, batch int
	sigma                      float64
	seed                       int64
}

func (r *isingRunSettings) params() []settings.Param {
	return []settings.Param{
		{Key: "ising_lattice_side", Ptr: &r.side},
		{Key: "ising_lattice_sigma", Ptr: &r.sigma},
		{Key: "ising_data_states", Ptr: &r.n},
		{Key: "ising_data_sweeps", Ptr: &r.dataSweeps},
		{Key: "ising_batch", Ptr: &r.batch},
		{Key: "ising_seed", Ptr: &r.seed},
	}
}

// openIsing resumes the method's model from its checkpoint — refusing one
// of another model or run, naming the settings — or makes a new one.
func openIsing(b backends.Backend, d int, cfg discrete.IsingConfig, o IsingOptions, folder training.Folder) (*discrete.IsingModel, error) {
	model, err := discrete.NewIsingModel(b, d, cfg, o.Seed)
	if err != nil {
		return nil, err
	}
	run := isingRunSettings{side: o.Side, n: o.N, dataSweeps: o.DataSweeps, batch: o.Batch, sigma: o.Sigma, seed: o.Seed}
	if isFresh(folder) {
		settings.Set(model.Context(), run.params())
		return model, nil
	}
	if err := model.Restore(folder.Checkpoints()); err != nil {
		return nil, fmt.Errorf("resuming: %w; use another -out or the same flags", err)
	}
	var saved isingRunSettings
	if err := settings.Get(model.Context(), saved.params()); err != nil {
		return nil, fmt.Errorf("resuming from %s: %w", folder.Checkpoints(), err)
	}
	if diff := settings.Changes(run.params(), saved.params()); len(diff) > 0 {
		return nil, fmt.Errorf("%s holds a run with other settings (this one has %s); use another -out or the same flags", folder.Checkpoints(), strings.Join(diff, ", "))
	}
	return model, nil
}

// stateBatches serves the training states, batch after batch in order,
// round and round: the batch yielded next is next.
type stateBatches struct {
	bits     []float32
	d, batch int
	next     int
}

func (s *stateBatches) Name() string { return "ising states" }
func (s *stateBatches) Reset()       {}
func (s *stateBatches) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	size := s.batch * s.d
	k := s.next
	s.next = (s.next + 1) % (len(s.bits) / size)
	x := tensors.FromFlatDataAndDimensions(append([]float32{}, s.bits[k*size:(k+1)*size]...), s.batch, s.d)
	return nil, []*tensors.Tensor{x}, nil, nil
}

// writeIsingOutputs writes the table, the curves and the couplings picture.
func writeIsingOutputs(o IsingOptions, curves [][]isingRecord, panels [][]float64, d int) error {
	methods := make([]string, len(o.Configs))
	for i, c := range o.Configs {
		methods[i] = c.Method
	}
	header := []string{"method (" + strings.Join(methods, "=0,") + "=" + fmt.Sprint(len(methods)-1) + ")", "step", "seconds", "rmse"}
	var rows [][]float64
	var byStep, byTime []plots.Series
	for mi, curve := range curves {
		step, timed := plots.Series{Name: methods[mi]}, plots.Series{Name: methods[mi]}
		for _, r := range curve {
			rows = append(rows, []float64{float64(mi), float64(r.Step), r.Seconds, r.CouplingsRMSE})
			step.X, step.Y = append(step.X, float64(r.Step)), append(step.Y, r.CouplingsRMSE)
			timed.X, timed.Y = append(timed.X, r.Seconds), append(timed.Y, r.CouplingsRMSE)
		}
		byStep, byTime = append(byStep, step), append(byTime, timed)
	}
	if err := plots.WriteCSV(filepath.Join(o.Out, "rmse.csv"), header, rows); err != nil {
		return err
	}
	title := fmt.Sprintf("Ising %d×%d, σ = %g: RMSE of the learned J", o.Side, o.Side, o.Sigma)
	if err := plots.WriteLinePlot(filepath.Join(o.Out, "rmse.png"), plots.LinePlot{Title: title, XLabel: "step", YLabel: "RMSE", LogY: true, Series: byStep}); err != nil {
		return err
	}
	if err := plots.WriteLinePlot(filepath.Join(o.Out, "rmse-time.png"), plots.LinePlot{Title: title, XLabel: "training seconds", YLabel: "RMSE", LogY: true, Series: byTime}); err != nil {
		return err
	}
	if err := writeCouplings(filepath.Join(o.Out, "couplings.png"), panels, d, o.Sigma); err != nil {
		return err
	}
	fmt.Printf("wrote rmse.csv, rmse.png, rmse-time.png and couplings.png (truth, then %s) in %s\n", strings.Join(methods, ", "), o.Out)
	return nil
}

// writeCouplings draws the panels (the truth, then each method's J) side
// by side with a grey column between, on one colour scale from −|σ| to
// |σ|.
func writeCouplings(path string, panels [][]float64, d int, sigma float64) error {
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
	lo, hi := -math.Abs(sigma), math.Abs(sigma)
	if lo == hi {
		lo, hi = -1, 1
	}
	return plots.WriteHeatmap(path, picture, d, cols, plots.HeatmapOptions{Scale: max(1, 240/d), Min: lo, Max: hi, RowZeroAtTop: true})
}
