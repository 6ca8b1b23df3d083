package training

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/internal/testutil"
)

// constant is a train.Dataset that yields the same batch forever.
type constant struct{ x []float32 }

func (d constant) Name() string { return "constant" }
func (d constant) Yield() (any, []*tensors.Tensor, []*tensors.Tensor, error) {
	return nil, []*tensors.Tensor{tensors.FromValue(d.x)}, nil, nil
}
func (d constant) Reset() {}

// TestStopOn: a stop received during a step ends the loop after that step
// (and after the run's own hooks for it), with the run saved once and
// ErrStopped; with nothing received the loop runs to its end.
func TestStopOn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stopAt    int // the step during which the stop arrives; 0: never
		wantSteps int64
	}{{"stop during step 3", 3, 3}, {"no stop", 0, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.New()
			modelFn := func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
				w := ctx.VariableWithValue("w", float32(1)).ValueGraph(inputs[0].Graph())
				train.AddLoss(ctx, graph.ReduceAllSum(graph.Square(graph.Mul(inputs[0], w))))
				return nil
			}
			trainer := train.NewTrainer(testutil.Backend(), ctx, modelFn, nil, optimizers.StochasticGradientDescent(), nil, nil)
			loop := train.NewLoop(trainer)
			stop := make(chan os.Signal, 1)
			var recorded []int64
			loop.OnStep("record", 0, func(l *train.Loop, _ []*tensors.Tensor) error {
				recorded = append(recorded, l.Trainer.GlobalStep())
				if int(l.Trainer.GlobalStep()) == tc.stopAt {
					stop <- syscall.SIGTERM
				}
				return nil
			})
			var saves []int64
			StopOn(loop, stop, func() error {
				saves = append(saves, trainer.GlobalStep())
				return nil
			})
			_, err := loop.RunToGlobalStep(constant{[]float32{1, 2}}, 5)
			if tc.stopAt > 0 && !errors.Is(err, ErrStopped) {
				t.Fatalf("loop ended with %v, want ErrStopped", err)
			}
			if tc.stopAt == 0 && err != nil {
				t.Fatal(err)
			}
			if got := trainer.GlobalStep(); got != tc.wantSteps || len(recorded) != int(tc.wantSteps) {
				t.Errorf("the loop ran %d steps (recorded %v), want %d", got, recorded, tc.wantSteps)
			}
			wantSaves := []int64{}
			if tc.stopAt > 0 {
				wantSaves = []int64{int64(tc.stopAt)}
			}
			if len(saves) != len(wantSaves) || (len(saves) == 1 && saves[0] != wantSaves[0]) {
				t.Errorf("saved at steps %v, want %v", saves, wantSaves)
			}
		})
	}
}
