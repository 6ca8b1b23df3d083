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
// and writes the numbers to summary.json in -out (package lebmeval does
// the work).
//
//	go run ./cmd/eval-lebm -run runs/fashion-mnist-ed
//	go run ./cmd/eval-lebm -run runs/celeba64-ed -data celeba64 -data-dir CELEBA -attribute Smiling
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmeval"
	"github.com/edlebm/edlebm/training"
)

func main() {
	var o lebmeval.Options
	flag.StringVar(&o.Run, "run", "", "train-lebm output folder (its checkpoint/ is evaluated)")
	flag.StringVar(&o.Data, "data", "", fmt.Sprintf("the run's data set, %v (default: the one its checkpoint names)", byname.Names))
	flag.StringVar(&o.DataDir, "data-dir", "", "the data set's folder, as for train-lebm (default Debian's "+mnist.DefaultFashionDir+" for fashion-mnist; for a folder of images, the folder its run recorded)")
	flag.StringVar(&o.Attribute, "attribute", "", "CelebA attribute (e.g. Smiling): draw posterior latents moved along z_with − z_without")
	flag.IntVar(&o.AttributeN, "attribute-n", 1000, "test images whose posterior latents estimate the attribute direction")
	flag.Float64Var(&o.AttributeScale, "attribute-scale", 1.5, "the attribute grid's columns move latents by α·direction, α from −scale to +scale")
	flag.StringVar(&o.Out, "out", "", "output folder (default RUN/eval)")
	flag.IntVar(&o.ReconN, "recon-n", 1000, "test images to reconstruct")
	flag.IntVar(&o.Batch, "batch", 100, "batch size for reconstruction and anomaly scores")
	flag.IntVar(&o.Chains, "chains", 8, "prior chains for the MCMC diagnostics")
	flag.IntVar(&o.ChainSteps, "chain-steps", 2000, "Langevin steps per chain")
	flag.IntVar(&o.MaxLag, "max-lag", 200, "largest autocorrelation lag")
	flag.StringVar(&o.Backend, "backend", "auto", backend.FlagUsage)
	flag.IntVar(&o.AnomalyHoldout, "anomaly-holdout", -1, "the class the run was trained without (train-lebm -anomaly-holdout): score its anomaly-detection test split and report AUPRC (default: the checkpoint's held-out class; none: skip)")
	flag.IntVar(&o.AnomalyN, "anomaly-n", 0, "score an evenly spaced subset of this many anomaly test images (0: all)")
	flag.IntVar(&o.AnomalyCheckpoints, "anomaly-checkpoints", 0, "average the anomaly AUPRC over the last N end-of-epoch snapshots in RUN/epochs (train-lebm -keep-epochs); 0: the latest checkpoint only")
	flag.Int64Var(&o.AnomalySeed, "anomaly-seed", 1, "random stream of the anomaly scores' posterior chains, restarted for each checkpoint so that all checkpoints score with the same draws")
	flag.StringVar(&o.Classifier, "classifier", "", "train-classifier output folder: compute the classifier-FID of generated samples")
	flag.StringVar(&o.Inception, "inception", "", "FID Inception weights (pytorch-fid's pt_inception-2015-12-05-6726825d.pth): compute the FID of generated samples")
	flag.StringVar(&o.FIDStats, "fid-stats", "", "file caching the training split's Inception statistics (default: the user cache folder, named by data set, training images and weights)")
	flag.IntVar(&o.FIDTrainN, "fid-train-n", 0, "training images for the FID statistics (0: all)")
	flag.IntVar(&o.PosteriorSteps, "test-posterior-steps", 0, "posterior Langevin steps for reconstruction, interpolation and anomaly scores (0: the checkpoint's, by default the paper's 100)")
	flag.Float64Var(&o.PosteriorStep, "test-posterior-step", 0, "posterior Langevin step size (0: the checkpoint's, by default the paper's 0.1)")
	flag.IntVar(&o.GenerationSteps, "gen-steps", 0, "prior Langevin steps for generated samples (0: the checkpoint's, by default the paper's 500)")
	flag.StringVar(&o.GenerationSampler, "gen-sampler", "", fmt.Sprintf("kernel of the prior chains for generated samples, %v: the paper's unadjusted Langevin, MALA (the same proposal with the Metropolis–Hastings correction) or HMC (-gen-leapfrog-steps leapfrog steps of -gen-step a proposal) (\"\": the checkpoint's, by default langevin); the acceptance goes to the report", lebm.Samplers))
	flag.IntVar(&o.GenerationLeapfrogSteps, "gen-leapfrog-steps", 0, "leapfrog steps of each HMC proposal for generated samples (-gen-sampler hmc; 0: the checkpoint's, by default 5)")
	flag.Float64Var(&o.GenerationStep, "gen-step", 0, "prior Langevin step size for generated samples (0: the checkpoint's, by default the paper's 0.2)")
	flag.IntVar(&o.FIDSamples, "fid-samples", 5000, "generated images for the FID and classifier-FID (the paper: 50000)")
	flag.IntVar(&o.InterpolationRows, "interp-rows", 8, "rows of the prior and posterior interpolation grids")
	flag.IntVar(&o.InterpolationSteps, "interp-steps", 10, "images per interpolation row (endpoints included)")
	flag.IntVar(&o.Bootstrap, "bootstrap", 1000, "resamples for the 95 % bootstrap intervals of the reconstruction MSE (over the images) and the classifier-FID (over the samples); 0: none")
	flag.IntVar(&o.FIDBootstrap, "fid-bootstrap", 50, "resamples for the 95 % bootstrap interval of the Inception FID (over the samples), each a 2048-d Fréchet distance (about 9 s a resample on two cores); 0: none")
	flag.BoolVar(&o.EachEpoch, "each-epoch", false, "also measure every end-of-epoch snapshot in RUN/"+training.EpochsDir+" (train-lebm -keep-epochs): reconstruction MSE, the FIDs asked for and the prior chains' R̂, with the same settings, into summary.json's \"epochs\" (compare-evals plots them)")
	flag.Parse()
	if err := lebmeval.Evaluate(o); err != nil {
		log.Fatalf("eval-lebm: %v", flagcheck.FlagsOf(&o, flag.CommandLine).Explain(err))
	}
}
