package lebmrun

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/ui/commandline"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/runreport"
	"github.com/edlebm/edlebm/training"
)

// session is one invocation's training: GoMLX's train.Loop over the
// model's trainer, with hooks that record each step, draw pictures and
// checkpoint. The loop calls the hooks of a step in this order: record
// the step (and stop on divergence), end the epoch (pictures, learning
// rate decay), append the step to metrics.jsonl, checkpoint at the end of
// an epoch, checkpoint or draw on the clock, stop if asked.
type session struct {
	o       Options
	model   *lebm.Model
	test    *datasets.Images
	ckptDir string
	metrics *training.Log[Record]
	history []Record
	// perEpoch is the number of steps per epoch; first the global step
	// this invocation started from; total the run's last step.
	perEpoch, first, total int64
	stop                   <-chan os.Signal
	// devices is the number of devices each batch is split over.
	devices int

	ds *endless
	// rec is the record of the step being handled.
	rec Record
	// step is rec.Step, for the progress bar, which reads it from its
	// own goroutine.
	step atomic.Int64
	// saved and drawn are the steps of the last checkpoint and pictures.
	saved, drawn int64
	// failure is the error a hook stopped the loop with, as the hook
	// made it (the loop wraps it in the names of its calls).
	failure error
}

// run trains from the model's global step to s.total, or until stopped
// at the user's request (a signal, -stop-after): finished tells which.
func (s *session) run(ds *endless) (finished bool, err error) {
	s.ds, s.saved, s.drawn = ds, s.first, s.first
	loop := train.NewLoop(s.model.Trainer())
	commandline.AttachProgressBar(loop, func() (string, string) {
		step := s.step.Load()
		return "Epoch", fmt.Sprintf("%d of %d", (max(step, 1)-1)/s.perEpoch+1, s.total/s.perEpoch)
	})
	// The progress bar's hooks have priority 0: the step is recorded (and
	// the first step's time printed) before the bar draws it.
	loop.OnStep("record the step", -1, func(_ *train.Loop, outs []*tensors.Tensor) error { return s.keep(s.record(outs)) })
	train.EveryNSteps(loop, int(s.perEpoch), "end the epoch", 1, s.hook(s.endEpoch))
	loop.OnStep("append to metrics.jsonl", 2, s.hook(s.appendMetrics))
	train.EveryNSteps(loop, int(s.perEpoch), "checkpoint the epoch", 3, s.hook(s.saveEpoch))
	train.PeriodicCallback(loop, s.o.CheckpointEvery, false, "checkpoint", 4, s.hook(func() error {
		if s.saved == s.rec.Step {
			return nil
		}
		return s.save()
	}))
	train.PeriodicCallback(loop, s.o.PicturesEvery, false, "pictures", 4, s.hook(func() error {
		if s.drawn == s.rec.Step {
			return nil
		}
		_, err := s.pictures(training.StepTag(s.rec.Step))
		return err
	}))
	loop.OnStep("stop if asked", 5, s.hook(s.stopIfAsked))

	var batches train.Dataset = ds
	if s.devices > 1 {
		if batches, err = lebm.NewShardedBatches(ds, s.devices); err != nil {
			return false, err
		}
	}
	_, err = loop.RunToGlobalStep(batches, int(s.total))
	switch {
	case errors.Is(err, training.ErrStopped):
		return false, nil
	case s.failure != nil:
		return false, s.failure
	}
	return err == nil, err
}

// hook makes fn a loop hook whose error is kept (see keep).
func (s *session) hook(fn func() error) train.OnStepFn {
	return func(*train.Loop, []*tensors.Tensor) error { return s.keep(fn()) }
}

// keep returns err, noting the first in s.failure.
func (s *session) keep(err error) error {
	if err != nil && s.failure == nil {
		s.failure = err
	}
	return err
}

// record reads the step's metrics from the trainer's outputs, stopping the
// run if the step diverged (its update was discarded: the checkpoints on
// disk are the last good ones).
func (s *session) record(outs []*tensors.Tensor) error {
	m, err := s.model.ReadStepMetrics(outs)
	if err != nil {
		return fmt.Errorf("%w\nstopped; the last good checkpoint is kept in %s", err, s.ckptDir)
	}
	seconds := time.Since(s.ds.yielded).Seconds()
	if m.Step == s.first+1 {
		fmt.Printf("first step in %.1f s\n", seconds)
	}
	s.rec = Record{Step: m.Step, Epoch: (m.Step - 1) / s.perEpoch, GeneratorLoss: m.GeneratorLoss,
		PriorLoss: m.PriorLoss, PosteriorEnergy: m.PosteriorEnergy, PriorEnergy: m.PriorEnergy,
		ReconstructionMSE: m.ReconstructionMSE, Seconds: seconds}
	s.step.Store(m.Step)
	return nil
}

// endEpoch counts the epoch (the learning rates decay) and draws its
// pictures, recording the test reconstruction error.
func (s *session) endEpoch() (err error) {
	if err := s.model.EndEpoch(); err != nil {
		return err
	}
	s.rec.TestReconstructionMSE, err = s.pictures(training.EpochTag(s.rec.Step / s.perEpoch))
	return err
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
	s.drawn = s.rec.Step
	return mse, err
}

// appendMetrics writes the step's record, before the step's checkpoint
// (training.Log says why).
func (s *session) appendMetrics() error {
	s.history = append(s.history, s.rec)
	if err := s.metrics.Append(s.rec); err != nil {
		return err
	}
	s.o.wrote("metrics")
	return nil
}

// saveEpoch checkpoints the end of an epoch, keeps its snapshot
// (-keep-epochs), redraws the curves and rewrites the report.
func (s *session) saveEpoch() error {
	if err := s.save(); err != nil {
		return err
	}
	if s.o.KeepEpochs > 0 {
		if err := s.model.SaveKeeping(training.Folder{Dir: s.o.Out}.Epochs(), s.o.KeepEpochs); err != nil {
			return err
		}
	}
	if err := plotHistory(training.Folder{Dir: s.o.Out}, s.history); err != nil {
		return err
	}
	report := runreport.Run{Dir: s.o.Out, Config: s.model.Config(), Step: s.rec.Step, Total: s.total}
	report.Load()
	return runreport.Write(report)
}

// save checkpoints the model with the curves up to its step, which GoMLX's
// plotting tools read from the checkpoint folder: consistent after any
// resume.
func (s *session) save() error {
	if err := s.model.Save(s.ckptDir); err != nil {
		return err
	}
	s.saved = s.rec.Step
	s.o.wrote("checkpoint")
	latest, err := lebm.LatestCheckpoint(s.ckptDir)
	if err != nil {
		return err
	}
	return writePlotPoints(latest, s.history)
}

// stopIfAsked checkpoints and stops the loop after a signal on s.stop or
// -stop-after steps.
func (s *session) stopIfAsked() error {
	step := s.rec.Step
	select {
	case <-s.stop:
		fmt.Printf("\ninterrupted at step %d: checkpointing\n", step)
	default:
		if s.o.StopAfter == 0 || step-s.first < s.o.StopAfter || step == s.total {
			return nil
		}
		fmt.Printf("\n-stop-after %d: checkpointing at step %d of %d; run the same command again to go on\n", s.o.StopAfter, step, s.total)
	}
	if s.saved != step {
		if err := s.save(); err != nil {
			return err
		}
	}
	return training.ErrStopped
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
