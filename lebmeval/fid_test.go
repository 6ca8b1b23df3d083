package lebmeval

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/fid"
	"github.com/edlebm/edlebm/internal/testutil"
)

// narrowInception is the width-16 FID network with random weights that the
// fid package's tests check against PyTorch: 128-d features.
const narrowInception = "../fid/testdata/inception-d16.pth"

// fidOptions evaluates runDir with the narrow network and nothing else slow.
func fidOptions(t *testing.T, runDir string) Options {
	return Options{Run: runDir, Data: "fashion-mnist", DataDir: mnist.DefaultFashionDir, Backend: testutil.BackendName(), ReconN: 43, Batch: 43, Chains: 2,
		ChainSteps: 100, MaxLag: 10, AnomalyHoldout: -1, InterpolationRows: 1, InterpolationSteps: 2, Out: t.TempDir(),
		Inception: narrowInception, FIDStats: filepath.Join(t.TempDir(), "cache", "stats.bin"), FIDSamples: 129, FIDTrainN: 129,
		PosteriorSteps: 3, GenerationSteps: 100, GenerationStep: 0.25, Bootstrap: 1000, FIDBootstrap: 20}
}

func TestInceptionFID(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	o := fidOptions(t, savedRun(t, -1))
	if err := Evaluate(o); err != nil {
		t.Fatal(err)
	}
	s, err := evalfile.ReadReport(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	if s.TestPosteriorSteps != 3 || s.TestPosteriorStepSize != 0.1 || s.GenerationSteps != 100 || s.GenerationStepSize != 0.25 {
		t.Errorf("summary samplers %d × %v and %d × %v, want the flags' 3 × 0.1 (the checkpoint's step) and 100 × 0.25",
			s.TestPosteriorSteps, s.TestPosteriorStepSize, s.GenerationSteps, s.GenerationStepSize)
	}
	if s.FIDSamples != 129 || s.Inception != narrowInception || s.FIDStats != o.FIDStats || !(s.FID > 0) || math.IsInf(s.FID, 0) {
		t.Errorf("summary %+v: want a finite positive FID of 129 samples", s)
	}
	// Its interval from -fid-bootstrap's 20 resamples, not -bootstrap's 1000.
	if iv := s.FIDInterval; s.FIDBootstrap != 20 || iv == nil || !(iv.Lo > 0 && iv.Lo < iv.Hi) || math.IsInf(iv.Hi, 0) {
		t.Errorf("summary FID interval %+v from %d resamples, want a finite positive interval from 20", iv, s.FIDBootstrap)
	}
	// The cache holds the statistics of the first -fid-train-n training
	// images: recompute their features and, by plain loops, their mean and
	// (n−1)-normalised covariance.
	mu, sigma, err := evalfile.LoadStats(o.FIDStats)
	if err != nil {
		t.Fatal(err)
	}
	net, err := fid.Load(testutil.Backend(), narrowInception)
	if err != nil {
		t.Fatal(err)
	}
	const n, dim = 129, 128
	train, err := mnist.LoadHead(mnist.DefaultFashionDir, "train", n)
	if err != nil {
		t.Fatal(err)
	}
	features, err := net.Features(train, 43) // 3 whole batches: one graph to compile
	if err != nil {
		t.Fatal(err)
	}
	if len(mu) != dim {
		t.Fatalf("cached statistics are %d-d, want %d", len(mu), dim)
	}
	wantMu := make([]float64, dim)
	for i := range n {
		for j := range dim {
			wantMu[j] += features[i*dim+j] / n
		}
	}
	testutil.AssertAllClose(t, "cached mean", mu, wantMu, 1e-9)
	var gotSigma, wantSigma []float64
	for j := range dim {
		for k := range dim {
			c := 0.0
			for i := range n {
				c += (features[i*dim+j] - wantMu[j]) * (features[i*dim+k] - wantMu[k])
			}
			wantSigma = append(wantSigma, c/(n-1))
			gotSigma = append(gotSigma, sigma.At(j, k))
		}
	}
	testutil.AssertAllClose(t, "cached covariance", gotSigma, wantSigma, 1e-9)
	if _, err := os.Stat(filepath.Join(o.Out, "samples.png")); err != nil {
		t.Error(err)
	}
}

func TestInceptionFIDBadInput(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	runDir := savedRun(t, -1)
	wrongDim := filepath.Join(t.TempDir(), "stats.bin")
	if err := evalfile.SaveStats(wrongDim, make([]float64, 3), mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		edit    func(*Options)
		mention []string
	}{
		{"no weights file", func(o *Options) { o.Inception = "none.pth" }, []string{"Options.Inception", "none.pth"}},
		{"not a state dict", func(o *Options) { o.Inception = "../fid/testdata/not-a-state-dict.pth" }, []string{"Options.Inception", "want a state dict"}},
		{"too few samples", func(o *Options) { o.FIDSamples = 100 }, []string{"Options.FIDSamples 100", "128 Inception feature dimensions"}},
		{"too few training images", func(o *Options) { o.FIDTrainN = 50 }, []string{"Options.FIDTrainN", "50"}},
		{"negative training images", func(o *Options) { o.FIDTrainN = -1 }, []string{"Options.FIDTrainN -1"}},
		{"statistics of another network", func(o *Options) { o.FIDStats = wrongDim }, []string{"Options.FIDStats", "3-d statistics", "128-d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := fidOptions(t, runDir)
			o.Out = filepath.Join(o.Out, "eval")
			c.edit(&o)
			err := Evaluate(o)
			for _, m := range c.mention {
				if err == nil || !strings.Contains(err.Error(), m) {
					t.Errorf("error %v, want one mentioning %q", err, m)
				}
			}
			// Refused before the slow work, which starts by creating -out.
			if _, err := os.Stat(o.Out); err == nil {
				t.Errorf("Options.Out %s was created", o.Out)
			}
		})
	}
}

func TestDefaultFIDStatsPathNamesItsInputs(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pth"), filepath.Join(dir, "b.pth")
	for path, content := range map[string]string{a: "weights A", b: "weights B"} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	name := func(weights, data string, n int) string {
		p, err := defaultFIDStatsPath(Options{Inception: weights, Data: data, FIDTrainN: n})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := name(a, "svhn", 0)
	if !strings.Contains(filepath.Base(base), "svhn-train-all-") {
		t.Errorf("%s: want the data set and training-image count in the name", base)
	}
	for _, other := range []string{name(b, "svhn", 0), name(a, "cifar10", 0), name(a, "svhn", 1000)} {
		if other == base {
			t.Errorf("different inputs share the statistics file %s", base)
		}
	}
	if _, err := defaultFIDStatsPath(Options{Inception: filepath.Join(dir, "none.pth")}); err == nil || !strings.Contains(err.Error(), "Options.Inception") {
		t.Errorf("missing weights: error %v, want one naming -inception", err)
	}
}

// The classifier-FID as the command computes it (statistics read from
// train-classifier's folder, features of the samples through the loaded
// classifier): the 32 images whose statistics the folder holds score ≈ 0
// against them, and against the same statistics with the mean moved by c
// they score |c|², the Fréchet distance's closed form for equal
// covariances.
func TestClassifierFIDOfASetAgainstItselfAndAShiftedCopy(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	dir := classifierRun(t, []int{16, 12}) // statistics of the first 32 test images
	images, err := mnist.Load(mnist.DefaultFashionDir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if images, err = images.Subset([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}); err != nil {
		t.Fatal(err)
	}
	fidOf := func() float64 {
		t.Helper()
		o := Options{Classifier: dir, FIDSamples: 32, Batch: 16}
		m, err := loadSampleMetrics(testutil.Backend(), o, 28, 28, 1)
		if err != nil {
			t.Fatal(err)
		}
		var s evalfile.Report
		if err := m.compute(images, &s, false); err != nil {
			t.Fatal(err)
		}
		return s.ClassifierFID
	}
	statsPath := filepath.Join(dir, classifier.StatsFile)
	mu, sigma, err := evalfile.LoadStats(statsPath)
	if err != nil {
		t.Fatal(err)
	}
	scale := mat.Trace(sigma)
	if self := fidOf(); math.Abs(self) > 1e-6*scale {
		t.Errorf("classifier-FID of the set against its own statistics = %g, want ≈ 0 (trace of Σ %g)", self, scale)
	}
	var shift float64
	for i := range mu {
		c := 0.5 * float64(i%3-1) * math.Sqrt(scale/float64(len(mu)))
		mu[i] += c
		shift += c * c
	}
	if err := evalfile.SaveStats(statsPath, mu, sigma); err != nil {
		t.Fatal(err)
	}
	got := fidOf()
	t.Logf("trace of Σ %.4g; shifted by |c|² = %.6g: classifier-FID %.6g", scale, shift, got)
	if math.Abs(got-shift) > 1e-6*scale {
		t.Errorf("classifier-FID against statistics shifted by c = %g, want |c|² = %g", got, shift)
	}
}
