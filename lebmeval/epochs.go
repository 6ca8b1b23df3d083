package lebmeval

import (
	"fmt"

	"gonum.org/v1/gonum/stat"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/lebm"
)

// snapshotSeed restarts the random stream of every snapshot's evaluation,
// so that the per-epoch measures differ by the models alone.
const snapshotSeed = 1

// evaluateEpochs measures the run's end-of-epoch snapshots at paths
// (oldest first) as run measured its checkpoint, without the pictures: the
// reconstruction MSE of the first reconN test images, the FIDs of metrics
// (nil: none) and R̂ of o.Chains prior chains, appended to s.Epochs.
func evaluateEpochs(model *lebm.Model, home string, paths []string, o Options, test *datasets.Images, reconN int, metrics *sampleMetrics, s *evalfile.Report) error {
	return eachSnapshot(model, home, paths, func(path string) error {
		e, err := evaluateSnapshot(model, path, o, test, reconN, metrics)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("epoch %d (step %d): reconstruction MSE %.5f", e.Epoch, e.Step, e.ReconstructionMSE)
		if e.ClassifierFID != 0 {
			line += fmt.Sprintf(", classifier-FID %.4g", e.ClassifierFID)
		}
		if e.FID != 0 {
			line += fmt.Sprintf(", FID %.4g", e.FID)
		}
		fmt.Printf("%s, R̂ %.4f\n", line, e.RHat)
		s.Epochs = append(s.Epochs, e)
		return nil
	})
}

// eachSnapshot calls fn with each checkpoint of paths restored into model
// (lebm.Model.RestorePath), so that the graphs the evaluation compiled for
// the run's checkpoint serve its snapshots too; then it restores home, the
// checkpoint model held, and puts back the model's random stream, so that
// what follows draws what it would have drawn without the snapshots.
func eachSnapshot(model *lebm.Model, home string, paths []string, fn func(path string) error) error {
	return model.Aside(func() error {
		for _, path := range paths {
			if err := model.RestorePath(path); err != nil {
				return err
			}
			if err := fn(path); err != nil {
				return err
			}
		}
		return model.RestorePath(home)
	})
}

// evaluateSnapshot measures the snapshot at path, loaded as model, for
// evaluateEpochs.
func evaluateSnapshot(model *lebm.Model, path string, o Options, test *datasets.Images, reconN int, metrics *sampleMetrics) (evalfile.EpochReport, error) {
	e := evalfile.EpochReport{Checkpoint: path}
	var err error
	if err := model.Seed(snapshotSeed); err != nil {
		return e, err
	}
	if e.Epoch, err = model.Epoch(); err != nil {
		return e, err
	}
	e.Step = model.Step()
	_, imageErrors, err := reconstruct(model, test, reconN, o.Batch)
	if err != nil {
		return e, err
	}
	e.ReconstructionMSE = stat.Mean(imageErrors, nil)
	if metrics != nil {
		samples, _, err := generateSamples(model, o.FIDSamples, o.Batch)
		if err != nil {
			return e, err
		}
		var fids evalfile.Report
		if err := metrics.compute(samples, &fids, false); err != nil {
			return e, err
		}
		e.ClassifierFID, e.FID = fids.ClassifierFID, fids.FID
	}
	energies, err := model.PriorChainEnergies(o.Chains, o.ChainSteps, 50)
	if err != nil {
		return e, err
	}
	e.FinalMeanEnergy, e.RHat, e.SplitRHat, err = chainStatistics(energies)
	return e, err
}
