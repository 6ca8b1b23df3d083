package lebmrun

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/runreport"
	"github.com/edlebm/edlebm/training"
)

// session is one invocation's training: training.Steps over the model's
// trainer, whose step records (Record) also end the epochs (pictures,
// learning rate decay) and whose checkpoints also write the curves, the
// end-of-epoch snapshots and the report; pictures are drawn on the clock
// too.
type session struct {
	o     Options
	model *lebm.Model
	test  *datasets.Images
	// perEpoch is the number of steps per epoch; first the global step
	// this invocation started from; total the run's last step.
	perEpoch, first, total int64
	// devices is the number of devices each batch is split over.
	devices int

	ds *endless
	// step is the last recorded step, for the progress bar, which reads
	// it from its own goroutine.
	step atomic.Int64
	// drawn is the step of the last pictures.
	drawn int64
}

// run trains from the model's global step to s.total, or until stopped
// at the user's request (a signal, -stop-after): finished tells which.
func (s *session) run(ds *endless) (finished bool, err error) {
	s.ds, s.drawn = ds, s.first
	folder := training.Folder{Dir: s.o.Out}
	steps := training.Steps[Record]{
		Folder: folder, Record: s.record, Step: func(r Record) int64 { return r.Step }, Save: s.save,
		Every: s.perEpoch, Interval: s.o.CheckpointEvery, Stop: s.o.Stop, StopAfter: s.o.StopAfter,
		Appended: func() { s.o.wrote("metrics") },
		Progress: func() (string, string) {
			step := s.step.Load()
			return "Epoch", fmt.Sprintf("%d of %d", (max(step, 1)-1)/s.perEpoch+1, s.total/s.perEpoch)
		},
	}
	loop := train.NewLoop(s.model.Trainer())
	train.PeriodicCallback(loop, s.o.PicturesEvery, false, "pictures", 4, func(*train.Loop, []*tensors.Tensor) error {
		if step := s.step.Load(); s.drawn != step {
			_, err := s.pictures(training.StepTag(step))
			return err
		}
		return nil
	})
	var batches train.Dataset = ds
	if s.devices > 1 {
		if batches, err = lebm.NewShardedBatches(ds, s.devices); err != nil {
			return false, err
		}
	}
	_, err = steps.Run(loop, batches, s.total)
	if errors.Is(err, training.ErrStopped) {
		return false, nil
	}
	return err == nil, err
}

// record reads the step's metrics from the trainer's outputs, stopping the
// run if the step diverged (its update was discarded: the checkpoints on
// disk are the last good ones); at the end of an epoch it counts the epoch
// (the learning rates decay) and draws its pictures, recording the test
// reconstruction error. A step's seconds are its own, from its batch's
// arrival (the data's wait and the previous step's pictures not counted).
func (s *session) record(_ int64, outs []*tensors.Tensor, _ float64) (Record, error) {
	m, err := s.model.ReadStepMetrics(outs)
	if err != nil {
		return Record{}, err
	}
	rec := Record{Step: m.Step, Epoch: (m.Step - 1) / s.perEpoch, GeneratorLoss: m.GeneratorLoss,
		PriorLoss: m.PriorLoss, PosteriorEnergy: m.PosteriorEnergy, PriorEnergy: m.PriorEnergy,
		ReconstructionMSE: m.ReconstructionMSE, Seconds: time.Since(s.ds.yielded).Seconds()}
	s.step.Store(m.Step)
	if m.Step%s.perEpoch == 0 {
		if err := s.model.EndEpoch(); err != nil {
			return rec, err
		}
		rec.TestReconstructionMSE, err = s.pictures(training.EpochTag(m.Step / s.perEpoch))
	}
	return rec, err
}

// pictures draws the sample and reconstruction grids, their names ending
// in tag, and returns the test reconstruction error. Their draws are set
// aside (lebm.Model.Aside): the training steps do not depend on when
// pictures were drawn, which keeps a resumed run exact.
func (s *session) pictures(tag string) (mse float64, err error) {
	err = s.model.Aside(func() (err error) {
		mse, err = writePictures(s.model, s.test, s.o, tag)
		return err
	})
	s.drawn = s.step.Load()
	return mse, err
}

// save checkpoints the model with the curves up to its step, which GoMLX's
// plotting tools read from the checkpoint folder (consistent after any
// resume); at the end of an epoch it keeps the epoch's snapshot
// (-keep-epochs); and it redraws the curves and rewrites the report.
func (s *session) save(history []Record) error {
	folder := training.Folder{Dir: s.o.Out}
	if err := s.model.Save(folder.Checkpoints()); err != nil {
		return err
	}
	s.o.wrote("checkpoint")
	latest, err := lebm.LatestCheckpoint(folder.Checkpoints())
	if err != nil {
		return err
	}
	if err := writePlotPoints(latest, history); err != nil {
		return err
	}
	step := history[len(history)-1].Step
	if s.o.KeepEpochs > 0 && step%s.perEpoch == 0 {
		if err := s.model.SaveKeeping(folder.Epochs(), s.o.KeepEpochs); err != nil {
			return err
		}
	}
	if err := plotHistory(folder, history); err != nil {
		return err
	}
	report := runreport.Run{Dir: s.o.Out, Config: s.model.Config(), Step: step, Total: s.total}
	report.Load()
	return runreport.Write(report)
}

// endless is the training batches as a GoMLX train.Dataset that does not
// end: after an epoch's last batch it starts the next (which the batches
// reshuffle). It yields the images only, the model's one input, and
// notes when it yielded them, which times the step.
type endless struct {
	batches batchSource
	name    string
	yielded time.Time
}

// Name implements train.Dataset.
func (e *endless) Name() string { return e.name }

// Reset implements train.Dataset: it starts the next epoch.
func (e *endless) Reset() { e.batches.Reset() }

// Yield implements train.Dataset.
func (e *endless) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	_, inputs, labels, err = datasets.YieldAcrossEpochs(e.batches)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("training batches of %s: %w", e.name, err)
	}
	finalize(labels)
	finalize(inputs[1:])
	e.yielded = time.Now()
	return nil, inputs[:1], nil, nil
}
