package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/lebm"
)

// savedRun writes an untrained mnist-size model's checkpoint as train-lebm
// would, with short chains so the evaluation is quick.
func savedRun(t *testing.T) string {
	t.Helper()
	b, _, err := backend.Open("go")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := lebm.DefaultConfig("fashion-mnist")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TestPosteriorLangevin.Steps, cfg.Seed = 5, 3
	model, err := lebm.New(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.PriorSample(1); err != nil { // creates the variables
		t.Fatal(err)
	}
	run := t.TempDir()
	if err := model.Save(filepath.Join(run, "checkpoint")); err != nil {
		t.Fatal(err)
	}
	return run
}

func TestEvaluatesACheckpoint(t *testing.T) {
	runDir := savedRun(t)
	if err := run(options{runDir: runDir, dataDir: mnist.DefaultFashionDir, backend: "go", reconN: 64, batch: 32,
		chains: 4, chainSteps: 200, maxLag: 20, anomalyHoldout: 1, anomalyN: 64, interpRows: 2, interpSteps: 4}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(runDir, "eval", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	// An untrained generator outputs ≈ 0 against pixels in [−1, 1]: the MSE is
	// of the order of the test images' mean square, well inside (0, 4].
	if s.ReconstructionImages != 64 || !(s.ReconstructionMSE > 0.05 && s.ReconstructionMSE < 4) {
		t.Errorf("summary %+v: want 64 images and a plausible MSE", s)
	}
	if math.IsNaN(s.RHat) || s.RHat < 0.8 || s.ChainSteps != 200 || s.Chains != 4 {
		t.Errorf("summary %+v: want R̂ from 4 chains of 200 steps", s)
	}
	if s.AnomalyHeldOut != 1 || s.AnomalyImages != 64 || !(s.AnomalyAUPRC > 0 && s.AnomalyAUPRC <= 1) {
		t.Errorf("summary %+v: want an AUPRC in (0, 1] over 64 images with class 1 held out", s)
	}
	for _, name := range []string{"reconstructions.png", "energy_profile.png", "autocorrelation.png", "prior_interpolation.png", "posterior_interpolation.png"} {
		if _, err := os.Stat(filepath.Join(runDir, "eval", name)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
}

func TestBadInput(t *testing.T) {
	runDir := savedRun(t)
	wrongSize := t.TempDir()
	testutil.WriteBlankIDX(t, filepath.Join(wrongSize, "t10k-images-idx3-ubyte"), 8, 32, 32)
	testutil.WriteBlankIDX(t, filepath.Join(wrongSize, "t10k-labels-idx1-ubyte"), 8)
	cases := []struct {
		name, run, dataDir, mention string
	}{
		{"no run folder", "", mnist.DefaultFashionDir, "-run"},
		{"run without checkpoint", t.TempDir(), mnist.DefaultFashionDir, "no checkpoint"},
		{"data that does not match the checkpoint", runDir, wrongSize, "does not match"},
	}
	for _, c := range cases {
		err := run(options{runDir: c.run, dataDir: c.dataDir, backend: "go", reconN: 8, batch: 8, chains: 2, chainSteps: 100, maxLag: 10, anomalyHoldout: -1, interpRows: 1, interpSteps: 2})
		if err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.mention)
		}
	}
}

func TestInterpolate(t *testing.T) {
	z := []float32{0, 10, 2, 20} // one pair of 2-dimensional latents
	got := interpolate(z, 2, 3)
	want := []float32{0, 10, 1, 15, 2, 20}
	if len(got) != len(want) {
		t.Fatalf("interpolate = %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("interpolate = %v, want %v", got, want)
		}
	}
}
