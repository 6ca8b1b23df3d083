package evalcompare

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/evalfile"
)

// level is the coverage of the bootstrap intervals.
const level = 0.95

// scoreSet is one cell's scored images: which are anomalies and a column
// of scores per averaged snapshot.
type scoreSet struct {
	labels  []bool
	columns [][]float64
}

// readScores reads the scores file beside the report at path (a folder or
// its summary.json); nil when there is none (reports of older eval-lebm).
func readScores(path string) (*scoreSet, error) {
	dir := path
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir = filepath.Dir(path)
	}
	file := filepath.Join(dir, evalfile.AnomalyScoresFile)
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	labels, columns, err := evalfile.ReadAnomalyScores(file)
	if err != nil {
		return nil, err
	}
	return &scoreSet{labels, columns}, nil
}

// draws are the bootstrap values of the snapshot-averaged AUPRC of every
// cell with scores, resampling each class's images with one seed for all
// labels, so that draw r of two labels of a class uses the same images:
// their difference is a paired bootstrap.
func (t *anomalyTable) bootstrap(resamples int) error {
	t.draws = map[anomalyKey][]float64{}
	for ci, c := range t.classes {
		var images []bool
		for _, l := range t.labels {
			key := anomalyKey{c, l}
			s := t.scores[key]
			if s == nil {
				continue
			}
			if r := t.cells[key]; len(s.columns) != len(r.AnomalyAUPRCs) || len(s.labels) != r.AnomalyImages {
				return fmt.Errorf("%s: %d score columns of %d images, but the report averages %d snapshots of %d images",
					evalfile.AnomalyScoresFile, len(s.columns), len(s.labels), len(r.AnomalyAUPRCs), r.AnomalyImages)
			}
			if images != nil && !slices.Equal(images, s.labels) {
				continue // other images than the class's first: not comparable
			}
			images = s.labels
			t.draws[key] = eval.Bootstrap(len(s.labels), resamples, uint64(ci+1), func(idx []int) float64 {
				return eval.MeanAUPRC(s.labels, s.columns, idx)
			})
		}
	}
	return nil
}

// interval is the bootstrap interval of values, formatted; "" when there
// are none.
func interval(values []float64) string {
	lo, hi, err := eval.PercentileInterval(values, level)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" [%.3f, %.3f]", lo, hi)
}

// meanDraws averages the draws of label over every class, draw by draw
// (classes are resampled independently); nil unless every class has draws.
func (t *anomalyTable) meanDraws(label string) []float64 {
	var mean []float64
	for i, c := range t.classes {
		d := t.draws[anomalyKey{c, label}]
		if d == nil {
			return nil
		}
		if i == 0 {
			mean = make([]float64, len(d))
		}
		n := min(len(mean), len(d))
		mean = mean[:n]
		for r := range n {
			mean[r] += d[r] / float64(len(t.classes))
		}
	}
	return mean
}

// difference is draws a − b, draw by draw; nil when either is missing.
func difference(a, b []float64) []float64 {
	if a == nil || b == nil || len(a) != len(b) {
		return nil
	}
	d := make([]float64, len(a))
	for r := range a {
		d[r] = a[r] - b[r]
	}
	return d
}
