// Command eval-lebm evaluates a latent EBM checkpoint written by train-lebm:
//
//   - reconstruction: per-pixel MSE on the first -recon-n test images with
//     the test-time posterior Langevin (100 steps of 0.1 by default), and a
//     PNG of originals beside reconstructions;
//   - MCMC diagnostics of the prior: the energy profile of -chains long
//     prior Langevin chains (PNG), Gelman–Rubin R̂ (plain and split) of the
//     chains' energies over the second half of the run, and their
//     autocorrelation (PNG);
//   - prior and posterior interpolation grids (PNG);
//   - with -attribute NAME, for CelebA runs: the attribute-manipulation
//     grid, test images' posterior latents moved along z_with − z_without;
//   - with -anomaly-holdout K, for a run trained with that option: the
//     anomaly score of the held-out-class test split and its AUPRC, for the
//     latest checkpoint or, with -anomaly-checkpoints N, averaged over the
//     last N end-of-epoch snapshots (train-lebm -keep-epochs), as the paper
//     does;
//   - with -inception WEIGHTS (pytorch-fid's pt_inception-2015-12-05
//     state dict): the FID of -fid-samples generated images (500-step
//     prior Langevin) against the training split, in the pool3 features of
//     the FID Inception network; the training statistics are computed once
//     and cached (-fid-stats);
//   - with -classifier DIR (a train-classifier output folder): the
//     classifier-FID of the same samples against the classifier's
//     training-set statistics;
//   - with -each-epoch, for a run trained with -keep-epochs: the
//     reconstruction MSE, the FIDs and the chains' R̂ again at every
//     end-of-epoch snapshot, for curves over training (compare-evals);
//
// and writes the numbers to summary.json in -out.
//
//	go run ./cmd/eval-lebm -run runs/fashion-mnist-ed
//	go run ./cmd/eval-lebm -run runs/celeba64-ed -data celeba64 -data-dir CELEBA -attribute Smiling
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/stat"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/cmd/internal/flagcheck"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/runreport"
	"github.com/edlebm/edlebm/training"
)

// options are the command's flags.
type options struct {
	runDir, data, dataDir, out, backend       string
	attribute                                 string
	attributeN                                int
	attributeScale                            float64
	reconN, batch, chains, chainSteps, maxLag int
	anomalyHoldout, anomalyN, anomalyCkpts    int
	anomalySeed                               int64
	classifierDir, inception, fidStats        string
	fidSamples, fidTrainN                     int
	genSampler                                string  // "": the checkpoint's
	postSteps, genSteps                       int     // 0: the checkpoint's
	postStep, genStep                         float64 // 0: the checkpoint's
	interpRows, interpSteps                   int
	eachEpoch                                 bool
	bootstrap                                 int
}

func main() {
	var o options
	flag.StringVar(&o.runDir, "run", "", "train-lebm output folder (its checkpoint/ is evaluated)")
	flag.StringVar(&o.data, "data", "", fmt.Sprintf("the run's data set, %v (default: the one its checkpoint names)", byname.Names))
	flag.StringVar(&o.dataDir, "data-dir", "", "the data set's folder, as for train-lebm (default Debian's "+mnist.DefaultFashionDir+" for fashion-mnist; for a folder of images, the folder its run recorded)")
	flag.StringVar(&o.attribute, "attribute", "", "CelebA attribute (e.g. Smiling): draw posterior latents moved along z_with − z_without")
	flag.IntVar(&o.attributeN, "attribute-n", 1000, "test images whose posterior latents estimate the attribute direction")
	flag.Float64Var(&o.attributeScale, "attribute-scale", 1.5, "the attribute grid's columns move latents by α·direction, α from −scale to +scale")
	flag.StringVar(&o.out, "out", "", "output folder (default RUN/eval)")
	flag.IntVar(&o.reconN, "recon-n", 1000, "test images to reconstruct")
	flag.IntVar(&o.batch, "batch", 100, "batch size for reconstruction and anomaly scores")
	flag.IntVar(&o.chains, "chains", 8, "prior chains for the MCMC diagnostics")
	flag.IntVar(&o.chainSteps, "chain-steps", 2000, "Langevin steps per chain")
	flag.IntVar(&o.maxLag, "max-lag", 200, "largest autocorrelation lag")
	flag.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	flag.IntVar(&o.anomalyHoldout, "anomaly-holdout", -1, "the class the run was trained without (train-lebm -anomaly-holdout): score its anomaly-detection test split and report AUPRC (default: the checkpoint's held-out class; none: skip)")
	flag.IntVar(&o.anomalyN, "anomaly-n", 0, "score an evenly spaced subset of this many anomaly test images (0: all)")
	flag.IntVar(&o.anomalyCkpts, "anomaly-checkpoints", 0, "average the anomaly AUPRC over the last N end-of-epoch snapshots in RUN/epochs (train-lebm -keep-epochs); 0: the latest checkpoint only")
	flag.Int64Var(&o.anomalySeed, "anomaly-seed", 1, "random stream of the anomaly scores' posterior chains, restarted for each checkpoint so that all checkpoints score with the same draws")
	flag.StringVar(&o.classifierDir, "classifier", "", "train-classifier output folder: compute the classifier-FID of generated samples")
	flag.StringVar(&o.inception, "inception", "", "FID Inception weights (pytorch-fid's pt_inception-2015-12-05-6726825d.pth): compute the FID of generated samples")
	flag.StringVar(&o.fidStats, "fid-stats", "", "file caching the training split's Inception statistics (default: the user cache folder, named by data set, training images and weights)")
	flag.IntVar(&o.fidTrainN, "fid-train-n", 0, "training images for the FID statistics (0: all)")
	flag.IntVar(&o.postSteps, "test-posterior-steps", 0, "posterior Langevin steps for reconstruction, interpolation and anomaly scores (0: the checkpoint's, by default the paper's 100)")
	flag.Float64Var(&o.postStep, "test-posterior-step", 0, "posterior Langevin step size (0: the checkpoint's, by default the paper's 0.1)")
	flag.IntVar(&o.genSteps, "gen-steps", 0, "prior Langevin steps for generated samples (0: the checkpoint's, by default the paper's 500)")
	flag.StringVar(&o.genSampler, "gen-sampler", "", fmt.Sprintf("kernel of the prior chains for generated samples, %v: the paper's unadjusted Langevin, or MALA, the same proposal with the Metropolis–Hastings correction (\"\": the checkpoint's, by default langevin); the acceptance goes to the report", lebm.Samplers))
	flag.Float64Var(&o.genStep, "gen-step", 0, "prior Langevin step size for generated samples (0: the checkpoint's, by default the paper's 0.2)")
	flag.IntVar(&o.fidSamples, "fid-samples", 5000, "generated images for the FID and classifier-FID (the paper: 50000)")
	flag.IntVar(&o.interpRows, "interp-rows", 8, "rows of the prior and posterior interpolation grids")
	flag.IntVar(&o.interpSteps, "interp-steps", 10, "images per interpolation row (endpoints included)")
	flag.IntVar(&o.bootstrap, "bootstrap", 1000, "resamples for the 95 % bootstrap intervals of the reconstruction MSE (over the images) and the FIDs (over the samples); 0: none")
	flag.BoolVar(&o.eachEpoch, "each-epoch", false, "also measure every end-of-epoch snapshot in RUN/"+training.EpochsDir+" (train-lebm -keep-epochs): reconstruction MSE, the FIDs asked for and the prior chains' R̂, with the same settings, into summary.json's \"epochs\" (compare-evals plots them)")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatalf("eval-lebm: %v", err)
	}
}

// fromCheckpoint completes o with what the checkpoint says of its run — the
// data set and the class held out under the anomaly protocol — refusing
// flags that contradict it, and then checks the flags that depend on the
// data set. Checkpoints from before they named their data set need -data.
func (o *options) fromCheckpoint(cfg lebm.Config) error {
	switch {
	case o.data == "" && cfg.Data == "":
		return fmt.Errorf("flag -data: the checkpoint does not name its data set (written before checkpoints kept it): give -data")
	case o.data == "":
		o.data = cfg.Data
	case cfg.Data != "" && o.data != cfg.Data:
		return fmt.Errorf("flag -data %s: the checkpoint was trained on %s", o.data, cfg.Data)
	}
	switch {
	case o.anomalyHoldout == -1:
		o.anomalyHoldout = cfg.AnomalyHoldout
	case cfg.Data != "" && o.anomalyHoldout != cfg.AnomalyHoldout:
		held := "no class held out"
		if cfg.AnomalyHoldout >= 0 {
			held = fmt.Sprintf("class %d held out", cfg.AnomalyHoldout)
		}
		return fmt.Errorf("flag -anomaly-holdout %d: the checkpoint was trained with %s", o.anomalyHoldout, held)
	}
	if o.dataDir == "" && o.data == "fashion-mnist" {
		o.dataDir = mnist.DefaultFashionDir
	}
	if o.anomalyHoldout >= 0 && o.data != "mnist" && o.data != "fashion-mnist" && o.data != lebm.FolderData {
		return fmt.Errorf("flag -anomaly-holdout: the anomaly protocol is defined for mnist, fashion-mnist and a folder of images in class folders, not %s", o.data)
	}
	if o.attribute != "" && !byname.IsCelebA(o.data) {
		return fmt.Errorf("flag -attribute %q: needs -data celeba64 or celeba128, not %s", o.attribute, o.data)
	}
	return nil
}

// samplers are the load options that apply the sampler flags.
func (o options) samplers() []lebm.LoadOption {
	return []lebm.LoadOption{lebm.WithTestPosterior(o.postSteps, o.postStep), lebm.WithGeneration(o.genSteps, o.genStep), lebm.WithGenerationSampler(o.genSampler)}
}

// checkValues checks each numeric flag against its range, naming the
// first flag out of it.
func (o options) checkValues() error {
	reconN, batch, chains, chainSteps, maxLag := o.reconN, o.batch, o.chains, o.chainSteps, o.maxLag
	fid := o.classifierDir != "" || o.inception != ""
	return flagcheck.Check(
		flagcheck.Rule{Flag: "attribute-n", Value: o.attributeN, OK: o.attribute == "" || o.attributeN >= 2, Want: "≥ 2"},
		flagcheck.Rule{Flag: "attribute-scale", Value: o.attributeScale, OK: o.attribute == "" || o.attributeScale > 0, Want: "> 0"},
		flagcheck.Rule{Flag: "fid-samples", Value: o.fidSamples, OK: !fid || o.fidSamples >= 2, Want: "≥ 2 (and more than the features' dimensions)"},
		flagcheck.Rule{Flag: "test-posterior-steps", Value: o.postSteps, OK: o.postSteps >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Flag: "test-posterior-step", Value: o.postStep, OK: o.postStep >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Flag: "gen-steps", Value: o.genSteps, OK: o.genSteps >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Flag: "gen-step", Value: o.genStep, OK: o.genStep >= 0, Want: "≥ 0 (0: the checkpoint's)"},
		flagcheck.Rule{Flag: "gen-sampler", Value: o.genSampler, OK: o.genSampler == "" || slices.Contains(lebm.Samplers, o.genSampler), Want: fmt.Sprintf("one of %v (or empty: the checkpoint's)", lebm.Samplers)},
		flagcheck.Rule{Flag: "fid-train-n", Value: o.fidTrainN, OK: o.fidTrainN >= 0, Want: "≥ 0 (0: the whole training split)"},
		flagcheck.Rule{Flag: "bootstrap", Value: o.bootstrap, OK: o.bootstrap >= 0, Want: "≥ 0 (0: no intervals)"},
		flagcheck.Rule{Flag: "interp-rows", Value: o.interpRows, OK: o.interpRows >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "interp-steps", Value: o.interpSteps, OK: o.interpSteps >= 2, Want: "≥ 2"},
		flagcheck.Rule{Flag: "recon-n", Value: reconN, OK: reconN >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "batch", Value: batch, OK: batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "chains", Value: chains, OK: chains >= 2, Want: "≥ 2"},
		flagcheck.Rule{Flag: "chain-steps", Value: chainSteps, OK: chainSteps >= 100 && chainSteps%50 == 0, Want: "a multiple of 50, at least 100"},
		flagcheck.Rule{Flag: "max-lag", Value: maxLag, OK: maxLag >= 1 && maxLag < chainSteps/2, Want: fmt.Sprintf("≥ 1 and below half of -chain-steps %d", chainSteps)},
	)
}

func run(o options) error {
	runDir, reconN, batch := o.runDir, o.reconN, o.batch
	out, err := o.outFolder()
	if err != nil {
		return err
	}
	folder := training.Folder{Dir: runDir}
	b, err := backend.OpenForCommand(o.backend)
	if err != nil {
		return err
	}
	defer b.Finalize()
	model, s, err := o.loadModel(b, folder.Checkpoints())
	if err != nil {
		return err
	}
	cfg := model.Config()

	var snapshots []string // -each-epoch's, listed before the slow work
	if o.eachEpoch {
		if snapshots, err = lebm.Checkpoints(folder.Epochs()); err != nil {
			return fmt.Errorf("flag -each-epoch: %w (train with -keep-epochs)", err)
		}
	}
	h, w, c := model.Config().Generator.OutputShape()
	var metrics *sampleMetrics // checked before the slow work
	if o.classifierDir != "" || o.inception != "" {
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
		return fmt.Errorf("flag -out: %w", err)
	}
	if o.attribute != "" {
		if err := attributeGrid(model, test, o, out); err != nil {
			return fmt.Errorf("flag -attribute: %w", err)
		}
	}
	reconN = min(reconN, test.N) / batch * batch
	if err := measureReconstructions(model, test, reconN, o, out, &s); err != nil {
		return err
	}
	if err := interpolations(model, test.Pixels[:2*o.interpRows*test.ImageSize()], o, out); err != nil {
		return err
	}
	if o.anomalyHoldout >= 0 {
		if err := scoreAnomalies(b, model, o, out, &s); err != nil {
			return fmt.Errorf("flag -anomaly-holdout: %w", err)
		}
	}
	if err := measureSamples(model, o, metrics, out, &s); err != nil {
		return err
	}

	if err := diagnoseChains(model, o, out, &s); err != nil {
		return err
	}
	fmt.Printf("reconstruction MSE %.5f on %d test images; prior chains: R̂ %.4f, split R̂ %.4f\n",
		s.ReconstructionMSE, reconN, s.RHat, s.SplitRHat)
	if o.eachEpoch {
		if err := evaluateEpochs(b, snapshots, o, test, reconN, metrics, &s); err != nil {
			return fmt.Errorf("flag -each-epoch: %w", err)
		}
	}
	if err := atomicfile.WriteJSON(filepath.Join(out, eval.ReportFile), s); err != nil {
		return err
	}
	// The run's page now shows this evaluation beside the paper's numbers.
	return runreport.Write(runreport.Run{Dir: runDir, Config: cfg, Step: s.Step, Eval: &s, EvalDir: out})
}

// loadModel loads the run's checkpoint from ckpt, with the samplers the
// flags ask for, takes from it the settings the flags left open, and
// starts the report of its evaluation.
func (o *options) loadModel(b backends.Backend, ckpt string) (*lebm.Model, eval.Report, error) {
	model, err := lebm.Load(b, ckpt, o.samplers()...)
	if err != nil {
		return nil, eval.Report{}, fmt.Errorf("flag -run: %w", err)
	}
	cfg := model.Config()
	if err := o.fromCheckpoint(cfg); err != nil {
		return nil, eval.Report{}, err
	}
	s := eval.Report{Checkpoint: ckpt, Data: o.data, Method: cfg.Method, Chains: o.chains, ChainSteps: o.chainSteps, AnomalyHeldOut: o.anomalyHoldout,
		TestPosteriorSteps: cfg.TestPosteriorLangevin.Steps, TestPosteriorStepSize: cfg.TestPosteriorLangevin.StepSize,
		GenerationSteps: cfg.GenerationLangevin.Steps, GenerationStepSize: cfg.GenerationLangevin.StepSize}
	s.Step = model.Step()
	return model, s, nil
}

// diagnoseChains runs o.chains prior chains of o.chainSteps steps and
// writes their diagnostics into s and out (see diagnose).
func diagnoseChains(model *lebm.Model, o options, out string, s *eval.Report) error {
	energies, err := model.PriorChainEnergies(o.chains, o.chainSteps, 50)
	if err != nil {
		return err
	}
	return diagnose(out, energies, o.maxLag, s)
}

// outFolder checks the flags that need no file and returns the folder to
// write into: -out, by default the run's eval folder.
func (o options) outFolder() (string, error) {
	if o.runDir == "" {
		return "", fmt.Errorf("flag -run: the train-lebm output folder is required")
	}
	if o.data != "" && o.data != lebm.FolderData && !slices.Contains(byname.Names, o.data) {
		return "", fmt.Errorf("flag -data %q: want one of %v, or %s", o.data, byname.Names, lebm.FolderData)
	}
	if err := o.checkValues(); err != nil {
		return "", err
	}
	out := o.out
	if out == "" {
		out = training.Folder{Dir: o.runDir}.Eval()
	}
	if info, err := os.Stat(out); err == nil && !info.IsDir() {
		return "", fmt.Errorf("flag -out %s: a file, not a folder", out)
	}
	return out, nil
}

// loadTest reads the test images that the reconstructions (and
// -attribute) need, checking that they fit the checkpoint's generator,
// h×w×c, and -batch.
func loadTest(o options, h, w, c int) (*datasets.Images, error) {
	testLimit := o.reconN
	if o.attribute != "" {
		testLimit = max(o.reconN, o.attributeN)
	}
	test, err := lebmrun.LoadImages(o.runDir, o.data, o.dataDir, "test", testLimit)
	if err != nil {
		return nil, fmt.Errorf("flag -data-dir: %w", err)
	}
	if test.Height != h || test.Width != w || test.Channels != c {
		return nil, fmt.Errorf("flag -data-dir %s: images are %d×%d×%d, but the checkpoint's generator makes %d×%d×%d: the checkpoint does not match the data set",
			o.dataDir, test.Height, test.Width, test.Channels, h, w, c)
	}
	if available := min(o.reconN, test.N); available < o.batch {
		return nil, fmt.Errorf("flag -batch %d: larger than the %d test images to reconstruct (-recon-n)", o.batch, available)
	}
	return test, nil
}

// measureReconstructions reconstructs the first n test images into s (the
// MSE, with its bootstrap interval if asked) and reconstructions.png.
func measureReconstructions(model *lebm.Model, test *datasets.Images, n int, o options, out string, s *eval.Report) error {
	recon, imageErrors, err := reconstruct(model, test, n, o.batch)
	if err != nil {
		return err
	}
	s.ReconstructionImages, s.ReconstructionMSE = n, stat.Mean(imageErrors, nil)
	if o.bootstrap > 0 {
		iv, err := eval.MeanInterval(imageErrors, o.bootstrap, bootstrapSeed)
		if err != nil {
			return err
		}
		s.ReconstructionMSEInterval = &iv
	}
	shown, size := min(64, n), test.ImageSize()
	return plots.WriteImagePairs(filepath.Join(out, "reconstructions.png"), test.Pixels[:shown*size], recon[:shown*size],
		shown, test.Height, test.Width, test.Channels, 8)
}

// measureSamples draws samples.png and, when metrics are asked for,
// scores o.fidSamples samples into s. Samples are what a person looks at
// first: their grid is drawn even when no sample metric asks for them.
func measureSamples(model *lebm.Model, o options, metrics *sampleMetrics, out string, s *eval.Report) error {
	n := sampleGridN
	if metrics != nil {
		n = o.fidSamples
	}
	samples, acceptance, err := generateSamples(model, n, o.batch)
	if err != nil {
		return err
	}
	s.GenerationSampler, s.GenerationAcceptance = model.Config().GenerationSampler, acceptance
	fmt.Printf("generation: %s, %.3f of the proposals accepted\n", s.GenerationSampler, acceptance)
	if err := writeSampleGrid(samples, out); err != nil {
		return err
	}
	if metrics == nil {
		return nil
	}
	return metrics.compute(samples, s, o.bootstrap)
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
func diagnose(out string, energies [][]float64, maxLag int, s *eval.Report) error {
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
	if err := plots.WriteLinePlot(filepath.Join(out, "energy_profile.png"), plots.LinePlot{
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
	return plots.WriteLinePlot(filepath.Join(out, "autocorrelation.png"), plots.LinePlot{
		Title: "Autocorrelation of U(z) (second half of the chains)", XLabel: "lag", YLabel: "autocorrelation", Series: []plots.Series{acf},
	})
}

// interpolations writes two grids, one row per pair of latents, each row
// decoding the straight line between the pair: prior samples (500-step
// prior Langevin) and posterior samples of consecutive test images.
func interpolations(model *lebm.Model, testPixels []float32, o options, out string) error {
	h, w, c := model.Config().Generator.OutputShape()
	prior, err := model.PriorSample(2 * o.interpRows)
	if err != nil {
		return err
	}
	defer prior.FinalizeAll()
	x := tensors.FromFlatDataAndDimensions(testPixels, 2*o.interpRows, h, w, c)
	defer x.FinalizeAll()
	posterior, err := model.PosteriorSample(x)
	if err != nil {
		return err
	}
	defer posterior.FinalizeAll()
	for name, z := range map[string]*tensors.Tensor{"prior_interpolation.png": prior, "posterior_interpolation.png": posterior} {
		lines := interpolate(tensors.MustCopyFlatData[float32](z), model.Config().Generator.Nz, o.interpSteps)
		n := len(lines) / model.Config().Generator.Nz
		images, err := model.Decode(tensors.FromFlatDataAndDimensions(lines, n, model.Config().Generator.Nz))
		if err != nil {
			return err
		}
		err = plots.WriteImageGrid(filepath.Join(out, name), tensors.MustCopyFlatData[float32](images), n, h, w, c, o.interpSteps)
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
