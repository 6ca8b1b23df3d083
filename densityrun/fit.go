package densityrun

import (
	"cmp"
	"fmt"
	"os"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// Record is one line of a density model's metrics log
// (training.MetricsFile), as every density trainer writes it.
type Record struct {
	Step int64   `json:"step"`
	Loss float64 `json:"loss"`
	// Seconds is the step's time: since the previous step's record.
	Seconds float64 `json:"seconds"`
	// LogDensityMSE is the model's log-density error, measured at the
	// steps FitOptions.Measure is called at (0 at the others).
	LogDensityMSE float64 `json:"log_density_mse,omitempty"`
}

func recordStep(r Record) int64 { return r.Step }

// FitOptions say how Fit trains a density model in its run folder.
type FitOptions struct {
	// Folder is the model's run folder: its checkpoints and metrics log.
	Folder training.Folder
	// To is the last step.
	To int64
	// Every and Interval are how often the model checkpoints, in steps and
	// in time (0: not on that count); it always does at its last step and
	// at a stop.
	Every    int64
	Interval time.Duration
	// Stop ends the run at the end of the step it receives in, saved,
	// with training.ErrStopped; nil: never.
	Stop <-chan os.Signal
	// Measure, when set, is called every MeasureEvery steps and its value
	// kept as the step's LogDensityMSE.
	Measure      func(step int64) (float64, error)
	MeasureEvery int64
	// Legacy, when set, reads the records of a run folder written before
	// the metrics log existed (its steps up to upTo), for a resume.
	Legacy func(upTo int64) ([]Record, error)
}

// Fit trains model on batches from its step to o.To, resuming the metrics
// log of o.Folder and checkpointing into o.Folder.Checkpoints(); it
// returns every step's record, earlier invocations' included. A step whose
// loss is not finite stops it with density.ErrNonFinite, the last good
// checkpoint kept.
func Fit(model *density.Model, batches train.Dataset, o FitOptions) ([]Record, error) {
	steps := training.Steps[Record]{
		Folder: o.Folder,
		Record: func(step int64, outs []*tensors.Tensor, seconds float64) (Record, error) {
			loss := float64(tensors.ToScalar[float32](outs[0]))
			if err := density.CheckFinite(step, loss); err != nil {
				return Record{}, err
			}
			r := Record{Step: step, Loss: loss, Seconds: seconds}
			if o.Measure != nil && step%o.MeasureEvery == 0 {
				var err error
				if r.LogDensityMSE, err = o.Measure(step); err != nil {
					return r, err
				}
			}
			return r, nil
		},
		Step:     recordStep,
		Save:     func([]Record) error { return model.Save(o.Folder.Checkpoints()) },
		Every:    o.Every,
		Interval: o.Interval,
		Stop:     o.Stop,
		Legacy:   o.Legacy,
	}
	// GoMLX's loop over the trainer: Record checks each loss (before it is
	// logged), so density.Model.NewLoop's own guard would check it twice.
	return steps.Run(train.NewLoop(model.Trainer()), batches, o.To)
}

// openRun opens the GoMLX backend backendName (backend.Resolve's syntax;
// "" for auto) and claims the run folder dir for this process; done
// releases both.
func openRun(backendName, dir string) (b backends.Backend, done func(), err error) {
	b, err = backend.OpenForCommand(cmp.Or(backendName, "auto"))
	if err != nil {
		return nil, nil, err
	}
	writer, err := training.Folder{Dir: dir}.Claim()
	if err != nil {
		b.Finalize()
		return nil, nil, fmt.Errorf("Options.Out: %w", err)
	}
	return b, func() { writer.Release(); b.Finalize() }, nil
}

// plotLoss draws the training loss (training.LossesPlot), averaged over
// windows of steps so that at most 400 points are drawn. Records without a
// loss (imported from a run written before its metrics log) are left out.
func plotLoss(folder training.Folder, title string, all []Record) error {
	var history []Record
	for _, r := range all {
		if r.Loss != 0 {
			history = append(history, r)
		}
	}
	s := plots.Series{Name: "training loss"}
	window := max(1, len(history)/400)
	for start := 0; start < len(history); start += window {
		end := min(start+window, len(history))
		var mean float64
		for _, r := range history[start:end] {
			mean += r.Loss / float64(end-start)
		}
		s.X, s.Y = append(s.X, float64(history[end-1].Step)), append(s.Y, mean)
	}
	return plots.WriteLinePlot(folder.Path(training.LossesPlot), plots.LinePlot{Title: title, XLabel: "step", YLabel: "loss", Series: []plots.Series{s}})
}
