package eval

import (
	"fmt"
	"math"
)

// ExpectedCalibrationError is the expected calibration error of a
// classifier's predictions: the n predictions (probs, n rows of k class
// probabilities) grouped into bins equal-width bins of their confidence
// (the largest probability), ECE = Σ_b (n_b/n)·|accuracy_b − confidence_b|,
// with accuracy the share of the bin's predictions whose most probable
// class is labels[i]. Accuracy is the share over all predictions.
func ExpectedCalibrationError(probs []float64, k int, labels []int, bins int) (ece, accuracy float64, err error) {
	n := len(labels)
	if k < 2 || bins < 1 || n == 0 || len(probs) != n*k {
		return 0, 0, fmt.Errorf("eval: calibration of %d probabilities for %d labels of %d classes in %d bins: want n·k probabilities, k ≥ 2, n ≥ 1, bins ≥ 1", len(probs), n, k, bins)
	}
	count, correct, confidence := make([]float64, bins), make([]float64, bins), make([]float64, bins)
	for i, label := range labels {
		if label < 0 || label >= k {
			return 0, 0, fmt.Errorf("eval: label %d of prediction %d: want a class from 0 to %d", label, i, k-1)
		}
		row := probs[i*k : (i+1)*k]
		best := 0
		for c, p := range row {
			if math.IsNaN(p) || p < 0 || p > 1 {
				return 0, 0, fmt.Errorf("eval: prediction %d: probability %v of class %d: want a number in [0, 1]", i, p, c)
			}
			if p > row[best] {
				best = c
			}
		}
		b := min(int(row[best]*float64(bins)), bins-1)
		count[b]++
		confidence[b] += row[best]
		if best == label {
			correct[b]++
			accuracy++
		}
	}
	for b := range bins {
		if count[b] > 0 {
			ece += math.Abs(correct[b]-confidence[b]) / float64(n)
		}
	}
	return ece, accuracy / float64(n), nil
}
