package eval

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// AUPRC returns the area under the precision–recall curve of an anomaly
// detector: labels[i] is true when example i is an anomaly (a positive) and
// scores[i] is its anomaly score, higher meaning more anomalous.
//
// The area is the step-wise average precision, the definition of
// scikit-learn's average_precision_score:
//
//	AP = Σ_n (R_n − R_{n−1}) P_n,  R_0 = 0,
//
// where n runs over the distinct score values t_1 > t_2 > … in decreasing
// order and P_n and R_n are the precision and recall of the rule "anomaly
// when score ≥ t_n". Examples with equal scores share one threshold, so a
// tie is counted as a single step rather than in an arbitrary order. No
// interpolation is done. A perfect ranking gives 1; scoring every example
// the same gives the fraction of positives.
//
// Scores may be ±Inf but not NaN; there must be at least one positive.
// The cost is O(n log n).
func AUPRC(scores []float64, labels []bool) (float64, error) {
	if len(scores) != len(labels) {
		return 0, fmt.Errorf("eval: AUPRC: %d scores but %d labels: want one label per score", len(scores), len(labels))
	}
	if len(scores) == 0 {
		return 0, errors.New("eval: AUPRC: no scores: want at least one example")
	}
	positives := 0
	for i, s := range scores {
		if math.IsNaN(s) {
			return 0, fmt.Errorf("eval: AUPRC: scores[%d] is NaN: want a number", i)
		}
		if labels[i] {
			positives++
		}
	}
	if positives == 0 {
		return 0, errors.New("eval: AUPRC: no positive labels: want at least one anomaly")
	}

	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })

	var ap float64
	tp, fp := 0, 0
	for i := 0; i < len(order); {
		// Take every example whose score equals this threshold.
		t := scores[order[i]]
		prevTP := tp
		for ; i < len(order) && scores[order[i]] == t; i++ {
			if labels[order[i]] {
				tp++
			} else {
				fp++
			}
		}
		if tp > prevTP {
			precision := float64(tp) / float64(tp+fp)
			ap += float64(tp-prevTP) / float64(positives) * precision
		}
	}
	return ap, nil
}
