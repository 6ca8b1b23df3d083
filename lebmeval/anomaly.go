package lebmeval

import (
	"fmt"
	"path/filepath"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/training"
)

// scoreAnomalies rebuilds the run's anomaly-detection split, scores (an
// evenly spaced subset of) its test images with lebm's anomaly score and
// computes the AUPRC with anomalies as positives: for model, or for each of
// the last o.AnomalyCheckpoints epoch snapshots, averaged (each restored
// into model in turn; model holds the checkpoint home again afterwards).
// Each checkpoint scores from the random stream o.AnomalySeed, so that the
// AUPRCs differ by the models alone and a checkpoint's score does not
// depend on what ran before. The scores go to evalfile.AnomalyScoresFile
// in out.
func scoreAnomalies(model *lebm.Model, home string, o Options, out string, s *evalfile.Report) error {
	images, labels, err := anomalyTestSet(o)
	if err != nil {
		return err
	}
	s.AnomalyImages = images.N
	for _, anomalous := range labels {
		if anomalous {
			s.AnomalyPositives++
		}
	}
	fromSnapshots := o.AnomalyCheckpoints > 0
	var columns [][]float64
	score := func(name string) error {
		if err := model.Seed(o.AnomalySeed); err != nil {
			return err
		}
		scores, auprc, err := anomalyAUPRC(model, images, labels, o.Batch)
		if err != nil {
			return err
		}
		if fromSnapshots {
			fmt.Printf("anomaly AUPRC %.4f at %s\n", auprc, name)
		}
		s.AnomalyAUPRCs, s.AnomalyCheckpoints = append(s.AnomalyAUPRCs, auprc), append(s.AnomalyCheckpoints, name)
		columns = append(columns, scores)
		return nil
	}
	if fromSnapshots {
		snapshots := training.Folder{Dir: o.Run}.Epochs()
		paths, err := lebm.Checkpoints(snapshots)
		if err != nil {
			return fmt.Errorf("Options.AnomalyCheckpoints %d: %w (train with lebmrun.Options.KeepEpochs: train-lebm -keep-epochs)", o.AnomalyCheckpoints, err)
		}
		if len(paths) < o.AnomalyCheckpoints {
			return fmt.Errorf("Options.AnomalyCheckpoints %d: %s holds only %d snapshots", o.AnomalyCheckpoints, snapshots, len(paths))
		}
		err = eachSnapshot(model, home, paths[len(paths)-o.AnomalyCheckpoints:], score)
	} else {
		err = score(s.Checkpoint)
	}
	if err != nil {
		return err
	}
	s.AnomalyAUPRC = 0
	for _, a := range s.AnomalyAUPRCs {
		s.AnomalyAUPRC += a / float64(len(s.AnomalyAUPRCs))
	}
	fmt.Printf("anomaly detection, class %d held out: AUPRC %.4f on %d test images (mean over %d checkpoints)\n",
		o.AnomalyHoldout, s.AnomalyAUPRC, s.AnomalyImages, len(s.AnomalyAUPRCs))
	return evalfile.WriteAnomalyScores(filepath.Join(out, evalfile.AnomalyScoresFile), labels, columns)
}

// anomalyTestSet returns the (subset of the) anomaly-detection test split
// to score, a whole number of batches, and which images are anomalies.
func anomalyTestSet(o Options) (*datasets.Images, []bool, error) {
	train, err := lebmrun.LoadImages(o.Run, o.Data, o.DataDir, "train", 0)
	if err != nil {
		return nil, nil, err
	}
	test, err := lebmrun.LoadImages(o.Run, o.Data, o.DataDir, "test", 0)
	if err != nil {
		return nil, nil, err
	}
	split, err := datasets.PaperAnomalySplit(train, test, o.AnomalyHoldout)
	if err != nil {
		return nil, nil, err
	}
	indices, err := evenlySpaced(split.Test.N, o.AnomalyN, o.Batch)
	if err != nil {
		return nil, nil, err
	}
	images, err := split.Test.Subset(indices)
	if err != nil {
		return nil, nil, err
	}
	labels := make([]bool, len(indices))
	for i, j := range indices {
		labels[i] = split.Anomalous[j]
	}
	return images, labels, nil
}

// evenlySpaced returns which of total test images to score: all of them,
// or limit evenly spaced ones when 0 < limit < total (which keeps the
// anomaly share), cut to a whole number of batches.
func evenlySpaced(total, limit, batch int) ([]int, error) {
	n := total
	if limit > 0 && limit < n {
		n = limit
	}
	if n/batch == 0 {
		return nil, fmt.Errorf("Options.Batch %d exceeds the %d test images to score", batch, n)
	}
	indices := make([]int, n/batch*batch)
	for i := range indices {
		indices[i] = i * total / len(indices)
	}
	return indices, nil
}

// anomalyAUPRC scores images with model and returns the scores and their
// AUPRC.
func anomalyAUPRC(model *lebm.Model, images *datasets.Images, labels []bool, batch int) ([]float64, float64, error) {
	values, err := mapBatches(images, images.N, batch, "scored", model.AnomalyScore)
	if err != nil {
		return nil, 0, err
	}
	scores := make([]float64, len(values))
	for i, v := range values {
		scores[i] = float64(v)
	}
	auprc, err := eval.AUPRC(scores, labels)
	return scores, auprc, err
}
