package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/training"
)

func readSummary(t *testing.T, out string) lebmrun.ClassifierSummary {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s lebmrun.ClassifierSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// On a 1,000-image slice of Fashion-MNIST the classifier learns far above
// chance, caches 128-d training statistics, and a longer second run resumes.
func TestTrainsCachesStatisticsAndResumes(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	out := t.TempDir()
	o := options{dataDir: mnist.DefaultFashionDir, out: out, backend: testutil.BackendName(), epochs: 2, batch: 100, trainN: 1000}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	if s.Steps != 20 || s.FeatureDim != 128 {
		t.Errorf("summary %+v: want 20 steps and 128-d features", s)
	}
	// Chance is 0.1; two epochs on 1,000 images reach ≈ 0.7.
	if s.TestAccuracy < 0.55 {
		t.Errorf("test accuracy %.3f after 2 epochs on 1,000 images, want ≥ 0.55", s.TestAccuracy)
	}
	// The test split's FID is small next to that of a different image set:
	// the same statistics against the training features of one class only.
	mu, sigma, err := evalfile.LoadStats(filepath.Join(out, classifier.StatsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(mu) != 128 || !(s.TestFID > 0) {
		t.Fatalf("statistics of dimension %d and test FID %v: want 128 and > 0", len(mu), s.TestFID)
	}
	clf, err := classifier.Load(testutil.Backend(), filepath.Join(out, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	train, err := mnist.Load(mnist.DefaultFashionDir, "train")
	if err != nil {
		t.Fatal(err)
	}
	var oneClass []int
	for i, l := range train.Labels {
		if l == 1 && len(oneClass) < 500 {
			oneClass = append(oneClass, i)
		}
	}
	trousers, err := train.Subset(oneClass)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := clf.Evaluate(trousers, 100)
	if err != nil {
		t.Fatal(err)
	}
	classFID, err := eval.FrechetDistanceToStats(ev.Features, mu, sigma)
	if err != nil {
		t.Fatal(err)
	}
	if classFID < 5*s.TestFID {
		t.Errorf("FID of trousers only %.3f vs test split %.3f: want the one-class set ≥ 5× farther", classFID, s.TestFID)
	}

	o.epochs = 3
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	if s := readSummary(t, out); s.Steps != 30 {
		t.Errorf("after resuming to 3 epochs the classifier took %d steps, want 30", s.Steps)
	}
}

func TestBadInput(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	for _, tc := range []struct {
		name string
		o    options
		want string
	}{
		{"no data", options{dataDir: "/no/such/dir", epochs: 1, batch: 10}, "/no/such/dir"},
		{"zero epochs", options{dataDir: mnist.DefaultFashionDir, epochs: 0, batch: 10}, "-epochs"},
		{"unknown setting", options{dataDir: mnist.DefaultFashionDir, epochs: 1, batch: 10, set: "classifier_depth=3"}, "flag -set"},
		{"bad setting", options{dataDir: mnist.DefaultFashionDir, epochs: 1, batch: 10, set: "classifier_hidden=0"}, "hidden layer 0 has width 0"},
	} {
		tc.o.out, tc.o.backend = t.TempDir(), testutil.BackendName()
		if err := run(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// -set changes the classifier, the checkpoint keeps the change, and a run
// resumed with other settings is refused, naming them.
func TestSetIsStoredAndChecked(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	out := t.TempDir()
	o := options{dataDir: mnist.DefaultFashionDir, out: out, backend: testutil.BackendName(), epochs: 1, batch: 100, trainN: 500,
		set: "classifier_hidden=32,16;classifier_seed=5"}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	clf, err := classifier.Load(testutil.Backend(), filepath.Join(out, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := clf.Config(); !slices.Equal(cfg.Hidden, []int{32, 16}) || cfg.Seed != 5 {
		t.Errorf("checkpoint holds %+v, want hidden [32 16] and seed 5", cfg)
	}
	o.set, o.epochs = "classifier_hidden=32,16", 2
	if err := run(o); err == nil || !strings.Contains(err.Error(), "classifier_seed=1") {
		t.Errorf("resuming with the default seed: %v, want a refusal naming classifier_seed=1", err)
	}
}

// fixtureOptions are the settings of testdata/make-fixture.sh's runs, 2
// epochs, writing into out and stopping on stop.
func fixtureOptions(out string, stop chan os.Signal) options {
	return options{dataDir: mnist.DefaultFashionDir, out: out, backend: "go", epochs: 2, batch: 256, trainN: 512,
		set: "classifier_hidden=16,8", stop: stop}
}

// TestResumesARunOfAnEarlierVersion: a run folder that train-classifier
// wrote at commit 98af0f0 (testdata/make-fixture.sh: a tiny classifier on
// SimpleGo after epoch 1) resumes with today's command to exactly the
// summary of that version's run trained 2 epochs without stopping.
func TestResumesARunOfAnEarlierVersion(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	fixture := filepath.Join("testdata", "run-98af0f0")
	out := t.TempDir()
	if err := os.CopyFS(filepath.Join(out, "checkpoint"), os.DirFS(filepath.Join(fixture, "checkpoint"))); err != nil {
		t.Fatal(err)
	}
	stepTwo := func(dir string) []string {
		files, _ := filepath.Glob(filepath.Join(dir, "checkpoint", "step-000000002", "*"))
		for i := range files {
			files[i] = filepath.Base(files[i])
		}
		return files
	}
	if err := run(fixtureOptions(out, nil)); err != nil {
		t.Fatal(err)
	}
	// The step-2 checkpoint is still the fixture's own files: the run went
	// on from it rather than training (and saving) steps 1 and 2 again.
	if got, want := stepTwo(out), stepTwo(fixture); !slices.Equal(got, want) {
		t.Errorf("step 2's checkpoint holds %v, want the fixture's %v", got, want)
	}
	got, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(fixture, "uninterrupted-summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !sameSummary(t, got, want) {
		t.Errorf("resumed summary:\n%s\nuninterrupted at 98af0f0:\n%s", got, want)
	}
}

// sameSummary tells whether two summary.json files agree: every field
// equal, but the test FID within 1e-12 relative, since the Fréchet
// distance's route changed after 98af0f0 (eval's Cholesky route: the same
// value to rounding, 7.5e-14 relative on the fixture).
func sameSummary(t *testing.T, got, want []byte) bool {
	t.Helper()
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	gf, okG := g["test_fid"].(float64)
	wf, okW := w["test_fid"].(float64)
	if !okG || !okW || math.Abs(gf-wf) > 1e-12*math.Abs(wf) {
		return false
	}
	delete(g, "test_fid")
	delete(w, "test_fid")
	return reflect.DeepEqual(g, w)
}

// TestFewerImagesThanAnEvaluationBatch: a training set smaller than the
// evaluation batch is evaluated whole (it once failed after training).
func TestFewerImagesThanAnEvaluationBatch(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	out := t.TempDir()
	o := options{dataDir: mnist.DefaultFashionDir, out: out, backend: "go", epochs: 1, batch: 32, trainN: 64, set: "classifier_hidden=16,8"}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Error(err)
	}
}

// TestStopSignalSavesAndResumes: a stop that arrives during the first step
// ends the run after it, checkpointed, with training.ErrStopped; run
// again, it ends with the summary of a run that never stopped (the
// fixture of TestResumesARunOfAnEarlierVersion, on the same backend).
func TestStopSignalSavesAndResumes(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	out := t.TempDir()
	testutil.StopThenResume(t, training.ErrStopped, func(stop chan os.Signal) error {
		if stop == nil { // the first run's checkpoint is step 1's
			if latest, err := checkpoint.Latest(filepath.Join(out, "checkpoint")); err != nil || filepath.Base(latest) != "step-000000001" {
				t.Fatalf("after the stop the checkpoint is %s (%v), want step 1's", latest, err)
			}
		}
		return run(fixtureOptions(out, stop))
	})
	got, errGot := os.ReadFile(filepath.Join(out, "summary.json"))
	want, errWant := os.ReadFile(filepath.Join("testdata", "run-98af0f0", "uninterrupted-summary.json"))
	if errGot != nil || errWant != nil || !sameSummary(t, got, want) {
		t.Errorf("summary of the stopped and resumed run:\n%s\nof one that never stopped:\n%s (%v, %v)", got, want, errGot, errWant)
	}
}
