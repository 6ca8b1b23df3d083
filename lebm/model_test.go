package lebm

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/nets"
)

// newModel creates a model from cfg or fails the test.
func newModel(t *testing.T, cfg Config) *Model {
	t.Helper()
	m, err := New(testBackend(), nativeConvTOnXLA(testBackend(), cfg))
	if err != nil {
		t.Fatal(err)
	}
	m.block = testChainBlock
	return m
}

// nativeConvTOnXLA is cfg with the generator's native transposed
// convolution if b is XLA. The SimpleGo pass runs the tests' models with
// the shift form (ConvTAuto's choice there, and on XLA CPU for the tiny
// generators' layers); on XLA the native one, which XLA compiles fastest,
// so the two passes cover two forms (package nets checks every form
// against the naive loop).
func nativeConvTOnXLA(b backends.Backend, cfg Config) Config {
	if b.Name() == "xla" {
		cfg.ConvTImpl = string(nets.ConvTNative)
	}
	return cfg
}

// trainStep runs one training step or fails the test.
func trainStep(t *testing.T, m *Model, x *tensors.Tensor) StepMetrics {
	t.Helper()
	metrics, err := m.TrainStep(x)
	if err != nil {
		t.Fatal(err)
	}
	return metrics
}

func TestFirstStepMovesEachModelByItsLearningRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		method string
		epochs int
		decay  float64
	}{
		// ED's case covers the decay too (XLA compiles each case's step,
		// seconds each).
		{"ed after 2 epochs of decay 0.5", MethodED, 2, 0.5},
		{"cd", MethodCD, 0, 1},
		{"sm", MethodSM, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tinyConfig(t)
			cfg.Method, cfg.LRDecay = tc.method, tc.decay
			cfg.GeneratorLR, cfg.PriorLR = 1e-3, 2e-4
			m := newModel(t, cfg)
			x := imagesTensor(cfg, structuredImages())
			for range tc.epochs {
				if err := m.EndEpoch(); err != nil {
					t.Fatal(err)
				}
			}
			before := map[string]map[string][]float64{
				GeneratorScope: variableValues(t, m.Context(), "/"+GeneratorScope),
				PriorScope:     variableValues(t, m.Context(), "/"+PriorScope),
			}
			if got := trainStep(t, m, x).Step; got != 1 {
				t.Errorf("first step reported as step %d, want 1", got)
			}
			// Adam's first step is lr·g/(|g| + ε): ±lr wherever the gradient
			// is not tiny.
			factor := math.Pow(tc.decay, float64(tc.epochs))
			for scope, lr := range map[string]float64{GeneratorScope: cfg.GeneratorLR * factor, PriorScope: cfg.PriorLR * factor} {
				after := variableValues(t, m.Context(), "/"+scope)
				var n, full int
				for name, old := range before[scope] {
					for i, v := range old {
						step := math.Abs(after[name][i] - v)
						if step > lr*(1+1e-6) {
							t.Fatalf("%s[%d] moved by %g, more than its learning rate %g", name, i, step, lr)
						}
						n++
						if step > 0.98*lr {
							full++
						}
					}
				}
				if full < n*9/10 {
					t.Errorf("%s: only %d of %d parameters moved by ≈ lr %g", scope, full, n, lr)
				}
			}
		})
	}
}

func TestTrainingReducesReconstructionError(t *testing.T) {
	t.Parallel()
	for _, method := range Methods {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			cfg := tinyConfig(t)
			cfg.DType = "float32"
			cfg.Method = method
			cfg.PosteriorLangevin.Steps, cfg.PriorLangevin.Steps = 10, 10
			cfg.TestPosteriorLangevin.Steps = 5 * testChainBlock
			cfg.GeneratorLR, cfg.PriorLR = 3e-3, 1e-3
			m := newModel(t, cfg)
			x := imagesTensor(cfg, structuredImages())
			const steps = 150
			var first, last float64
			for i := range steps {
				metrics := trainStep(t, m, x)
				if !metrics.Finite || metrics.PriorSampled != (method == MethodCD) || metrics.Step != int64(i+1) {
					t.Fatalf("step %d: metrics %+v", i+1, metrics)
				}
				if i < 5 {
					first += metrics.ReconstructionMSE / 5
				}
				if i >= steps-5 {
					last += metrics.ReconstructionMSE / 5
				}
			}
			if !(last < first/4) {
				t.Errorf("reconstruction MSE went from %.4f (first 5 steps) to %.4f (last 5); want below a quarter", first, last)
			}
			if step := m.Step(); step != steps {
				t.Errorf("Step() = %d; want %d", step, steps)
			}
			if m.trainGraphs != 1 {
				t.Errorf("%d training steps built %d graphs, want 1", steps, m.trainGraphs)
			}

			// The trained model explains its images better than noise.
			noise := make([]float64, len(structuredImages()))
			for i := range noise {
				noise[i] = math.Sin(float64(i*i)) * 0.8
			}
			scores := func(data []float64) float64 {
				s, err := m.AnomalyScore(imagesTensor(cfg, data))
				if err != nil {
					t.Fatal(err)
				}
				var mean float64
				for _, v := range tensors.MustCopyFlatData[float32](s) {
					mean += float64(v) / testBatch
				}
				return mean
			}
			if train, other := scores(structuredImages()), scores(noise); !(train < other) {
				t.Errorf("mean anomaly score of the training images %g is not below that of noise images %g", train, other)
			}
		})
	}
}

func TestNaNBatchIsRejectedWithoutChangingTheModel(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	m := newModel(t, cfg)
	clean := structuredImages()
	trainStep(t, m, imagesTensor(cfg, clean))
	before := variableValues(t, m.Context(), "/")

	bad := append([]float64{}, clean...)
	bad[17] = math.NaN()
	metrics, err := m.TrainStep(imagesTensor(cfg, bad))
	if err == nil {
		t.Fatal("training on a batch with NaN returned no error")
	}
	for _, want := range []string{"training step 2", "input batch x", "NaN"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if metrics.Finite {
		t.Errorf("metrics of the failed step report Finite")
	}
	after := variableValues(t, m.Context(), "/")
	for name, old := range before {
		if strings.HasSuffix(name, "#rngState") {
			continue
		}
		for i := range old {
			if after[name][i] != old[i] {
				t.Fatalf("variable %s[%d] changed from %g to %g in the rejected step", name, i, old[i], after[name][i])
			}
		}
	}
	if got := trainStep(t, m, imagesTensor(cfg, clean)).Step; got != 2 {
		t.Errorf("the step after the rejected one is step %d, want 2", got)
	}
}

// TestResumeEqualsUninterruptedTraining trains 2 steps, ends an epoch,
// trains 1 more and saves; the model goes on for 3 steps, and so does the
// model loaded from the save: every step's metrics and, at the end, every
// variable — parameters, both Adams' moments and step counts, the epoch,
// the global step and the random generator's state — must be identical.
// Saving must leave the saving model's variables as they were, so that its
// 3 steps are those of uninterrupted training.
func TestResumeEqualsUninterruptedTraining(t *testing.T) {
	t.Parallel()
	for _, method := range []string{MethodED, MethodCD} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			cfg := tinyConfig(t)
			cfg.Method, cfg.LRDecay = method, 0.5
			x := imagesTensor(cfg, structuredImages())
			straight := newModel(t, cfg)
			trainStep(t, straight, x)
			trainStep(t, straight, x)
			if err := straight.EndEpoch(); err != nil {
				t.Fatal(err)
			}
			trainStep(t, straight, x)
			dir := filepath.Join(t.TempDir(), "model")
			beforeSave := allVariables(t, straight)
			if err := straight.Save(dir); err != nil {
				t.Fatal(err)
			}
			if afterSave := allVariables(t, straight); !reflect.DeepEqual(afterSave, beforeSave) {
				t.Fatal("saving changed the model's variables")
			}
			var want []StepMetrics
			for range 3 {
				want = append(want, trainStep(t, straight, x))
			}

			resumed, err := Load(testBackend(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := resumed.Config(), straight.Config(); !reflect.DeepEqual(got, want) {
				t.Errorf("loaded config %+v, want the saved model's %+v", got, want)
			}
			if epoch, err := resumed.Epoch(); err != nil || epoch != 1 {
				t.Errorf("loaded Epoch() = %d, %v; want 1", epoch, err)
			}
			for i := range want {
				if got := trainStep(t, resumed, x); got != want[i] {
					t.Fatalf("step %d after loading: metrics %+v, uninterrupted %+v", i+1, got, want[i])
				}
			}
			got, wantVars := allVariables(t, resumed), allVariables(t, straight)
			if len(got) != len(wantVars) {
				t.Errorf("resumed model has %d variables, uninterrupted %d", len(got), len(wantVars))
			}
			for name, w := range wantVars {
				if g, ok := got[name]; !ok {
					t.Errorf("variable %s missing after resuming", name)
				} else if g != w {
					t.Errorf("variable %s after resuming = %.80s…, uninterrupted %.80s…", name, g, w)
				}
			}
			if err := resumed.Save(dir); err != nil {
				t.Errorf("saving a loaded model back to its directory: %v", err)
			}
			if _, err := Load(testBackend(), filepath.Join(dir, "missing")); err == nil {
				t.Errorf("loading from a missing directory returned no error")
			}
		})
	}
}

// Draws made in Aside (pictures between steps) leave the training steps
// as they would have been without them; the same draws made outside Aside
// change the next step, which shows they draw from the training stream.
// Each case starts from the state after a first step, restored (Restore
// keeps the compiled graphs, so one model serves every case).
func TestAsideLeavesTheTrainingStreamAlone(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	x := imagesTensor(cfg, structuredImages())
	m := newModel(t, cfg)
	trainStep(t, m, x)
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	afterFirst, err := LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	secondStep := func(between func(m *Model) error) StepMetrics {
		if err := m.RestorePath(afterFirst); err != nil {
			t.Fatal(err)
		}
		if err := between(m); err != nil {
			t.Fatal(err)
		}
		return trainStep(t, m, x)
	}
	generate := func(m *Model) error {
		samples, err := m.Generate(2)
		if err == nil {
			samples.FinalizeAll()
		}
		return err
	}
	plain := secondStep(func(*Model) error { return nil })
	if aside := secondStep(func(m *Model) error { return m.Aside(func() error { return generate(m) }) }); aside != plain {
		t.Errorf("second step after drawing samples aside: %+v, without drawing %+v", aside, plain)
	}
	if drawn := secondStep(generate); drawn == plain {
		t.Error("drawing samples outside Aside did not change the next step: the test cannot tell Aside works")
	}
}

// allVariables is every variable of m's context, printed exactly, by
// scope-qualified name.
func allVariables(t *testing.T, m *Model) map[string]string {
	t.Helper()
	out := map[string]string{}
	for v := range m.Context().IterVariables() {
		if !isModelState(v) {
			continue
		}
		value, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		out[v.ScopeAndName()] = fmt.Sprint(value.Value())
	}
	return out
}

func TestSamplingShapes(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	m := newModel(t, cfg)
	x := imagesTensor(cfg, structuredImages())
	for _, tc := range []struct {
		name string
		run  func() (*tensors.Tensor, error)
		dims []int
		// bound, if > 0, bounds every value's magnitude.
		bound float64
	}{
		{"PriorSample", func() (*tensors.Tensor, error) { return m.PriorSample(3) }, []int{3, testNz}, 0},
		{"Generate", func() (*tensors.Tensor, error) { return m.Generate(3) }, []int{3, testSize, testSize, 1}, 1},
		{"PosteriorSample", func() (*tensors.Tensor, error) { return m.PosteriorSample(x) }, []int{testBatch, testNz}, 0},
		{"Reconstruct", func() (*tensors.Tensor, error) { return m.Reconstruct(x) }, []int{testBatch, testSize, testSize, 1}, 1},
		{"AnomalyScore", func() (*tensors.Tensor, error) { return m.AnomalyScore(x) }, []int{testBatch}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.run()
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Shape().Dimensions; !slices.Equal(got, tc.dims) {
				t.Fatalf("shape %v, want %v", got, tc.dims)
			}
			for i, v := range tensors.MustCopyFlatData[float64](out) {
				if math.IsNaN(v) || math.IsInf(v, 0) || (tc.bound > 0 && math.Abs(v) >= tc.bound) {
					t.Fatalf("value %d = %g out of range", i, v)
				}
			}
		})
	}
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	m := newModel(t, cfg)
	float32Images := cfg
	float32Images.DType = "float32"
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"wrong image size", func() error {
			_, err := m.TrainStep(tensors.FromFlatDataAndDimensions(make([]float64, 2*16), 2, 4, 4, 1))
			return err
		}, "want (Float64)[batch, 8, 8, 1]"},
		{"wrong dtype", func() error {
			_, err := m.Reconstruct(imagesTensor(float32Images, structuredImages()))
			return err
		}, "want (Float64)[batch, 8, 8, 1]"},
		{"nil images", func() error { _, err := m.PosteriorSample(nil); return err }, "nil"},
		{"no samples", func() error { _, err := m.Generate(0); return err }, "n = 0"},
		{"invalid config", func() error {
			bad := cfg
			bad.Sigma = -1
			_, err := New(testBackend(), bad)
			return err
		}, "Sigma"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// BenchmarkTrainStep times one training step of the tiny model (batch 4,
// float32) with the paper's chain lengths: 20 posterior steps, and 60 prior
// steps for contrastive divergence.
func BenchmarkTrainStep(b *testing.B) {
	for _, method := range Methods {
		b.Run(method, func(b *testing.B) {
			cfg := tinyConfig(b)
			cfg.DType, cfg.Method = "float32", method
			cfg.PosteriorLangevin.Steps, cfg.PriorLangevin.Steps = 20, 60
			m, err := New(testBackend(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			x := imagesTensor(cfg, structuredImages())
			if _, err := m.TrainStep(x); err != nil { // compile
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := m.TrainStep(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReducedPrecisionTracksFloat32 trains the same float32 model from
// the same seed in float32, with bfloat16 generator layers, and with every
// matrix product's inputs rounded to TF32 (backend.EmulateTF32, what XLA
// does on NVIDIA GPUs by default): the reconstruction error of each stays
// within its tolerance of float32's at every step (measured: bfloat16
// 1.6–3.6 %, TF32 0.02–0.12 %), differs from it (so the reduced precision
// did run) and falls by half. Where the tests' backend is itself TF32 (a
// GPU), TF32 is compared with a float32 run on SimpleGo.
func TestReducedPrecisionTracksFloat32(t *testing.T) {
	t.Parallel()
	type run struct {
		name    string
		compute string // Config.ComputeDType
		backend backends.Backend
		against int     // index of the float32 run compared with; -1: none
		tol     float64 // largest relative MSE difference
	}
	runs := []run{
		{"float32", "", testBackend(), -1, 0},
		{"bfloat16 layers", "bfloat16", testBackend(), 0, 0.05},
	}
	full, fullRun := testBackend(), 0 // float32 products in float32, and its run
	if testutil.TF32() {
		full, fullRun = testutil.SimpleGo(), len(runs)
		runs = append(runs, run{"float32 on SimpleGo", "", full, -1, 0})
	}
	runs = append(runs, run{"TF32 products", "", backend.EmulateTF32(full), fullRun, 0.01})
	// The compute dtype reaches the generator alone, whose training is the
	// same for every prior update (XLA compiles each run's step, seconds
	// each): one method covers it.
	for _, method := range []string{MethodED} {
		t.Run(method, func(t *testing.T) {
			mse := make([][]float64, len(runs))
			for i, r := range runs {
				cfg := tinyConfig(t)
				cfg.DType, cfg.ComputeDType, cfg.Method = "float32", r.compute, method
				cfg.PosteriorLangevin.Steps, cfg.PriorLangevin.Steps = 20, 20
				cfg.GeneratorLR, cfg.PriorLR = 3e-3, 1e-3
				m, err := New(r.backend, nativeConvTOnXLA(r.backend, cfg))
				if err != nil {
					t.Fatal(err)
				}
				x := imagesTensor(cfg, structuredImages())
				for range 60 {
					mse[i] = append(mse[i], trainStep(t, m, x).ReconstructionMSE)
				}
			}
			for i, r := range runs {
				if r.against < 0 {
					continue
				}
				got, base, worst := mse[i], mse[r.against], 0.0
				for s := range base {
					worst = math.Max(worst, math.Abs(got[s]-base[s])/base[s])
				}
				t.Logf("%s: reconstruction MSE at most %.2f %% from float32's over %d steps", r.name, 100*worst, len(got))
				if worst > r.tol {
					t.Errorf("%s: reconstruction MSE up to %.1f %% from float32's, want ≤ %.0f %%", r.name, 100*worst, 100*r.tol)
				}
				if got[0] == base[0] {
					t.Errorf("%s: first step's MSE equals float32's exactly: the reduced precision did not run", r.name)
				}
				if last := got[len(got)-1]; !(last < got[0]/2) {
					t.Errorf("%s: reconstruction MSE %.4f → %.4f, want it halved", r.name, got[0], last)
				}
			}
		})
	}
}

func TestSeedRestartsTheRandomStream(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	m := newModel(t, cfg)
	x := imagesTensor(cfg, structuredImages())
	sample := func() []float64 {
		t.Helper()
		z, err := m.PosteriorSample(x)
		if err != nil {
			t.Fatal(err)
		}
		return flatFloat64(t, z)
	}
	if err := m.Seed(7); err != nil {
		t.Fatal(err)
	}
	first, second := sample(), sample()
	if slices.Equal(first, second) {
		t.Fatal("two posterior samples in a row are equal: want the stream to move on")
	}
	if err := m.Seed(7); err != nil {
		t.Fatal(err)
	}
	if again := sample(); !slices.Equal(again, first) {
		t.Errorf("after reseeding with 7 the sample differs from the first after seeding with 7 (first values %v vs %v)", again[:2], first[:2])
	}
}

// noPanic runs f, turning a panic into an error: the API returns errors.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	return f()
}

// TestCheckImagesRejectsEachWrongDimension checks the image validation of
// TrainStep and the samplers against the generator's 8×8×1 float64 output,
// one wrong dimension at a time, with a batch of one image valid.
func TestCheckImagesRejectsEachWrongDimension(t *testing.T) {
	t.Parallel()
	m := &Model{cfg: tinyConfig(t)} // checkImages reads only the Config
	for _, tc := range []struct {
		name  string
		x     *tensors.Tensor
		valid bool
	}{
		{"batch of one", tensors.FromShape(shapes.Make(dtypes.Float64, 1, 8, 8, 1)), true},
		{"rank 5", tensors.FromShape(shapes.Make(dtypes.Float64, 2, 8, 8, 1, 1)), false},
		{"rank 3", tensors.FromShape(shapes.Make(dtypes.Float64, 2, 8, 8)), false},
		{"height", tensors.FromShape(shapes.Make(dtypes.Float64, 2, 7, 8, 1)), false},
		{"width", tensors.FromShape(shapes.Make(dtypes.Float64, 2, 8, 9, 1)), false},
		{"channels", tensors.FromShape(shapes.Make(dtypes.Float64, 2, 8, 8, 3)), false},
		{"dtype", tensors.FromShape(shapes.Make(dtypes.Float32, 2, 8, 8, 1)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := noPanic(func() error { return m.checkImages("checking", tc.x) })
			if tc.valid {
				if err != nil {
					t.Errorf("checkImages(%s) = %v, want nil", tc.x.Shape(), err)
				}
				return
			}
			for _, want := range []string{"checking", tc.x.Shape().String(), "want (Float64)[batch, 8, 8, 1]"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("checkImages(%s) = %v, want an error containing %q", tc.x.Shape(), err, want)
				}
			}
		})
	}
}

// TestDecodeRejectsBadLatents checks Decode's validation of latents against
// the model's [batch, nz = 4] float64: each error names the shape received.
func TestDecodeRejectsBadLatents(t *testing.T) {
	t.Parallel()
	m := &Model{cfg: tinyConfig(t)} // no graphs: validation comes first
	for _, tc := range []struct {
		name  string
		z     *tensors.Tensor
		shape string // the shape the error must name
	}{
		{"nil", nil, "shape nil"},
		{"rank 1", tensors.FromShape(shapes.Make(dtypes.Float64, 4)), "(Float64)[4]"},
		{"rank 3", tensors.FromShape(shapes.Make(dtypes.Float64, 2, 4, 1)), "(Float64)[2 4 1]"},
		{"latent size", tensors.FromShape(shapes.Make(dtypes.Float64, 2, 3)), "(Float64)[2 3]"},
		{"dtype", tensors.FromShape(shapes.Make(dtypes.Float32, 2, 4)), "(Float32)[2 4]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := noPanic(func() error { _, err := m.Decode(tc.z); return err })
			for _, want := range []string{tc.shape, "want (Float64)[batch, 4]"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Decode error %v, want one containing %q", err, want)
				}
			}
		})
	}
}
