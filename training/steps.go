package training

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/ui/commandline"
)

// Steps is the resumable part of a training run, the same for every
// trainer: GoMLX's train.Loop run from the model's global step to the
// last, each step's record appended to the run's metrics log (Log) before
// any checkpoint of that step, checkpoints every Every steps, every
// Interval, at a stop (StopOn) and at the end.
type Steps[R any] struct {
	// Folder is the run folder: the metrics log is Folder.Metrics().
	Folder Folder
	// Record makes the record of the step just taken, from the trainer's
	// outputs; seconds is the time since the previous step's record was
	// made (since Run began, compiling included, for the first), so that
	// what Record measures at some steps is not counted in the next
	// step's time. An error (a diverged step) stops the run: the
	// checkpoints on disk are the last good ones.
	Record func(step int64, outs []*tensors.Tensor, seconds float64) (R, error)
	// Step reads a record's step.
	Step func(R) int64
	// Save checkpoints the model; history is the records up to its step,
	// for what is saved beside the checkpoint.
	Save func(history []R) error
	// Every and Interval are how often the run checkpoints, in steps and
	// in time (0: not on that count).
	Every    int64
	Interval time.Duration
	// Stop ends the run at the end of the step it receives in, saved, with
	// ErrStopped; nil: never.
	Stop <-chan os.Signal
	// StopAfter > 0 ends the run likewise after that many steps of this
	// invocation, unless that is the last step.
	StopAfter int64
	// Appended, when set, is called after each record is appended to the
	// log (tests kill a run there).
	Appended func()
	// Legacy, when set, reads the records of a run folder written before
	// its trainer kept a metrics log (up to step upTo), so that resuming
	// such a run starts the log with them.
	Legacy func(upTo int64) ([]R, error)
	// Progress, when set, is the progress bar's extra column (a name and
	// its value), as commandline.AttachProgressBar takes it.
	Progress func() (string, string)
}

// OpenHistory returns the records of the run's metrics log up to step
// (the model's), without opening the log for writing: for a run that has
// nothing left to train.
func (s Steps[R]) OpenHistory(step int64) ([]R, error) {
	return readLog(s.Folder.Metrics(), step, s.Step)
}

// Run trains with loop on batches from the loop's global step to step
// to, and returns the records of every step up to where it ended, those of
// earlier invocations (read from the log) included. The caller may add
// hooks of its own to loop first: in GoMLX's priority order, the step's
// record is made and logged at priority −1 (measurements a record holds at
// some steps only are Record's to make), then the progress bar and hooks
// of priority 0, then the checkpoints at 1 and a stop at StopPriority.
func (s Steps[R]) Run(loop *train.Loop, batches train.Dataset, to int64) ([]R, error) {
	from := int64(loop.Trainer.GlobalStep())
	if err := s.importLegacy(from); err != nil {
		return nil, err
	}
	log, history, err := OpenLog(s.Folder.Metrics(), from, s.Step)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	if from >= to {
		return history, nil
	}
	r := &runner[R]{Steps: s, log: log, history: history, saved: from, first: from, to: to}
	r.attach(loop)
	_, err = loop.RunToGlobalStep(batches, int(to))
	switch {
	case r.failure != nil:
		return r.history, r.failure
	case err != nil:
		return r.history, err
	}
	return r.history, r.save(to)
}

// importLegacy starts the metrics log of a run at step from (> 0) that
// has none with the records s.Legacy reads.
func (s Steps[R]) importLegacy(from int64) error {
	if s.Legacy == nil || from == 0 {
		return nil
	}
	if _, err := os.Stat(s.Folder.Metrics()); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	records, err := s.Legacy(from)
	if err != nil {
		return err
	}
	return writeLog(s.Folder.Metrics(), records)
}

// runner is one invocation of Steps.Run.
type runner[R any] struct {
	Steps[R]
	log     *Log[R]
	history []R
	// saved is the step of the last checkpoint; first the step this
	// invocation started from; to its last.
	saved, first, to int64
	// failure is the error a hook stopped the loop with, as the hook made
	// it (the loop wraps it in the names of its calls).
	failure error
	// started is when Run began; recorded when the last record was made.
	started, recorded time.Time
}

// The hooks' priorities: the record before the progress bar (0), which
// shows the step, and before the checkpoints.
const (
	recordPriority     = -1
	checkpointPriority = 1
)

func (r *runner[R]) attach(loop *train.Loop) {
	if r.Progress != nil {
		commandline.AttachProgressBar(loop, r.Progress)
	} else {
		commandline.AttachProgressBar(loop)
	}
	r.started = time.Now()
	r.recorded = r.started
	loop.OnStep("record the step", recordPriority, func(l *train.Loop, outs []*tensors.Tensor) error {
		step := int64(l.Trainer.GlobalStep())
		rec, err := r.Record(step, outs, time.Since(r.recorded).Seconds())
		r.recorded = time.Now()
		if err != nil {
			return r.keep(fmt.Errorf("%w\nstopped; the last good checkpoint is kept in %s", err, r.Folder.Checkpoints()))
		}
		if step == r.first+1 {
			fmt.Printf("first step in %.1f s\n", time.Since(r.started).Seconds())
		}
		r.history = append(r.history, rec)
		if err := r.log.Append(rec); err != nil {
			return r.keep(err)
		}
		if r.Appended != nil {
			r.Appended()
		}
		return nil
	})
	checkpoint := func(l *train.Loop, _ []*tensors.Tensor) error {
		return r.keep(r.save(int64(l.Trainer.GlobalStep())))
	}
	if r.Every > 0 {
		train.EveryNSteps(loop, int(r.Every), "checkpoint", checkpointPriority, checkpoint)
	}
	if r.Interval > 0 {
		train.PeriodicCallback(loop, r.Interval, false, "checkpoint", checkpointPriority, checkpoint)
	}
	StopOn(loop, r.Stop, func() error { return r.save(int64(loop.Trainer.GlobalStep())) })
	if r.StopAfter > 0 {
		loop.OnStep("stop after", StopPriority, func(l *train.Loop, _ []*tensors.Tensor) error {
			step := int64(l.Trainer.GlobalStep())
			if step-r.first < r.StopAfter || step == r.to {
				return nil
			}
			fmt.Printf("\nstopping after %d steps, as asked: saving at step %d of %d; run the same command again to go on\n", r.StopAfter, step, r.to)
			if err := r.save(step); err != nil {
				return r.keep(err)
			}
			return ErrStopped
		})
	}
}

// save checkpoints step, once.
func (r *runner[R]) save(step int64) error {
	if r.saved == step {
		return nil
	}
	if err := r.Save(r.history); err != nil {
		return err
	}
	r.saved = step
	return nil
}

// keep returns err, noting the first in r.failure.
func (r *runner[R]) keep(err error) error {
	if err != nil && r.failure == nil && !errors.Is(err, ErrStopped) {
		r.failure = err
	}
	return err
}
