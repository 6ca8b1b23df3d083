package eval

import (
	"math"
	"testing"
)

// TestExpectedCalibrationError checks a hand-computed case: five
// predictions of three classes in two bins — [0, ½) holds the 0.4 and the
// 0.45 (one right: accuracy ½, confidence 0.425), [½, 1] the 0.9, the 0.8
// and the 0.6 (two right: accuracy ⅔, confidence 0.7667): ECE =
// (2/5)·0.075 + (3/5)·0.1 = 0.09; accuracy 3/5. Bad inputs are refused.
func TestExpectedCalibrationError(t *testing.T) {
	probs := []float64{
		0.4, 0.3, 0.3, // → 0, label 0: right
		0.45, 0.35, 0.2, // → 0, label 1: wrong
		0.05, 0.9, 0.05, // → 1, label 1: right
		0.1, 0.1, 0.8, // → 2, label 2: right
		0.6, 0.2, 0.2, // → 0, label 2: wrong
	}
	labels := []int{0, 1, 1, 2, 2}
	ece, acc, err := ExpectedCalibrationError(probs, 3, labels, 2)
	if err != nil || math.Abs(ece-0.09) > 1e-12 || math.Abs(acc-0.6) > 1e-12 {
		t.Errorf("ECE %v, accuracy %v (%v); want 0.09 and 0.6", ece, acc, err)
	}
	for _, bad := range []struct {
		probs  []float64
		labels []int
	}{{probs[:14], labels}, {probs, []int{0, 1, 1, 2, 3}}, {append([]float64{math.NaN()}, probs[1:]...), labels}} {
		if _, _, err := ExpectedCalibrationError(bad.probs, 3, bad.labels, 2); err == nil {
			t.Errorf("%v, %v: no error", bad.probs, bad.labels)
		}
	}
}
