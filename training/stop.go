package training

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
)

// ErrStopped ends a training loop at the user's request (a signal, a
// budget of steps), once the run is saved: a run that returns it has
// stopped cleanly and resumes when started again.
var ErrStopped = errors.New("stopped at the user's request")

// StopPriority is the priority of StopOn's hook: after the hooks a run
// attaches to record and save its steps (GoMLX runs lower priorities
// first), so that the step the stop comes in is recorded before it is
// saved.
const StopPriority = 1000

// StopOn makes loop end after the step during which stop receives (see
// StopSignals), once save has saved the run, with ErrStopped. A nil stop
// never receives.
func StopOn(loop *train.Loop, stop <-chan os.Signal, save func() error) {
	loop.OnStep("stop if asked", StopPriority, func(l *train.Loop, _ []*tensors.Tensor) error {
		select {
		case sig := <-stop:
			fmt.Printf("\n%v at step %d: saving, then stopping; run the same command again to go on\n", sig, l.Trainer.GlobalStep())
			if err := save(); err != nil {
				return err
			}
			return ErrStopped
		default:
			return nil
		}
	})
}

// StopSignals returns a channel that receives an interrupt (Ctrl-C) or a
// SIGTERM (what a process manager, or timeout, sends), for StopOn: the run
// stops at the end of its step instead of dying in the middle of one.
func StopSignals() <-chan os.Signal {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	return stop
}
