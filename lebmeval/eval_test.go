package lebmeval

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/training"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/lebm"
)

// replayReconstructionMSE computes the test reconstruction error directly:
// posterior samples z of the first n test images in batches of batch from
// model (loaded afresh by the caller, so that its random state is the one
// eval-lebm started from), G(z) by Decode, and the mean squared pixel
// difference in float64, over all pixels and of each image.
func replayReconstructionMSE(t *testing.T, model *lebm.Model, n, batch int) (mse float64, imageErrors []float64) {
	t.Helper()
	test, err := byname.Load("fashion-mnist", mnist.DefaultFashionDir, "test", n)
	if err != nil {
		t.Fatal(err)
	}
	size := test.ImageSize()
	var sum float64
	for start := 0; start < n; start += batch {
		pixels := test.Pixels[start*size : (start+batch)*size]
		x := tensors.FromFlatDataAndDimensions(append([]float32{}, pixels...), batch, test.Height, test.Width, test.Channels)
		z, err := model.PosteriorSample(x)
		if err != nil {
			t.Fatal(err)
		}
		images, err := model.Decode(z)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range tensors.MustCopyFlatData[float32](images) {
			if i%size == 0 {
				imageErrors = append(imageErrors, 0)
			}
			d := float64(v) - float64(pixels[i])
			sum += d * d
			imageErrors[len(imageErrors)-1] += d * d / float64(size)
		}
	}
	return sum / float64(n*size), imageErrors
}

// savedRun writes an untrained mnist-size model's checkpoint as train-lebm
// would, with short chains so the evaluation is quick.
func savedRun(t *testing.T, anomalyHoldout int) string {
	t.Helper()
	b, _, err := backend.Open(testutil.BackendName())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := lebm.DefaultConfig("fashion-mnist")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TestPosteriorLangevin.Steps, cfg.Seed, cfg.AnomalyHoldout = 5, 3, anomalyHoldout
	model, err := lebm.New(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	// Two end-of-epoch snapshots as train-lebm -keep-epochs writes them, the
	// first with a different generator (every parameter shifted, so it
	// ranks the test images differently); the
	// second is the model also saved as the run's checkpoint.
	shift := func(delta float32) {
		for v := range model.Context().IterVariables() {
			if strings.HasPrefix(v.Scope(), "/"+lebm.GeneratorScope) {
				values := tensors.MustCopyFlatData[float32](v.MustValue())
				for i := range values {
					values[i] += delta
				}
				v.MustSetValue(tensors.FromFlatDataAndDimensions(values, v.Shape().Dimensions...))
			}
		}
	}
	shift(0.1)
	endEpoch := func() {
		t.Helper()
		if err := model.EndEpoch(); err != nil {
			t.Fatal(err)
		}
		if err := model.SaveKeeping(filepath.Join(run, training.EpochsDir), 5); err != nil {
			t.Fatal(err)
		}
	}
	endEpoch()
	shift(-0.1)
	setStep(t, model, 1)
	endEpoch()
	if err := model.Save(filepath.Join(run, "checkpoint")); err != nil {
		t.Fatal(err)
	}
	return run
}

// setStep sets the model's global step, which names its checkpoints.
func setStep(t *testing.T, model *lebm.Model, step int64) {
	t.Helper()
	optimizers.GetGlobalStepVar(model.Context()).MustSetValue(tensors.FromScalar(step))
}

// classifierRun writes an (untrained) small classifier and its training
// statistics as train-classifier would.
func classifierRun(t *testing.T, hidden []int) string {
	t.Helper()
	cfg := classifier.DefaultConfig()
	cfg.Hidden = hidden
	clf, err := classifier.New(testutil.Backend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	train, err := mnist.Load(mnist.DefaultFashionDir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if train, err = train.Subset([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}); err != nil {
		t.Fatal(err)
	}
	ev, err := clf.Evaluate(train, 16)
	if err != nil {
		t.Fatal(err)
	}
	mu, sigma, err := eval.GaussianStatsFlat(ev.Features, cfg.FeatureDim())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := clf.Save(filepath.Join(dir, "checkpoint")); err != nil {
		t.Fatal(err)
	}
	if err := evalfile.SaveStats(filepath.Join(dir, classifier.StatsFile), mu, sigma); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEvaluatesACheckpoint(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	runDir := savedRun(t, 1)
	// No -data and no -anomaly-holdout: the checkpoint names its data set
	// and its held-out class.
	opts := Options{Run: runDir, Backend: testutil.BackendName(), ReconN: 64, Batch: 32,
		Chains: 4, ChainSteps: 200, MaxLag: 20, AnomalyHoldout: -1, AnomalyN: 64, InterpolationRows: 2, InterpolationSteps: 4,
		AnomalyCheckpoints: 2, Classifier: classifierRun(t, []int{16, 8}), FIDSamples: 40, EachEpoch: true, Bootstrap: 400}
	if err := Evaluate(opts); err != nil {
		t.Fatal(err)
	}
	s, err := evalfile.ReadReport(filepath.Join(runDir, "eval"))
	if err != nil {
		t.Fatal(err)
	}
	// The checkpoint's sampler, Langevin, which rejects nothing (lebm's
	// tests check MALA's chains and acceptance against package sampling's).
	if s.GenerationSampler != lebm.SamplerLangevin || s.GenerationAcceptance != 1 {
		t.Errorf("summary generation by %q with acceptance %v, want langevin's 1", s.GenerationSampler, s.GenerationAcceptance)
	}
	if s.Data != "fashion-mnist" || s.Method != lebm.MethodED || s.AnomalyHeldOut != 1 {
		t.Errorf("summary names data %q, method %q and held-out class %d; want the checkpoint's fashion-mnist, ed and 1", s.Data, s.Method, s.AnomalyHeldOut)
	}
	// No sampler flags: the checkpoint's (5 posterior steps of 0.1, the
	// paper's generation of 500 steps of 0.2).
	if s.TestPosteriorSteps != 5 || s.TestPosteriorStepSize != 0.1 || s.GenerationSteps != 500 || s.GenerationStepSize != 0.2 {
		t.Errorf("summary samplers %d × %v and %d × %v, want the checkpoint's 5 × 0.1 and 500 × 0.2",
			s.TestPosteriorSteps, s.TestPosteriorStepSize, s.GenerationSteps, s.GenerationStepSize)
	}
	// An untrained generator outputs ≈ 0 against pixels in [−1, 1]: the MSE is
	// of the order of the test images' mean square, well inside (0, 4].
	if s.ReconstructionImages != 64 || !(s.ReconstructionMSE > 0.05 && s.ReconstructionMSE < 4) {
		t.Errorf("summary %+v: want 64 images and a plausible MSE", s)
	}
	// The test's own model, apart from Evaluate's: the checkpoint, then the
	// snapshots restored into it (lebm's tests check that a restored model
	// is the loaded one).
	ckpt := filepath.Join(runDir, "checkpoint")
	model, err := lebm.Load(testutil.Backend(), ckpt)
	if err != nil {
		t.Fatal(err)
	}
	want, imageErrors := replayReconstructionMSE(t, model, 64, 32)
	if math.Abs(s.ReconstructionMSE-want) > 1e-6*want {
		t.Errorf("reconstruction MSE %v, but posterior samples of the same 64 test images, decoded and compared pixel by pixel, give %v",
			s.ReconstructionMSE, want)
	}
	// The bootstrap interval of the mean over the images is about the
	// normal approximation's, mean ± 1.96·sd/√n.
	var variance float64
	for _, e := range imageErrors {
		variance += (e - want) * (e - want) / float64(len(imageErrors))
	}
	half := 1.96 * math.Sqrt(variance/float64(len(imageErrors)))
	if iv := s.ReconstructionMSEInterval; iv == nil || math.Abs(iv.Lo-(want-half)) > 0.25*half || math.Abs(iv.Hi-(want+half)) > 0.25*half {
		t.Errorf("reconstruction MSE interval %+v, want about [%.5f, %.5f]", iv, want-half, want+half)
	}
	if iv := s.ClassifierFIDInterval; iv == nil || !(iv.Lo > 0 && iv.Lo < iv.Hi) || math.IsInf(iv.Hi, 0) {
		t.Errorf("classifier-FID interval %+v, want a finite positive interval", iv)
	}
	if math.IsNaN(s.RHat) || s.RHat < 0.8 || s.ChainSteps != 200 || s.Chains != 4 {
		t.Errorf("summary %+v: want R̂ from 4 chains of 200 steps", s)
	}
	// eval's tests check the ESS against ArviZ; here, that they were
	// computed on the chains' second halves (4 × 100 draws of U).
	if !(s.BulkESS > 0 && s.BulkESS < 4000 && s.TailESS > 0 && s.TailESS < 4000) {
		t.Errorf("summary bulk ESS %v, tail ESS %v: want positive sizes of the order of the 400 draws", s.BulkESS, s.TailESS)
	}
	if s.AnomalyHeldOut != 1 || s.AnomalyImages != 64 || !(s.AnomalyAUPRC > 0 && s.AnomalyAUPRC <= 1) {
		t.Errorf("summary %+v: want an AUPRC in (0, 1] over 64 images with class 1 held out", s)
	}
	if want := heldOutAmongScored(t, 1, 64); s.AnomalyPositives != want {
		t.Errorf("summary: %d anomalies among the scored images, want %d (class 1 by label)", s.AnomalyPositives, want)
	}
	checkAnomalyScores(t, filepath.Join(runDir, "eval"), s)
	checkEpochs(t, model, runDir, s)
	for _, name := range []string{"reconstructions.png", "energy_profile.png", "autocorrelation.png", "prior_interpolation.png", "posterior_interpolation.png", "samples.png"} {
		if _, err := os.Stat(filepath.Join(runDir, "eval", name)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
	if s.FIDSamples != 40 || !(s.ClassifierFID > 0) || math.IsInf(s.ClassifierFID, 0) {
		t.Errorf("summary %+v: want a finite positive classifier-FID of 40 samples", s)
	}

	// The AUPRC is the mean over the two snapshots, which differ, and the
	// newest snapshot's equals what the run's checkpoint alone gives.
	a := s.AnomalyAUPRCs
	if len(a) != 2 || len(s.AnomalyCheckpoints) != 2 || a[0] == a[1] || math.Abs(s.AnomalyAUPRC-(a[0]+a[1])/2) > 1e-12 {
		t.Fatalf("summary AUPRC %v over %v (%v): want the mean of two different values", s.AnomalyAUPRC, s.AnomalyCheckpoints, a)
	}
	// Scored alone (what eval-lebm without -anomaly-checkpoints does, the
	// rest of its run aside).
	if err := model.Restore(ckpt); err != nil {
		t.Fatal(err)
	}
	opts.AnomalyCheckpoints = 0
	if err := opts.fromCheckpoint(model.Config()); err != nil {
		t.Fatal(err)
	}
	latest := evalfile.Report{Checkpoint: ckpt}
	if err := scoreAnomalies(model, "", opts, t.TempDir(), &latest); err != nil {
		t.Fatal(err)
	}
	if latest.AnomalyAUPRC != a[1] {
		t.Errorf("the latest checkpoint's AUPRC is %v, the newest snapshot's %v: want them equal", latest.AnomalyAUPRC, a[1])
	}
}

// checkEpochs checks the per-epoch measures of s (-each-epoch) on the two
// snapshots of savedRun: epochs 1 and 2 at steps 0 and 1; the first
// snapshot's shifted generator reconstructs differently from the second;
// each reconstruction MSE is what the snapshot, restored into model and
// seeded as eval-lebm seeds it, gives directly; FIDs and R̂ are finite.
func checkEpochs(t *testing.T, model *lebm.Model, runDir string, s *evalfile.Report) {
	t.Helper()
	if len(s.Epochs) != 2 {
		t.Fatalf("%d per-epoch reports, want one for each of the 2 snapshots", len(s.Epochs))
	}
	for i, e := range s.Epochs {
		if e.Epoch != int64(i+1) || e.Step != int64(i) || filepath.Dir(e.Checkpoint) != filepath.Join(runDir, training.EpochsDir) {
			t.Errorf("per-epoch report %d: epoch %d, step %d at %s; want epoch %d, step %d in the run's snapshots", i, e.Epoch, e.Step, e.Checkpoint, i+1, i)
		}
		if err := model.RestorePath(e.Checkpoint); err != nil {
			t.Fatal(err)
		}
		if err := model.Seed(snapshotSeed); err != nil {
			t.Fatal(err)
		}
		if want, _ := replayReconstructionMSE(t, model, 64, 32); math.Abs(e.ReconstructionMSE-want) > 1e-6*want {
			t.Errorf("epoch %d: reconstruction MSE %v, the snapshot's posterior samples decoded and compared give %v", e.Epoch, e.ReconstructionMSE, want)
		}
		if !(e.ClassifierFID > 0) || math.IsInf(e.ClassifierFID, 0) || e.FID != 0 || math.IsNaN(e.RHat) || e.RHat < 0.8 {
			t.Errorf("epoch %d: %+v; want a finite positive classifier-FID, no FID (no -inception) and R̂ of 4 chains", e.Epoch, e)
		}
	}
	if s.Epochs[0].ReconstructionMSE == s.Epochs[1].ReconstructionMSE {
		t.Errorf("both snapshots reconstruct with MSE %v: the first's generator differs, want different errors", s.Epochs[0].ReconstructionMSE)
	}
}

func TestBadInput(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	runDir := savedRun(t, 1)
	wrongSize := t.TempDir()
	testutil.WriteBlankIDX(t, filepath.Join(wrongSize, "t10k-images-idx3-ubyte"), 8, 32, 32)
	testutil.WriteBlankIDX(t, filepath.Join(wrongSize, "t10k-labels-idx1-ubyte"), 8)
	cases := []struct {
		name, run, dataDir, mention string
	}{
		{"no run folder", "", mnist.DefaultFashionDir, "Options.Run"},
		{"run without checkpoint", t.TempDir(), mnist.DefaultFashionDir, "no checkpoint"},
		{"run folder that does not exist", filepath.Join(t.TempDir(), "none"), mnist.DefaultFashionDir, "no checkpoint"},
		{"data that does not match the checkpoint", runDir, wrongSize, "does not match"},
	}
	for _, c := range cases {
		err := Evaluate(Options{Run: c.run, Data: "fashion-mnist", DataDir: c.dataDir, Backend: testutil.BackendName(), ReconN: 8, Batch: 8, Chains: 2, ChainSteps: 100, MaxLag: 10, AnomalyHoldout: -1, InterpolationRows: 1, InterpolationSteps: 2})
		if err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.mention)
		}
		// A failed evaluation leaves no (empty) RUN/eval behind.
		if _, statErr := os.Stat(filepath.Join(c.run, "eval")); c.run != "" && statErr == nil {
			t.Errorf("%s: %s/eval was created", c.name, c.run)
		}
	}

	wideClassifier := classifierRun(t, []int{16, 24})
	noSnapshots := t.TempDir() // the run's checkpoint alone
	if err := os.CopyFS(filepath.Join(noSnapshots, "checkpoint"), os.DirFS(filepath.Join(runDir, "checkpoint"))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		edit    func(*Options)
		mention []string
	}{
		{"more snapshots than saved", func(o *Options) { o.AnomalyHoldout, o.AnomalyN, o.AnomalyCheckpoints = 1, 8, 3 }, []string{"Options.AnomalyCheckpoints 3", "only 2"}},
		{"no classifier there", func(o *Options) { o.Classifier = t.TempDir() }, []string{"Options.Classifier", "no checkpoint"}},
		{"each epoch of a run without snapshots", func(o *Options) { o.Run, o.EachEpoch = noSnapshots, true }, []string{"Options.EachEpoch", "KeepEpochs"}},
		{"too few FID samples", func(o *Options) { o.Classifier = wideClassifier }, []string{"Options.FIDSamples 16", "24 classifier feature dimensions"}},
		{"one FID sample", func(o *Options) { o.Classifier, o.FIDSamples = wideClassifier, 1 }, []string{"Options.FIDSamples 1"}},
		{"negative sampler steps", func(o *Options) { o.GenerationSteps = -1 }, []string{"Options.GenerationSteps -1", "≥ 0"}},
		{"a lag past half the chain", func(o *Options) { o.MaxLag = 50 }, []string{"Options.MaxLag 50", "below half of Options.ChainSteps 100"}},
		{"another data set than the checkpoint's", func(o *Options) { o.Data = "mnist" }, []string{"Options.Data mnist", "trained on fashion-mnist"}},
		{"an attribute of a Fashion-MNIST run", func(o *Options) { o.Attribute, o.AttributeN, o.AttributeScale = "Smiling", 8, 1 }, []string{"Options.Attribute", "needs Options.Data celeba64"}},
		{"another held-out class than the checkpoint's", func(o *Options) { o.AnomalyHoldout = 4 }, []string{"Options.AnomalyHoldout 4", "class 1 held out"}},
		{"Options.Out a file", func(o *Options) { o.Out = filepath.Join(runDir, "checkpoint", "LATEST") }, []string{"Options.Out", "LATEST: a file, not a folder"}},
	} {
		o := Options{Run: runDir, Data: "fashion-mnist", DataDir: mnist.DefaultFashionDir, Backend: testutil.BackendName(), ReconN: 8, Batch: 8, Chains: 2, ChainSteps: 100,
			MaxLag: 10, AnomalyHoldout: -1, InterpolationRows: 1, InterpolationSteps: 2, FIDSamples: 16, Out: t.TempDir()}
		c.edit(&o)
		err := Evaluate(o)
		for _, m := range c.mention {
			if err == nil || !strings.Contains(err.Error(), m) {
				t.Errorf("%s: error %v, want one mentioning %q", c.name, err, m)
			}
		}
	}
}

func TestInterpolate(t *testing.T) {
	testutil.RequireFashionMNIST(t)
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

func TestAttributeLatents(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	// Four 2-d latents; images 0 and 2 have the attribute, 1 and 3 do not:
	// d = mean{(1,0),(3,2)} − mean{(0,1),(0,3)} = (2,1) − (0,2) = (2,−1).
	z := []float32{1, 0, 0, 1, 3, 2, 0, 3}
	got := attributeLatents(z, 2, []int{0, 2}, []int{1, 3}, []int{1, 3}, []float64{-1, 0, 0.5})
	want := []float32{
		-2, 2, 0, 1, 1, 0.5, // z_1 + α·d
		-2, 4, 0, 3, 1, 2.5, // z_3 + α·d
	}
	if len(got) != len(want) {
		t.Fatalf("attributeLatents = %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("attributeLatents = %v, want %v", got, want)
		}
	}
}

// A celeba64 run evaluated on a small synthetic CelebA folder draws the
// attribute-manipulation grid: 2 rows of 3 images of 64×64.
func TestAttributeGridOnCelebA(t *testing.T) {
	root := t.TempDir()
	testutil.WriteCelebA(t, root, 10, 2, []string{"Male", "Smiling"}, func(i, a int) int8 {
		if a == 0 || i%2 == 0 { // everyone is Male; every other image Smiling
			return 1
		}
		return -1
	})
	cfg, err := lebm.DefaultConfig("celeba64")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TestPosteriorLangevin.Steps, cfg.GenerationLangevin.Steps, cfg.Seed = 2, 20, 5
	// The celeba64 generator's layers and 64×64×3 images, 8 channels
	// wide: the full width takes seconds to initialise and compile.
	for i := range cfg.Generator.Layers[:len(cfg.Generator.Layers)-1] {
		cfg.Generator.Layers[i].Out = 8
	}
	model, err := lebm.New(testutil.Backend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir()
	if err := model.Save(filepath.Join(runDir, "checkpoint")); err != nil {
		t.Fatal(err)
	}
	// generateSamples counts colour images in values of 64·64·3: 5
	// samples in batches of 2, and a grid of all 5.
	gen := t.TempDir()
	samples, acceptance, err := generateSamples(model, 5, 2)
	if err != nil || acceptance != 1 { // Langevin rejects nothing
		t.Fatalf("acceptance %v, error %v", acceptance, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSampleGrid(samples, gen); err != nil {
		t.Fatal(err)
	}
	if samples.N != 5 || len(samples.Pixels) != 5*64*64*3 {
		t.Errorf("generated %d images in %d values, want 5 in 5·64·64·3", samples.N, len(samples.Pixels))
	}
	if grid := testutil.PNGConfig(t, filepath.Join(gen, "samples.png")); grid.Width < 5*64 || grid.Width >= 6*64 || grid.Height >= 2*64 {
		t.Errorf("sample grid %d×%d pixels, want one row of five 64×64 images", grid.Width, grid.Height)
	}
	o := Options{Run: runDir, Data: "celeba64", DataDir: root, Backend: testutil.BackendName(), ReconN: 4, Batch: 4, Chains: 2, ChainSteps: 100,
		MaxLag: 10, AnomalyHoldout: -1, InterpolationRows: 2, InterpolationSteps: 3, Attribute: "Smiling", AttributeN: 8, AttributeScale: 1.5, GenerationSteps: 20}
	if err := Evaluate(o); err != nil {
		t.Fatal(err)
	}
	// No FID asked for, and still the samples a person looks at first: a
	// grid of 64, 8 a row.
	if grid := testutil.PNGConfig(t, filepath.Join(runDir, "eval", "samples.png")); grid.Width < 8*64 || grid.Width >= 9*64 || grid.Height < 8*64 || grid.Height >= 9*64 {
		t.Errorf("samples.png is %d×%d, want 8 × 8 images of 64×64 (with their margins)", grid.Width, grid.Height)
	}
	cfgPNG := testutil.PNGConfig(t, filepath.Join(runDir, "eval", "attribute_Smiling.png"))
	// Three 64-pixel columns and two rows, with whatever border the grid draws.
	if cfgPNG.Width < 3*64 || cfgPNG.Width >= 4*64 || cfgPNG.Height < 2*64 || cfgPNG.Height >= 3*64 {
		t.Errorf("attribute grid is %d×%d pixels, want 3 columns × 2 rows of 64×64 images", cfgPNG.Width, cfgPNG.Height)
	}

	for _, c := range []struct {
		name    string
		edit    func(*Options)
		mention string
	}{
		{"unknown attribute", func(o *Options) { o.Attribute = "Wings" }, `"Wings"`},
		{"another data set than the checkpoint's", func(o *Options) { o.Data, o.DataDir = "fashion-mnist", mnist.DefaultFashionDir }, "trained on celeba64"},
		{"one group empty", func(o *Options) { o.Attribute = "Male" }, "need both groups"},
	} {
		bad := o
		bad.Out = t.TempDir()
		c.edit(&bad)
		if err := Evaluate(bad); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %v, want one mentioning %s", c.name, err, c.mention)
		}
	}
}

// heldOutAmongScored counts, by class label, the images of class heldOut
// among the n evenly spaced anomaly-test images eval-lebm scores.
func heldOutAmongScored(t *testing.T, heldOut, n int) int {
	t.Helper()
	train, err := mnist.Load(mnist.DefaultFashionDir, "train")
	if err != nil {
		t.Fatal(err)
	}
	test, err := mnist.Load(mnist.DefaultFashionDir, "test")
	if err != nil {
		t.Fatal(err)
	}
	split, err := datasets.PaperAnomalySplit(train, test, heldOut)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for i := range n {
		if split.Test.Labels[i*split.Test.N/n] == heldOut {
			count++
		}
	}
	return count
}

// checkAnomalyScores reads the scores file beside a report: its labels
// hold the report's anomaly count and each score column's AUPRC is the
// report's for that checkpoint.
func checkAnomalyScores(t *testing.T, dir string, s *evalfile.Report) {
	t.Helper()
	records := testutil.ReadCSV(t, filepath.Join(dir, evalfile.AnomalyScoresFile))
	if len(records) != s.AnomalyImages+1 || len(records[0]) != 2+len(s.AnomalyAUPRCs) {
		t.Fatalf("%s: %d rows of %d columns, want a header and %d rows of %d", evalfile.AnomalyScoresFile, len(records), len(records[0]), s.AnomalyImages, 2+len(s.AnomalyAUPRCs))
	}
	labels, positives := make([]bool, s.AnomalyImages), 0
	for i, r := range records[1:] {
		labels[i] = r[1] == "1"
		if labels[i] {
			positives++
		}
	}
	if positives != s.AnomalyPositives {
		t.Errorf("%s: %d anomalies, the report says %d", evalfile.AnomalyScoresFile, positives, s.AnomalyPositives)
	}
	for c, want := range s.AnomalyAUPRCs {
		scores := make([]float64, s.AnomalyImages)
		for i, r := range records[1:] {
			var err error
			if scores[i], err = strconv.ParseFloat(r[2+c], 64); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := eval.AUPRC(scores, labels); err != nil || got != want {
			t.Errorf("%s column %d: AUPRC %v (%v), the report says %v", evalfile.AnomalyScoresFile, c, got, err, want)
		}
	}
}

// The anomaly test subset: all images, or evenly spaced ones, a whole
// number of batches; indices written out by hand.
func TestEvenlySpaced(t *testing.T) {
	for _, tc := range []struct {
		total, limit, batch int
		want                []int
		err                 string
	}{
		{total: 10, limit: 0, batch: 3, want: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{total: 10, limit: 4, batch: 2, want: []int{0, 2, 5, 7}},
		{total: 10, limit: 10, batch: 5, want: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{total: 10, limit: 20, batch: 5, want: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{total: 10, limit: 0, batch: 20, err: "Options.Batch 20 exceeds the 10 test images"},
		{total: 10, limit: 3, batch: 4, err: "Options.Batch 4 exceeds the 3 test images"},
	} {
		got, err := evenlySpaced(tc.total, tc.limit, tc.batch)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("evenlySpaced(%d, %d, %d): error %v, want %q", tc.total, tc.limit, tc.batch, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("evenlySpaced(%d, %d, %d) = %v, %v; want %v", tc.total, tc.limit, tc.batch, got, err, tc.want)
		}
	}
}

// The attribute grid's multiples of the direction: −scale … scale.
func TestAttributeAlphas(t *testing.T) {
	if got, want := attributeAlphas(2, 5), []float64{-2, -1, 0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("attributeAlphas(2, 5) = %v, want %v", got, want)
	}
	if got, want := attributeAlphas(0.5, 3), []float64{-0.5, 0, 0.5}; !slices.Equal(got, want) {
		t.Errorf("attributeAlphas(0.5, 3) = %v, want %v", got, want)
	}
}

// mapBatches covers exactly the first n images, the last batch partial:
// fn doubles each batch, so the output is 2·pixel for images 0..n−1.
func TestMapBatchesCoversPartialBatch(t *testing.T) {
	set := &datasets.Images{Name: "five", N: 5, Height: 1, Width: 1, Channels: 1, Pixels: []float32{0, 0.1, 0.2, 0.3, 0.4}}
	double := func(x *tensors.Tensor) (*tensors.Tensor, error) {
		v := tensors.MustCopyFlatData[float32](x)
		for i := range v {
			v[i] *= 2
		}
		return tensors.FromFlatDataAndDimensions(v, len(v)), nil
	}
	for _, tc := range []struct {
		n, batch int
		want     []float32
	}{
		{3, 2, []float32{0, 0.2, 0.4}},
		{5, 2, []float32{0, 0.2, 0.4, 0.6, 0.8}},
		{4, 4, []float32{0, 0.2, 0.4, 0.6}},
	} {
		got, err := mapBatches(set, tc.n, tc.batch, "doubled", double)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("mapBatches(n=%d, batch=%d) = %v, %v; want %v", tc.n, tc.batch, got, err, tc.want)
		}
	}
	if _, err := mapBatches(set, 6, 2, "doubled", double); err == nil || !strings.Contains(err.Error(), "6 images requested") {
		t.Errorf("6 of 5 images: error %v", err)
	}
}

// Each numeric flag's range at its boundary: the last good value passes,
// the first bad one is refused naming the flag.
func TestFlagRangesAtTheirBoundaries(t *testing.T) {
	valid := Options{ReconN: 1, Batch: 1, Chains: 2, ChainSteps: 100, MaxLag: 49, InterpolationRows: 1, InterpolationSteps: 2,
		Attribute: "Smiling", AttributeN: 2, AttributeScale: 0.5, Inception: "weights.pth", FIDSamples: 2}
	if err := valid.checkValues(); err != nil {
		t.Fatalf("the boundary values: %v", err)
	}
	shortestLag := valid
	shortestLag.MaxLag = 1
	if err := shortestLag.checkValues(); err != nil {
		t.Errorf("Options.MaxLag 1: %v", err)
	}
	for _, tc := range []struct {
		option string
		edit   func(*Options)
	}{
		{"AttributeN", func(o *Options) { o.AttributeN = 1 }},
		{"AttributeScale", func(o *Options) { o.AttributeScale = 0 }},
		{"FIDSamples", func(o *Options) { o.FIDSamples = 1 }},
		{"FIDSamples", func(o *Options) { o.Inception, o.Classifier, o.FIDSamples = "", "classifier", 1 }},
		{"PosteriorSteps", func(o *Options) { o.PosteriorSteps = -1 }},
		{"PosteriorStep", func(o *Options) { o.PosteriorStep = -0.1 }},
		{"GenerationSteps", func(o *Options) { o.GenerationSteps = -1 }},
		{"GenerationStep", func(o *Options) { o.GenerationStep = -0.1 }},
		{"FIDTrainN", func(o *Options) { o.FIDTrainN = -1 }},
		{"Bootstrap", func(o *Options) { o.Bootstrap = -1 }},
		{"FIDBootstrap", func(o *Options) { o.FIDBootstrap = -1 }},
		{"InterpolationRows", func(o *Options) { o.InterpolationRows = 0 }},
		{"InterpolationSteps", func(o *Options) { o.InterpolationSteps = 1 }},
		{"ReconN", func(o *Options) { o.ReconN = 0 }},
		{"Batch", func(o *Options) { o.Batch = 0 }},
		{"Chains", func(o *Options) { o.Chains = 1 }},
		{"ChainSteps", func(o *Options) { o.ChainSteps = 50 }},
		{"ChainSteps", func(o *Options) { o.ChainSteps, o.MaxLag = 120, 10 }},
		{"MaxLag", func(o *Options) { o.MaxLag = 0 }},
		{"MaxLag", func(o *Options) { o.MaxLag = 50 }},
	} {
		o := valid
		tc.edit(&o)
		if err := o.checkValues(); err == nil || !strings.Contains(err.Error(), "Options."+tc.option+" ") {
			t.Errorf("Options.%s out of range: error %v, want one naming it", tc.option, err)
		}
	}
	// Without an attribute or FID, their flags are not checked.
	unused := valid
	unused.Attribute, unused.Inception, unused.AttributeN, unused.AttributeScale, unused.FIDSamples = "", "", 0, 0, 0
	if err := unused.checkValues(); err != nil {
		t.Errorf("flags of unused features: %v", err)
	}
}
