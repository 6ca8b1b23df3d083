package classifier_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/internal/testutil"
)

// quadrants is a 4-class set of 6×6 images: noise in [-1, -0.5] with one
// bright quadrant, the class.
func quadrants(n int, seed uint64) *datasets.Images {
	rng := rand.New(rand.NewPCG(seed, 7))
	im := &datasets.Images{Name: "quadrants", N: n, Height: 6, Width: 6, Channels: 1,
		Pixels: make([]float32, n*36), Labels: make([]int, n)}
	for i := range n {
		label := rng.IntN(4)
		im.Labels[i] = label
		for r := range 6 {
			for c := range 6 {
				v := -1 + 0.5*rng.Float64()
				if (r/3)*2+c/3 == label {
					v += 1.4
				}
				im.Pixels[i*36+r*6+c] = float32(v)
			}
		}
	}
	return im
}

func smallConfig() classifier.Config {
	return classifier.Config{Height: 6, Width: 6, Channels: 1, Classes: 4, Hidden: []int{16, 8}, LearningRate: 1e-2, Seed: 3}
}

// naiveForward recomputes logits and features of one image from the
// model's variables with plain loops.
func naiveForward(t *testing.T, ctx *context.Context, cfg classifier.Config, x []float32) (logits, features []float64) {
	t.Helper()
	vars := map[string][]float64{}
	for v := range ctx.IterVariables() {
		if v.MustValue().DType() != dtypes.Float32 {
			continue // the random number generator state
		}
		vars[v.Scope()+"/"+v.Name()] = toFloat64s(v.MustValue())
	}
	dense := func(layer string, in []float64, out int) []float64 {
		w, b := vars["/classifier/"+layer+"/dense/weights"], vars["/classifier/"+layer+"/dense/biases"]
		if w == nil || b == nil {
			t.Fatalf("no dense variables for %s among %v", layer, keys(vars))
		}
		y := make([]float64, out)
		for j := range out {
			y[j] = b[j]
			for i, xi := range in {
				y[j] += xi * w[i*out+j]
			}
		}
		return y
	}
	h := make([]float64, len(x))
	for i, v := range x {
		h[i] = float64(v)
	}
	for i, width := range cfg.Hidden {
		h = dense("hidden_"+string(rune('0'+i)), h, width)
		for j := range h {
			h[j] = math.Max(0, h[j])
		}
	}
	return dense("logits", h, cfg.Classes), h
}

func TestEvaluateMatchesNaiveForward(t *testing.T) {
	cfg := smallConfig()
	model, err := classifier.New(testutil.Backend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := quadrants(7, 1)
	ev, err := model.Evaluate(set, 3) // 3 batches, the last partial
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Predicted) != set.N || len(ev.Features) != set.N*cfg.FeatureDim() {
		t.Fatalf("Evaluate returned %d predictions and %d feature values, want %d and %d",
			len(ev.Predicted), len(ev.Features), set.N, set.N*cfg.FeatureDim())
	}
	for i := range set.N {
		logits, features := naiveForward(t, model.Trainer().Context(), cfg, set.Image(i))
		// TF32 products (emulated): up to 6.1e-4 off.
		testutil.AssertAllClose(t, "features", ev.Features[i*cfg.FeatureDim():(i+1)*cfg.FeatureDim()], features, testutil.ProductTol(1e-4, 3e-3))
		best := 0
		for j, v := range logits {
			if v > logits[best] {
				best = j
			}
		}
		if ev.Predicted[i] != best {
			t.Errorf("image %d: predicted %d, naive arg-max of %v is %d", i, ev.Predicted[i], logits, best)
		}
	}
}

func TestTrainingLearnsAndSurvivesSaveLoad(t *testing.T) {
	cfg := smallConfig()
	model, err := classifier.New(testutil.Backend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	trainSet, testSet := quadrants(256, 1), quadrants(200, 2)
	batches, err := datasets.NewBatches(trainSet, 32, datasets.WithSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.NewLoop(model.Trainer()).RunEpochs(batches, 20); err != nil {
		t.Fatal(err)
	}
	ev, err := model.Evaluate(testSet, 64)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := ev.Accuracy(testSet.Labels)
	if err != nil {
		t.Fatal(err)
	}
	// Chance is 0.25; the classes are separable by a linear function.
	if acc < 0.95 {
		t.Errorf("test accuracy after 20 epochs = %.3f, want ≥ 0.95", acc)
	}

	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := model.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := classifier.Load(testutil.Backend(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.Step(); got != 160 {
		t.Errorf("loaded global step = %d, want 160", got)
	}
	ev2, err := loaded.Evaluate(testSet, 64)
	if err != nil {
		t.Fatal(err)
	}
	testutil.AssertAllClose(t, "features after Load", ev2.Features, ev.Features, 0)
}

func TestAccuracy(t *testing.T) {
	ev := classifier.Evaluation{Predicted: []int{0, 1, 2, 2}}
	tests := []struct {
		labels  []int
		want    float64
		wantErr bool
	}{
		{[]int{0, 1, 2, 2}, 1, false},
		{[]int{0, 1, 2, 3}, 0.75, false},
		{[]int{1, 0, 0, 0}, 0, false},
		{[]int{0, 1}, 0, true},
	}
	for _, tc := range tests {
		got, err := ev.Accuracy(tc.labels)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("Accuracy(%v) = %v, %v; want %v (error: %v)", tc.labels, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*classifier.Config)
		want string
	}{
		{"one class", func(c *classifier.Config) { c.Classes = 1 }, "1 classes"},
		{"no hidden layer", func(c *classifier.Config) { c.Hidden = nil }, "no hidden layers"},
		{"zero width", func(c *classifier.Config) { c.Hidden = []int{4, 0} }, "hidden layer 1 has width 0"},
		{"bad learning rate", func(c *classifier.Config) { c.LearningRate = math.NaN() }, "learning rate NaN"},
		{"bad shape", func(c *classifier.Config) { c.Width = 0 }, "6×0×1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig()
			tc.edit(&cfg)
			if _, err := classifier.New(testutil.Backend(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want one containing %q", err, tc.want)
			}
		})
	}

	model, err := classifier.New(testutil.Backend(), smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	wrong := &datasets.Images{Name: "wrong-size", N: 1, Height: 5, Width: 6, Channels: 1, Pixels: make([]float32, 30)}
	if _, err := model.Evaluate(wrong, 1); err == nil || !strings.Contains(err.Error(), "wrong-size") || !strings.Contains(err.Error(), "6×6×1") {
		t.Errorf("Evaluate(5×6 images) error = %v, want one naming the set and the expected 6×6×1", err)
	}

	// A checkpoint of something else is refused by name.
	dir := filepath.Join(t.TempDir(), "other")
	other := context.New()
	other.SetParam("something", 1)
	other.VariableWithValue("w", []float32{1, 2})
	if err := checkpoint.Save(other, dir, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := classifier.Load(testutil.Backend(), dir); err == nil || !strings.Contains(err.Error(), "classifier checkpoint") {
		t.Errorf("Load(other checkpoint) error = %v, want one asking whether it is a classifier checkpoint", err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := classifier.Load(testutil.Backend(), missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing folder) error = %v, want os.ErrNotExist naming %s", err, missing)
	}
}

func toFloat64s(t *tensors.Tensor) []float64 {
	flat := tensors.MustCopyFlatData[float32](t)
	out := make([]float64, len(flat))
	for i, v := range flat {
		out[i] = float64(v)
	}
	return out
}

func keys(m map[string][]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
