package training

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/internal/testutil"
)

type stepRecord struct {
	Step int64   `json:"step"`
	Loss float64 `json:"loss"`
}

// tinyLoop is a train.Loop over a one-weight model whose loss is (x·w)².
func tinyLoop() *train.Loop {
	ctx := context.New()
	modelFn := func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		w := ctx.VariableWithValue("w", float32(1)).ValueGraph(inputs[0].Graph())
		train.AddLoss(ctx, graph.ReduceAllSum(graph.Square(graph.Mul(inputs[0], w))))
		return nil
	}
	return train.NewLoop(train.NewTrainer(testutil.Backend(), ctx, modelFn, nil, optimizers.StochasticGradientDescent(), nil, nil))
}

// stepsOf are Steps over folder that record each step's loss and note
// the step of every save in saves.
func stepsOf(folder Folder, saves *[]int64) Steps[stepRecord] {
	return Steps[stepRecord]{
		Folder: folder,
		Record: func(step int64, outs []*tensors.Tensor, _ float64) (stepRecord, error) {
			return stepRecord{Step: step, Loss: float64(tensors.ToScalar[float32](outs[0]))}, nil
		},
		Step: func(r stepRecord) int64 { return r.Step },
		Save: func(history []stepRecord) error {
			*saves = append(*saves, history[len(history)-1].Step)
			return nil
		},
	}
}

func loggedSteps(t *testing.T, folder Folder) []int64 {
	t.Helper()
	records, err := readLog(folder.Metrics(), 1<<62, func(r stepRecord) int64 { return r.Step })
	if err != nil {
		t.Fatal(err)
	}
	var steps []int64
	for _, r := range records {
		steps = append(steps, r.Step)
	}
	return steps
}

// TestStepsCheckpointsLogsAndStops: every step is logged (and Appended
// told); the run
// checkpoints every Every steps and at its end, once a step; StopAfter
// ends it saved with ErrStopped, and a second Run goes on from there with
// the log of both; a Record error stops the run naming the folder whose
// checkpoints are kept.
func TestStepsCheckpointsLogsAndStops(t *testing.T) {
	folder := Folder{Dir: t.TempDir()}
	var saves []int64
	s := stepsOf(folder, &saves)
	s.Every, s.StopAfter = 2, 3
	appended := 0
	s.Appended = func() { appended++ }
	loop := tinyLoop()
	history, err := s.Run(loop, constant{[]float32{1, 2}}, 7)
	if !errors.Is(err, ErrStopped) || len(history) != 3 || !slices.Equal(saves, []int64{2, 3}) {
		t.Fatalf("stopped after 3: %v, %d records, saves at %v; want ErrStopped, 3, [2 3]", err, len(history), saves)
	}
	saves = nil
	history, err = s.Run(train.NewLoop(loop.Trainer), constant{[]float32{1, 2}}, 7)
	// Steps 4, 5, 6 this time (StopAfter counts this invocation's), then
	// step 7 is the end and is not stopped at.
	if !errors.Is(err, ErrStopped) || len(history) != 6 || !slices.Equal(saves, []int64{4, 6}) {
		t.Fatalf("second run: %v, %d records, saves at %v; want ErrStopped, 6, [4 6]", err, len(history), saves)
	}
	saves = nil
	s.StopAfter = 0
	if history, err = s.Run(train.NewLoop(loop.Trainer), constant{[]float32{1, 2}}, 7); err != nil || len(history) != 7 || !slices.Equal(saves, []int64{7}) {
		t.Fatalf("to the end: %v, %d records, saves at %v; want nil, 7, [7]", err, len(history), saves)
	}
	if got := loggedSteps(t, folder); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6, 7}) || appended != 7 {
		t.Errorf("logged steps %v, Appended called %d times; want 1 to 7 once each", got, appended)
	}

	s.Record = func(step int64, _ []*tensors.Tensor, _ float64) (stepRecord, error) {
		return stepRecord{}, fmt.Errorf("step %d diverged", step)
	}
	_, err = s.Run(train.NewLoop(loop.Trainer), constant{[]float32{1, 2}}, 9)
	if err == nil || !strings.HasPrefix(err.Error(), "step 8 diverged") || !strings.Contains(err.Error(), folder.Checkpoints()) {
		t.Errorf("a diverged step: %v, want its error first, then the folder of the last good checkpoint", err)
	}
}

// TestStepsStartsTheLogWithLegacyRecords: a run at step 3 without a
// metrics log starts it with Legacy's records of steps 1 to 3, then logs
// its own; a new run and a run with a log ignore Legacy.
func TestStepsStartsTheLogWithLegacyRecords(t *testing.T) {
	folder := Folder{Dir: t.TempDir()}
	var saves []int64
	s := stepsOf(folder, &saves)
	var asked []int64
	s.Legacy = func(upTo int64) ([]stepRecord, error) {
		asked = append(asked, upTo)
		return []stepRecord{{1, 10}, {2, 20}, {3, 30}}, nil
	}
	loop := tinyLoop()
	if _, err := s.Run(loop, constant{[]float32{1}}, 3); err != nil || len(asked) != 0 {
		t.Fatalf("a new run: %v, Legacy asked for %v; want none", err, asked)
	}
	if err := os.Remove(folder.Metrics()); err != nil {
		t.Fatal(err)
	}
	history, err := s.Run(train.NewLoop(loop.Trainer), constant{[]float32{1}}, 5)
	if err != nil || !slices.Equal(asked, []int64{3}) || len(history) != 5 || history[2].Loss != 30 || history[3].Loss == 0 {
		t.Fatalf("resumed at 3 without a log: %v, Legacy asked for %v, history %v", err, asked, history)
	}
	if _, err := s.Run(train.NewLoop(loop.Trainer), constant{[]float32{1}}, 6); err != nil || len(asked) != 1 {
		t.Errorf("a run with a log asked Legacy again (%v, %v)", asked, err)
	}
	if got := loggedSteps(t, folder); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6}) {
		t.Errorf("logged steps %v, want 1 to 6", got)
	}
}

// TestStepsTimesEachStepWithoutTheRecords: the seconds Record is given are
// the time since the previous record was made, so what Record measures at
// one step (here a 0.2 s pause) is not counted in the next step's time.
func TestStepsTimesEachStepWithoutTheRecords(t *testing.T) {
	var saves []int64
	s := stepsOf(Folder{Dir: t.TempDir()}, &saves)
	seconds := map[int64]float64{}
	s.Record = func(step int64, outs []*tensors.Tensor, sec float64) (stepRecord, error) {
		seconds[step] = sec
		if step == 2 {
			time.Sleep(200 * time.Millisecond)
		}
		return stepRecord{Step: step}, nil
	}
	if _, err := s.Run(tinyLoop(), constant{[]float32{1}}, 3); err != nil {
		t.Fatal(err)
	}
	if !(seconds[2] > 0) || !(seconds[3] > 0 && seconds[3] < 0.15) {
		t.Errorf("step times %v: want each > 0, step 3's without step 2's 0.2 s record", seconds)
	}
}
