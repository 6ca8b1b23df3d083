// Package lebmeval evaluates a trained latent EBM run (package lebmrun's
// run folder), as cmd/eval-lebm does: test reconstruction error,
// interpolations, prior-chain diagnostics (energy profile, R̂,
// autocorrelation), generated samples with their FID and classifier-FID,
// anomaly-detection AUPRC under the held-out-class protocol, CelebA
// attribute directions, the same measures at every end-of-epoch snapshot,
// bootstrap intervals; the numbers go to evalfile.ReportFile and the run's
// report page.
package lebmeval

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/stat"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/runreport"
	"github.com/edlebm/edlebm/training"
)

// Options say what Evaluate measures. The zero value of a field whose
// comment names a checkpoint's setting takes that setting; cmd/eval-lebm's
// flags give the other defaults.
type Options struct {
	// Run is the train-lebm run folder whose checkpoint is evaluated.
	Run string
	// Data and DataDir are the run's data set (default: the one its
	// checkpoint names) and its folder (default Debian's Fashion-MNIST for
	// fashion-mnist; for a folder of images, the folder the run recorded).
	Data, DataDir string
	// Out is the output folder (default Run/eval); Backend the GoMLX
	// backend (backend.Resolve's syntax).
	Out, Backend string
	// Attribute, a CelebA attribute (Smiling), draws posterior latents
	// moved along z_with − z_without, estimated from AttributeN test
	// images, by α from −AttributeScale to +AttributeScale.
	Attribute      string
	AttributeN     int
	AttributeScale float64
	// ReconN test images are reconstructed, Batch at a time (also the
	// anomaly scores' batch).
	ReconN, Batch int
	// Chains prior chains of ChainSteps Langevin steps (a multiple of 50,
	// at least 100) give the MCMC diagnostics, autocorrelations up to lag
	// MaxLag.
	Chains, ChainSteps, MaxLag int
	// AnomalyHoldout is the class the run was trained without (−1: the
	// checkpoint's); AnomalyN > 0 scores an evenly spaced subset of that
	// many anomaly test images; AnomalyCheckpoints > 0 averages the AUPRC
	// over the last that many end-of-epoch snapshots; AnomalySeed is the
	// scores' random stream, restarted for each checkpoint.
	AnomalyHoldout, AnomalyN, AnomalyCheckpoints int
	AnomalySeed                                  int64
	// Classifier is a train-classifier folder: the classifier-FID of
	// generated samples. Inception is pytorch-fid's weights file: their
	// FID, against training statistics cached in FIDStats (default: the
	// user cache folder) over FIDTrainN training images (0: all).
	Classifier, Inception, FIDStats string
	// FIDSamples is the number of generated images for the FIDs.
	FIDSamples, FIDTrainN int
	// GenerationSampler, GenerationSteps, GenerationStep and
	// GenerationLeapfrogSteps are the prior chains' kernel (lebm.Samplers),
	// proposals, step size and (HMC) leapfrog steps a proposal for
	// generated samples; PosteriorSteps and PosteriorStep the posterior
	// chains' for reconstructions, interpolations and anomaly scores (""
	// or 0: the checkpoint's).
	GenerationSampler                                        string
	PosteriorSteps, GenerationSteps, GenerationLeapfrogSteps int
	PosteriorStep, GenerationStep                            float64
	// InterpolationRows rows of InterpolationSteps images (endpoints
	// included) make the interpolation grids.
	InterpolationRows, InterpolationSteps int
	// EachEpoch measures every end-of-epoch snapshot of the run too.
	EachEpoch bool
	// Bootstrap resamples give the 95 % intervals of the reconstruction MSE
	// and the classifier-FID, FIDBootstrap those of the Inception FID (0:
	// none): each of its resamples is a 2048-d Fréchet distance, about 9 s
	// on two cores (docs/evaluation.md).
	Bootstrap, FIDBootstrap int
}

// fromCheckpoint completes o with what the checkpoint says of its run — the
// data set and the class held out under the anomaly protocol — refusing
// flags that contradict it, and then checks the flags that depend on the
// data set. Checkpoints from before they named their data set need -data.
func (o *Options) fromCheckpoint(cfg lebm.Config) error {
	switch {
	case o.Data == "" && cfg.Data == "":
		return fmt.Errorf("Options.Data: the checkpoint does not name its data set (written before checkpoints kept it): give Options.Data")
	case o.Data == "":
		o.Data = cfg.Data
	case cfg.Data != "" && o.Data != cfg.Data:
		return fmt.Errorf("Options.Data %s: the checkpoint was trained on %s", o.Data, cfg.Data)
	}
	switch {
	case o.AnomalyHoldout == -1:
		o.AnomalyHoldout = cfg.AnomalyHoldout
	case cfg.Data != "" && o.AnomalyHoldout != cfg.AnomalyHoldout:
		held := "no class held out"
		if cfg.AnomalyHoldout >= 0 {
			held = fmt.Sprintf("class %d held out", cfg.AnomalyHoldout)
		}
		return fmt.Errorf("Options.AnomalyHoldout %d: the checkpoint was trained with %s", o.AnomalyHoldout, held)
	}
	if o.DataDir == "" && o.Data == "fashion-mnist" {
		o.DataDir = mnist.DefaultFashionDir
	}
	if o.AnomalyHoldout >= 0 && o.Data != "mnist" && o.Data != "fashion-mnist" && o.Data != lebm.FolderData {
		return fmt.Errorf("Options.AnomalyHoldout: the anomaly protocol is defined for mnist, fashion-mnist and a folder of images in class folders, not %s", o.Data)
	}
	if o.Attribute != "" && !byname.IsCelebA(o.Data) {
		return fmt.Errorf("Options.Attribute %q: needs Options.Data celeba64 or celeba128, not %s", o.Attribute, o.Data)
	}
	return nil
}

// samplers are the load Options that apply the sampler flags.
func (o Options) samplers() []lebm.LoadOption {
	return []lebm.LoadOption{lebm.WithTestPosterior(o.PosteriorSteps, o.PosteriorStep), lebm.WithGeneration(o.GenerationSteps, o.GenerationStep), lebm.WithGenerationSampler(o.GenerationSampler),
		lebm.WithGenerationLeapfrogSteps(o.GenerationLeapfrogSteps)}
}

// checkValues checks each numeric option against its range, naming the
// first option out of it.
func (o Options) checkValues() error {
	reconN, batch, chains, chainSteps, maxLag := o.ReconN, o.Batch, o.Chains, o.ChainSteps, o.MaxLag
	fid := o.Classifier != "" || o.Inception != ""
	return flagcheck.CheckOptions(
		flagcheck.Rule{Name: "AttributeN", Value: o.AttributeN, OK: o.Attribute == "" || o.AttributeN >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "AttributeScale", Value: o.AttributeScale, OK: o.Attribute == "" || o.AttributeScale > 0, Want: "> 0"},
		flagcheck.Rule{Name: "FIDSamples", Value: o.FIDSamples, OK: !fid || o.FIDSamples >= 2, Want: "≥ 2 (and more than the features' dimensions)"},
		flagcheck.Rule{Name: "PosteriorSteps", Value: o.PosteriorSteps, OK: o.PosteriorSteps >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Name: "PosteriorStep", Value: o.PosteriorStep, OK: o.PosteriorStep >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Name: "GenerationSteps", Value: o.GenerationSteps, OK: o.GenerationSteps >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Name: "GenerationStep", Value: o.GenerationStep, OK: o.GenerationStep >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Name: "GenerationLeapfrogSteps", Value: o.GenerationLeapfrogSteps, OK: o.GenerationLeapfrogSteps >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Name: "GenerationSampler", Value: o.GenerationSampler, OK: o.GenerationSampler == "" || slices.Contains(lebm.Samplers, o.GenerationSampler), Want: fmt.Sprintf("one of %v (or empty: the checkpoint's)", lebm.Samplers)},
		flagcheck.Rule{Name: "FIDTrainN", Value: o.FIDTrainN, OK: o.FIDTrainN >= 0, Want: "≥ 0 (0: the whole training split)"},
		flagcheck.Rule{Name: "Bootstrap", Value: o.Bootstrap, OK: o.Bootstrap >= 0, Want: "≥ 0 (0: no intervals)"},
		flagcheck.Rule{Name: "FIDBootstrap", Value: o.FIDBootstrap, OK: o.FIDBootstrap >= 0, Want: "≥ 0 (0: no interval)"},
		flagcheck.Rule{Name: "InterpolationRows", Value: o.InterpolationRows, OK: o.InterpolationRows >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "InterpolationSteps", Value: o.InterpolationSteps, OK: o.InterpolationSteps >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "ReconN", Value: reconN, OK: reconN >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "Batch", Value: batch, OK: batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "Chains", Value: chains, OK: chains >= 2, Want: "≥ 2"},
		flagcheck.Rule{Name: "ChainSteps", Value: chainSteps, OK: chainSteps >= 100 && chainSteps%50 == 0, Want: "a multiple of 50, at least 100"},
		flagcheck.Rule{Name: "MaxLag", Value: maxLag, OK: maxLag >= 1 && maxLag < chainSteps/2, Want: fmt.Sprintf("≥ 1 and below half of Options.ChainSteps %d", chainSteps)},
	)
}

// Evaluate measures the run o.Run as o asks and writes the numbers and
// pictures into o.Out (default Run/eval).
func Evaluate(o Options) error {
	if err := o.checkValues(); err != nil {
		return err
	}
	runDir := o.Run
	out, err := o.outFolder()
	if err != nil {
		return err
	}
	folder := training.Folder{Dir: runDir}
	b, err := backend.OpenForCommand(o.Backend)
	if err != nil {
		return err
	}
	defer b.Finalize()
	model, home, s, err := o.loadModel(b, folder.Checkpoints())
	if err != nil {
		return err
	}
	cfg := model.Config()

	var snapshots []string // -each-epoch's, listed before the slow work
	if o.EachEpoch {
		if snapshots, err = lebm.Checkpoints(folder.Epochs()); err != nil {
			return fmt.Errorf("Options.EachEpoch: %w (train with lebmrun.Options.KeepEpochs: train-lebm -keep-epochs)", err)
		}
	}
	h, w, c := model.Config().Generator.OutputShape()
	var metrics *sampleMetrics // checked before the slow work
	if o.Classifier != "" || o.Inception != "" {
		if metrics, err = loadSampleMetrics(b, o, h, w, c); err != nil {
			return err
		}
	}

	test, err := loadTest(o, h, w, c)
	if err != nil {
		return err
	}
	// Created only now that the run, the data and every flag are known
	// good: a failed command leaves no empty folder behind.
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("Options.Out: %w", err)
	}
	reconN, err := measure(model, home, test, metrics, o, out, &s)
	if err != nil {
		return err
	}
	if o.EachEpoch {
		if err := evaluateEpochs(model, home, snapshots, o, test, reconN, metrics, &s); err != nil {
			return fmt.Errorf("Options.EachEpoch: %w", err)
		}
	}
	if err := atomicfile.WriteJSON(filepath.Join(out, evalfile.ReportFile), s); err != nil {
		return err
	}
	// The run's page now shows this evaluation beside the paper's numbers.
	return runreport.Write(runreport.Run{Dir: runDir, Config: cfg, Step: s.Step, Eval: &s, EvalDir: out})
}

// measure takes the measures of model, which holds the checkpoint home,
// into s and writes their pictures into out; it returns the number of test
// images reconstructed.
func measure(model *lebm.Model, home string, test *datasets.Images, metrics *sampleMetrics, o Options, out string, s *evalfile.Report) (reconN int, err error) {
	if o.Attribute != "" {
		if err := attributeGrid(model, test, o, out); err != nil {
			return 0, fmt.Errorf("Options.Attribute: %w", err)
		}
	}
	reconN = min(o.ReconN, test.N) / o.Batch * o.Batch
	if err := measureReconstructions(model, test, reconN, o, out, s); err != nil {
		return 0, err
	}
	if err := interpolations(model, test.Pixels[:2*o.InterpolationRows*test.ImageSize()], o, out); err != nil {
		return 0, err
	}
	if o.AnomalyHoldout >= 0 {
		if err := scoreAnomalies(model, home, o, out, s); err != nil {
			return 0, fmt.Errorf("Options.AnomalyHoldout: %w", err)
		}
	}
	if err := measureSamples(model, o, metrics, out, s); err != nil {
		return 0, err
	}

	if err := diagnoseChains(model, o, out, s); err != nil {
		return 0, err
	}
	fmt.Printf("reconstruction MSE %.5f on %d test images; prior chains: R̂ %.4f, split R̂ %.4f\n",
		s.ReconstructionMSE, reconN, s.RHat, s.SplitRHat)
	return reconN, nil
}

// loadModel loads the newest checkpoint in the run's folder ckpt, with
// the samplers the flags ask for, takes from it the settings the flags
// left open, and starts the report of its evaluation; it returns the
// checkpoint's own folder too (home), which snapshots evaluated in the
// same model restore afterwards.
func (o *Options) loadModel(b backends.Backend, ckpt string) (model *lebm.Model, home string, s evalfile.Report, err error) {
	if home, err = lebm.LatestCheckpoint(ckpt); err != nil {
		return nil, "", s, fmt.Errorf("Options.Run: %w", err)
	}
	if model, err = lebm.LoadCheckpoint(b, home, o.samplers()...); err != nil {
		return nil, "", s, fmt.Errorf("Options.Run: %w", err)
	}
	cfg := model.Config()
	if err := o.fromCheckpoint(cfg); err != nil {
		return nil, "", s, err
	}
	s = evalfile.Report{Checkpoint: ckpt, Data: o.Data, Method: cfg.Method, Chains: o.Chains, ChainSteps: o.ChainSteps, AnomalyHeldOut: o.AnomalyHoldout,
		TestPosteriorSteps: cfg.TestPosteriorLangevin.Steps, TestPosteriorStepSize: cfg.TestPosteriorLangevin.StepSize,
		GenerationSteps: cfg.GenerationLangevin.Steps, GenerationStepSize: cfg.GenerationLangevin.StepSize}
	s.Step = model.Step()
	return model, home, s, nil
}

// diagnoseChains runs o.Chains prior chains of o.ChainSteps steps and
// writes their diagnostics into s and out (see diagnose).
func diagnoseChains(model *lebm.Model, o Options, out string, s *evalfile.Report) error {
	energies, err := model.PriorChainEnergies(o.Chains, o.ChainSteps, 50)
	if err != nil {
		return err
	}
	return diagnose(out, energies, o.MaxLag, s)
}

// outFolder checks the flags that need no file and returns the folder to
// write into: -out, by default the run's eval folder.
func (o Options) outFolder() (string, error) {
	if o.Run == "" {
		return "", fmt.Errorf("Options.Run: the train-lebm output folder is required")
	}
	if o.Data != "" && o.Data != lebm.FolderData && !slices.Contains(byname.Names, o.Data) {
		return "", fmt.Errorf("Options.Data %q: want one of %v, or %s", o.Data, byname.Names, lebm.FolderData)
	}
	if err := o.checkValues(); err != nil {
		return "", err
	}
	out := o.Out
	if out == "" {
		out = training.Folder{Dir: o.Run}.Eval()
	}
	if info, err := os.Stat(out); err == nil && !info.IsDir() {
		return "", fmt.Errorf("Options.Out %s: a file, not a folder", out)
	}
	return out, nil
}

// loadTest reads the test images that the reconstructions (and
// -attribute) need, checking that they fit the checkpoint's generator,
// h×w×c, and -batch.
func loadTest(o Options, h, w, c int) (*datasets.Images, error) {
	testLimit := o.ReconN
	if o.Attribute != "" {
		testLimit = max(o.ReconN, o.AttributeN)
	}
	test, err := lebmrun.LoadImages(o.Run, o.Data, o.DataDir, "test", testLimit)
	if err != nil {
		return nil, fmt.Errorf("Options.DataDir: %w", err)
	}
	if test.Height != h || test.Width != w || test.Channels != c {
		return nil, fmt.Errorf("Options.DataDir %s: images are %d×%d×%d, but the checkpoint's generator makes %d×%d×%d: the checkpoint does not match the data set",
			o.DataDir, test.Height, test.Width, test.Channels, h, w, c)
	}
	if available := min(o.ReconN, test.N); available < o.Batch {
		return nil, fmt.Errorf("Options.Batch %d: larger than the %d test images to reconstruct (Options.ReconN)", o.Batch, available)
	}
	return test, nil
}

// measureReconstructions reconstructs the first n test images into s (the
// MSE, with its bootstrap interval if asked) and reconstructions.png.
func measureReconstructions(model *lebm.Model, test *datasets.Images, n int, o Options, out string, s *evalfile.Report) error {
	recon, imageErrors, err := reconstruct(model, test, n, o.Batch)
	if err != nil {
		return err
	}
	s.ReconstructionImages, s.ReconstructionMSE = n, stat.Mean(imageErrors, nil)
	if o.Bootstrap > 0 {
		iv, err := eval.MeanInterval(imageErrors, o.Bootstrap, bootstrapSeed)
		if err != nil {
			return err
		}
		s.ReconstructionMSEInterval = &iv
	}
	shown, size := min(64, n), test.ImageSize()
	return plots.WriteImagePairs(filepath.Join(out, evalfile.ReconstructionsPicture), test.Pixels[:shown*size], recon[:shown*size],
		shown, test.Height, test.Width, test.Channels, 8)
}

// measureSamples draws samples.png and, when metrics are asked for,
// scores o.FIDSamples samples into s. Samples are what a person looks at
// first: their grid is drawn even when no sample metric asks for them.
func measureSamples(model *lebm.Model, o Options, metrics *sampleMetrics, out string, s *evalfile.Report) error {
	n := sampleGridN
	if metrics != nil {
		n = o.FIDSamples
	}
	samples, acceptance, err := generateSamples(model, n, o.Batch)
	if err != nil {
		return err
	}
	s.GenerationSampler, s.GenerationAcceptance = model.Config().GenerationSampler, acceptance
	if s.GenerationSampler == lebm.SamplerHMC {
		s.GenerationLeapfrogSteps = model.Config().GenerationLeapfrogSteps
	}
	fmt.Printf("generation: %s, %.3f of the proposals accepted\n", s.GenerationSampler, acceptance)
	if err := writeSampleGrid(samples, out); err != nil {
		return err
	}
	if metrics == nil {
		return nil
	}
	return metrics.compute(samples, s, true)
}

// bootstrapSeed seeds the resampling of every bootstrap interval.
const bootstrapSeed = 1

// reconstruct returns the reconstructions of the first n test images,
// batch at a time, and the mean squared pixel error of each.
func reconstruct(model *lebm.Model, test *datasets.Images, n, batch int) (recon []float32, imageErrors []float64, err error) {
	if recon, err = mapBatches(test, n, batch, "reconstructed", model.Reconstruct); err != nil {
		return nil, nil, err
	}
	size := test.ImageSize()
	imageErrors = make([]float64, n)
	for i, v := range recon {
		d := float64(v - test.Pixels[i])
		imageErrors[i/size] += d * d / float64(size)
	}
	return recon, imageErrors, nil
}

// chainStatistics are the chains' mean energy at the last step and R̂
// (plain and split) over the second half of the run.
func chainStatistics(energies [][]float64) (finalMean, rHat, splitRHat float64, err error) {
	steps := len(energies[0])
	second := make([][]float64, len(energies))
	for i, chain := range energies {
		finalMean += chain[steps-1] / float64(len(energies))
		second[i] = chain[steps/2:]
	}
	if rHat, err = eval.GelmanRubin(second); err != nil {
		return 0, 0, 0, err
	}
	if splitRHat, err = eval.SplitGelmanRubin(second); err != nil {
		return 0, 0, 0, err
	}
	return finalMean, rHat, splitRHat, nil
}

// diagnose plots the energy profile and autocorrelation of the chains and
// computes R̂ over the second half of the run.
func diagnose(out string, energies [][]float64, maxLag int, s *evalfile.Report) error {
	steps := len(energies[0])
	var profile []plots.Series
	second := make([][]float64, len(energies))
	mean := plots.Series{Name: "mean over chains"}
	for step := range steps {
		var m float64
		for _, chain := range energies {
			m += chain[step] / float64(len(energies))
		}
		mean.X, mean.Y = append(mean.X, float64(step)), append(mean.Y, m)
	}
	for i, chain := range energies {
		if i < 4 {
			series := plots.Series{Name: fmt.Sprintf("chain %d", i+1)}
			for step, e := range chain {
				series.X, series.Y = append(series.X, float64(step)), append(series.Y, e)
			}
			profile = append(profile, series)
		}
		second[i] = chain[steps/2:]
	}
	if err := plots.WriteLinePlot(filepath.Join(out, evalfile.EnergyProfilePicture), plots.LinePlot{
		Title: "Prior Langevin chains: U(z) per step", XLabel: "step", YLabel: "U(z)", Series: append(profile, mean),
	}); err != nil {
		return err
	}
	var err error
	if s.FinalMeanEnergy, s.RHat, s.SplitRHat, err = chainStatistics(energies); err != nil {
		return err
	}
	if s.BulkESS, err = eval.BulkESS(second); err != nil {
		return err
	}
	if s.TailESS, err = eval.TailESS(second); err != nil {
		return err
	}
	acf := plots.Series{Name: "mean over chains"}
	avg := make([]float64, maxLag+1)
	for _, chain := range second {
		a, err := eval.Autocorrelation(chain, maxLag)
		if err != nil {
			return err
		}
		for k, v := range a {
			avg[k] += v / float64(len(second))
		}
	}
	for k, v := range avg {
		acf.X, acf.Y = append(acf.X, float64(k)), append(acf.Y, v)
	}
	return plots.WriteLinePlot(filepath.Join(out, evalfile.AutocorrelationPicture), plots.LinePlot{
		Title: "Autocorrelation of U(z) (second half of the chains)", XLabel: "lag", YLabel: "autocorrelation", Series: []plots.Series{acf},
	})
}

// interpolations writes two grids, one row per pair of latents, each row
// decoding the straight line between the pair: prior samples (500-step
// prior Langevin) and posterior samples of consecutive test images.
func interpolations(model *lebm.Model, testPixels []float32, o Options, out string) error {
	h, w, c := model.Config().Generator.OutputShape()
	prior, err := model.PriorSample(2 * o.InterpolationRows)
	if err != nil {
		return err
	}
	defer prior.FinalizeAll()
	x := tensors.FromFlatDataAndDimensions(testPixels, 2*o.InterpolationRows, h, w, c)
	defer x.FinalizeAll()
	posterior, err := model.PosteriorSample(x)
	if err != nil {
		return err
	}
	defer posterior.FinalizeAll()
	for name, z := range map[string]*tensors.Tensor{"prior_interpolation.png": prior, "posterior_interpolation.png": posterior} {
		lines := interpolate(tensors.MustCopyFlatData[float32](z), model.Config().Generator.Nz, o.InterpolationSteps)
		n := len(lines) / model.Config().Generator.Nz
		images, err := model.Decode(tensors.FromFlatDataAndDimensions(lines, n, model.Config().Generator.Nz))
		if err != nil {
			return err
		}
		err = plots.WriteImageGrid(filepath.Join(out, name), tensors.MustCopyFlatData[float32](images), n, h, w, c, o.InterpolationSteps)
		images.FinalizeAll()
		if err != nil {
			return err
		}
	}
	return nil
}

// interpolate returns, for consecutive pairs (a, b) of the nz-dimensional
// latents z, the points (1−t)a + tb for steps values of t from 0 to 1.
func interpolate(z []float32, nz, steps int) []float32 {
	var out []float32
	for p := 0; p+2*nz <= len(z); p += 2 * nz {
		a, b := z[p:p+nz], z[p+nz:p+2*nz]
		for k := range steps {
			t := float32(k) / float32(steps-1)
			for d := range nz {
				out = append(out, (1-t)*a[d]+t*b[d])
			}
		}
	}
	return out
}
