package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAUPRCHandComputed(t *testing.T) {
	tests := []struct {
		name   string
		scores []float64
		labels []bool
		want   float64
	}{
		// Thresholds 0.8, 0.4, 0.35, 0.1: (P, R) = (1, ½), (½, ½), (⅔, 1),
		// (½, 1), so AP = ½·1 + ½·⅔ = 5/6.
		{"scikit-learn docs example", []float64{0.1, 0.4, 0.35, 0.8}, []bool{false, false, true, true}, 5.0 / 6},
		{"perfect ranking", []float64{9, 8, 7, 3, 2, 1}, []bool{true, true, true, false, false, false}, 1},
		// Positives last: (P, R) = (⅓, ½) at 2 and (½, 1) at 1.
		{"reverse ranking", []float64{4, 3, 2, 1}, []bool{false, false, true, true}, 1.0/6 + 1.0/4},
		{"single positive ranked last of four", []float64{4, 3, 2, 1}, []bool{false, false, false, true}, 1.0 / 4},
		{"all positive", []float64{0.3, -2, 7}, []bool{true, true, true}, 1},
		{"all positive, tied", []float64{1, 1, 1}, []bool{true, true, true}, 1},
		{"single example", []float64{0.5}, []bool{true}, 1},
		// One threshold containing everything: precision = prevalence.
		{"all tied", []float64{2, 2, 2, 2, 2}, []bool{true, false, false, true, false}, 2.0 / 5},
		// Threshold 1 holds one positive and one negative: (½, ½); then
		// threshold 0: (⅔, 1). AP = ¼ + ⅓.
		{"tie at the top", []float64{1, 1, 0}, []bool{true, false, true}, 1.0/4 + 1.0/3},
		// Thresholds 3, 2, 1: (1, ⅓), (⅗, 1), (½, 1). AP = ⅓ + ⅔·⅗.
		{"tie in the middle", []float64{3, 2, 2, 2, 2, 1}, []bool{true, true, false, true, false, false}, 1.0/3 + 2.0/3*3.0/5},
		{"infinite scores rank at the ends", []float64{math.Inf(1), 0, math.Inf(-1)}, []bool{true, false, true}, 1.0/2 + 1.0/2*2.0/3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AUPRC(tc.scores, tc.labels)
			if err != nil {
				t.Fatalf("AUPRC: %v", err)
			}
			if math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("AUPRC = %.17g, want %.17g", got, tc.want)
			}
		})
	}
}

// bruteForceAP sweeps every distinct threshold and recounts the whole data
// set for each one: O(n²), no sorting of examples.
func bruteForceAP(scores []float64, labels []bool) float64 {
	var thresholds []float64
	for _, s := range scores {
		seen := false
		for _, t := range thresholds {
			seen = seen || t == s
		}
		if !seen {
			thresholds = append(thresholds, s)
		}
	}
	positives := 0
	for _, l := range labels {
		if l {
			positives++
		}
	}
	var ap, prevRecall float64
	for len(thresholds) > 0 {
		// Take the largest remaining threshold.
		k := 0
		for i, t := range thresholds {
			if t > thresholds[k] {
				k = i
			}
		}
		th := thresholds[k]
		thresholds = append(thresholds[:k], thresholds[k+1:]...)
		tp, predicted := 0, 0
		for i, s := range scores {
			if s >= th {
				predicted++
				if labels[i] {
					tp++
				}
			}
		}
		recall := float64(tp) / float64(positives)
		ap += (recall - prevRecall) * float64(tp) / float64(predicted)
		prevRecall = recall
	}
	return ap
}

func TestAUPRCMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name     string
		n        int
		levels   int // scores drawn from this many values; 0 = continuous
		positive float64
	}{
		{"continuous, balanced", 200, 0, 0.5},
		{"continuous, rare positives", 300, 0, 0.05},
		{"heavy ties", 250, 5, 0.3},
		{"some ties", 250, 60, 0.2},
		{"tiny", 3, 2, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for trial := range 20 {
				scores := make([]float64, tc.n)
				labels := make([]bool, tc.n)
				for i := range scores {
					labels[i] = rng.Float64() < tc.positive
					if tc.levels > 0 {
						scores[i] = float64(rng.IntN(tc.levels))
					} else {
						scores[i] = rng.NormFloat64()
					}
					if labels[i] {
						scores[i] += 0.5 // a weakly informative detector
					}
				}
				labels[rng.IntN(tc.n)] = true // at least one positive
				got, err := AUPRC(scores, labels)
				if err != nil {
					t.Fatalf("trial %d: AUPRC: %v", trial, err)
				}
				want := bruteForceAP(scores, labels)
				if math.Abs(got-want) > 1e-12 {
					t.Fatalf("trial %d: AUPRC = %.15g, brute force = %.15g", trial, got, want)
				}
				if got <= 0 || got > 1 {
					t.Fatalf("trial %d: AUPRC = %v, want in (0, 1]", trial, got)
				}
			}
		})
	}
}

func TestAUPRCErrors(t *testing.T) {
	tests := []struct {
		name   string
		scores []float64
		labels []bool
		want   string
	}{
		{"empty", nil, nil, "no scores"},
		{"length mismatch", []float64{1, 2}, []bool{true}, "2 scores but 1 labels"},
		{"no positives", []float64{1, 2}, []bool{false, false}, "no positive labels"},
		{"NaN score", []float64{1, math.NaN()}, []bool{true, false}, "scores[1] is NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AUPRC(tc.scores, tc.labels)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("AUPRC error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
