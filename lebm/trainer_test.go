package lebm

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
)

// repeated is a train.Dataset yielding copies of one image batch.
type repeated struct {
	cfg    Config
	pixels []float64
}

func (repeated) Name() string { return "repeated" }
func (repeated) Reset()       {}
func (r repeated) Yield() (any, []*tensors.Tensor, []*tensors.Tensor, error) {
	return nil, []*tensors.Tensor{imagesTensor(r.cfg, r.pixels)}, nil, nil
}

// A step whose loss is NaN stops the loop with ReadStepMetrics' error,
// which names the step and every failed check, and leaves the global step.
func TestLoopStopsOnADivergedStep(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	model := newModel(t, cfg)
	pixels := structuredImages()
	pixels[3] = math.Inf(1)
	loop := train.NewLoop(model.Trainer())
	loop.OnStep("read", 0, func(_ *train.Loop, outs []*tensors.Tensor) error {
		_, err := model.ReadStepMetrics(outs)
		return err
	})
	_, err := loop.RunToGlobalStep(repeated{cfg, pixels}, 2)
	if err == nil {
		t.Fatal("the loop ran a batch with +Inf to the end")
	}
	for _, want := range []string{"training step 1 diverged", "input batch x", "generator loss", "discarded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if step := model.Step(); step != 0 {
		t.Errorf("global step %d after the discarded step, want 0", step)
	}
}

func TestDescribeChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mask int32
		want string
	}{
		{0, "none"},
		{1, "input batch x"},
		{1<<2 | 1<<6, "generator loss, updated model and optimizer variables"},
		{1 << 20, ""}, // no such check
	} {
		if got := describeChecks(tc.mask); got != tc.want {
			t.Errorf("describeChecks(%b) = %q, want %q", tc.mask, got, tc.want)
		}
	}
}
