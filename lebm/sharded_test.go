package lebm

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/internal/testutil"
)

// varied is a train.Dataset of a fixed sequence of batches of n noisy
// structured images: every run that reads it sees the same batches.
type varied struct {
	cfg Config
	n   int
	rng *rand.Rand
}

func newVaried(cfg Config, n int) *varied {
	return &varied{cfg: cfg, n: n, rng: rand.New(rand.NewPCG(11, 12))}
}

func (*varied) Name() string { return "varied" }
func (*varied) Reset()       {}
func (v *varied) Yield() (any, []*tensors.Tensor, []*tensors.Tensor, error) {
	base := structuredImages()
	pixels := make([]float64, 0, v.n*testSize*testSize)
	for len(pixels) < cap(pixels) {
		for _, p := range base {
			if len(pixels) < cap(pixels) {
				pixels = append(pixels, math.Max(-1, math.Min(1, p+0.2*v.rng.NormFloat64())))
			}
		}
	}
	return nil, []*tensors.Tensor{imagesTensor(v.cfg, pixels)}, nil, nil
}

// Ways to train of trainOn.
const (
	viaTrainStep = iota // Model.TrainStep, or TrainStepSharded over more than one device
	viaLoop             // GoMLX's train.Loop over Model.Trainer, on one device
)

// trainOn trains a model of cfg on b for steps steps of batches from
// newVaried, split over devices devices, by the way how, and returns every
// step's metrics and the model.
func trainOn(t *testing.T, b backends.Backend, cfg Config, devices, batch, steps, how int) ([]StepMetrics, *Model) {
	t.Helper()
	m, err := New(b, nativeConvTOnXLA(b, cfg))
	if err != nil {
		t.Fatal(err)
	}
	m.block = testChainBlock
	data := newVaried(cfg, batch)
	var got []StepMetrics
	if how == viaTrainStep {
		for range steps {
			_, inputs, _, _ := data.Yield()
			var metrics StepMetrics
			if devices == 1 {
				metrics, err = m.TrainStep(inputs[0])
			} else {
				metrics, err = m.TrainStepSharded(inputs[0], devices)
			}
			if err != nil {
				t.Fatalf("%d devices: %v", devices, err)
			}
			got = append(got, metrics)
		}
		return got, m
	}
	var ds train.Dataset = data
	if devices > 1 {
		t.Fatal("trainOn: the loop runs on one device here (train-lebm's tests run it sharded)")
	}
	loop := train.NewLoop(m.Trainer())
	loop.OnStep("read", 0, func(_ *train.Loop, outs []*tensors.Tensor) error {
		metrics, err := m.ReadStepMetrics(outs)
		got = append(got, metrics)
		return err
	})
	if _, err := loop.RunToGlobalStep(ds, steps); err != nil {
		t.Fatalf("%d devices: %v", devices, err)
	}
	return got, m
}

// GoMLX's train.Loop over Model.Trainer takes the steps of Model.TrainStep
// (exactly), and at a fixed global batch, training split over 4 devices
// (TrainStepSharded) follows single-device training: the same images and
// random draws per step (one stream, partitioned by XLA), so every step's
// losses and the parameters after 20 steps agree up to the order of
// floating-point sums. (The loop over ShardedBatches, on 2 devices, is
// train-lebm's path: its tests run it.)
func TestLoopAndShardedTrainingFollowTrainStep(t *testing.T) {
	t.Parallel()
	b := testutil.MultiDevice(t)
	cfg := tinyConfig(t) // float64: the order of sums shows at 1e-16, not float32's 1e-7
	const batch, steps = 8, 20
	want, single := trainOn(t, b, cfg, 1, batch, steps, viaTrainStep)
	for _, tc := range []struct {
		name         string
		devices, how int
		tol          float64
	}{
		{"loop", 1, viaLoop, 0},
		{"TrainStepSharded over 4 devices", 4, viaTrainStep, 1e-8},
	} {
		got, model := trainOn(t, b, cfg, tc.devices, batch, steps, tc.how)
		worst := 0.0
		for i := range want {
			w, g := want[i], got[i]
			worst = math.Max(worst, testutil.MaxRelativeDiff(
				[]float64{g.GeneratorLoss, g.PriorLoss, g.PosteriorEnergy, g.ReconstructionMSE},
				[]float64{w.GeneratorLoss, w.PriorLoss, w.PosteriorEnergy, w.ReconstructionMSE}, 1e-3))
			if g.Step != w.Step || !g.Finite {
				t.Fatalf("%s: step %d reported as step %d, finite %v", tc.name, w.Step, g.Step, g.Finite)
			}
		}
		t.Logf("%s: largest relative metric difference over %d steps %.2g", tc.name, steps, worst)
		if worst > tc.tol {
			t.Errorf("%s: metrics differ from TrainStep's by up to %.2g (relative), want ≤ %.2g", tc.name, worst, tc.tol)
		}
		wantVars, gotVars := variableValues(t, single.Context(), "/"), variableValues(t, model.Context(), "/")
		for name, w := range wantVars {
			if strings.HasSuffix(name, "#rngState") {
				if !slices.Equal(gotVars[name], w) {
					t.Errorf("%s: the random stream's state differs from TrainStep's", tc.name)
				}
				continue
			}
			testutil.AssertAllClose(t, tc.name+": "+name, gotVars[name], w, tc.tol)
		}
	}
}

// A batch that does not split evenly is refused, naming the sizes.
func TestShardedBatchesRefuseUnevenBatches(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	sharded, err := NewShardedBatches(newVaried(cfg, 6), 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := sharded.DistributedYield(); err == nil || !strings.Contains(err.Error(), "batch of 6 does not split over 4 devices") {
		t.Errorf("a batch of 6 over 4 devices: %v, want a refusal naming both", err)
	}
}
