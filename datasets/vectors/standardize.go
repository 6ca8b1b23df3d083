package vectors

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/npy"
)

// MaxDeviations bounds a new row's number's distance from the training
// rows' mean, in their standard deviations, that a model scores: its
// float32 arithmetic overflows (an energy of NaN) not far past 10³⁰, and a
// value a million deviations out is more often a sentinel (9.9e99 for
// "none") than a measurement.
const MaxDeviations = 1e6

// Deviations is v's distance from column j's mean in its standard
// deviations, and whether it is within MaxDeviations (NaN is not).
func (z Standardizer) Deviations(j int, v float64) (d float64, within bool) {
	d = (v - z.Mean[j]) / z.Std[j]
	return d, math.Abs(d) <= MaxDeviations
}

// Standardizer maps each column to zero mean and unit variance with the
// statistics of the rows it was fitted on; a run records it, so that its
// evaluation and its samples use the same scale.
type Standardizer struct {
	Mean []float64 `json:"mean"`
	// Std is each column's standard deviation (population, ddof 0); a
	// constant column gets 1.
	Std []float64 `json:"std"`
}

// Fit returns the standardiser of the rows of s.
func Fit(s *Set) Standardizer {
	z := Standardizer{Mean: make([]float64, s.D), Std: make([]float64, s.D)}
	for i := range s.N {
		for j, v := range s.Row(i) {
			z.Mean[j] += v / float64(s.N)
		}
	}
	for i := range s.N {
		for j, v := range s.Row(i) {
			d := v - z.Mean[j]
			z.Std[j] += d * d / float64(s.N)
		}
	}
	for j, v := range z.Std {
		z.Std[j] = math.Sqrt(v)
		if z.Std[j] == 0 {
			z.Std[j] = 1
		}
	}
	return z
}

// Check reports whether z standardises d columns with positive finite
// scales (a recorded standardiser may have been edited).
func (z Standardizer) Check(d int) error {
	if len(z.Mean) != d || len(z.Std) != d {
		return fmt.Errorf("standardiser of %d means and %d deviations for %d columns", len(z.Mean), len(z.Std), d)
	}
	for j := range d {
		if math.IsNaN(z.Mean[j]) || math.IsInf(z.Mean[j], 0) || !(z.Std[j] > 0) || math.IsInf(z.Std[j], 0) {
			return fmt.Errorf("column %d: mean %v and deviation %v, want finite numbers and a positive deviation", j+1, z.Mean[j], z.Std[j])
		}
	}
	return nil
}

// Apply returns the rows of s standardised, as the float32 points the
// models take.
func (z Standardizer) Apply(s *Set) []float32 {
	out := make([]float32, len(s.Values))
	for i, v := range s.Values {
		j := i % s.D
		out[i] = float32((v - z.Mean[j]) / z.Std[j])
	}
	return out
}

// Invert maps standardised points back to the data's scale.
func (z Standardizer) Invert(points []float32) []float64 {
	d := len(z.Mean)
	out := make([]float64, len(points))
	for i, v := range points {
		j := i % d
		out[i] = float64(v)*z.Std[j] + z.Mean[j]
	}
	return out
}

// LogJacobian is log |det ∂u/∂x| = −Σ log σ_j of the standardisation
// u = (x − μ)/σ: a density on the standardised scale gives the data's by
// log p(x) = log p(u) + LogJacobian.
func (z Standardizer) LogJacobian() float64 {
	var s float64
	for _, v := range z.Std {
		s -= math.Log(v)
	}
	return s
}

// Write writes s to path in the format its name ends in (one of Formats
// but .csv.gz): a CSV with s's column names as header (when it has
// them), an .npy array [N, D], or an .npz archive with the array "x";
// float64, atomically.
func Write(path string, s *Set) error {
	arr := npy.Array{Shape: []int{s.N, s.D}, Values: s.Values}
	switch format(path) {
	case ".csv":
		return atomicfile.Write(path, func(w io.Writer) error { return writeCSV(w, s) })
	case ".npy":
		return atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(npy.Encode(arr)); return err })
	case ".npz":
		data, err := npy.EncodeNPZ([]string{"x"}, map[string]npy.Array{"x": arr})
		if err != nil {
			return err
		}
		return atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(data); return err })
	}
	return fmt.Errorf("vectors: writing %s: want a name ending in .csv, .npy or .npz", path)
}

func writeCSV(w io.Writer, s *Set) error {
	c := csv.NewWriter(w)
	if s.Columns != nil {
		c.Write(s.Columns)
	}
	rec := make([]string, s.D)
	for i := range s.N {
		for j, v := range s.Row(i) {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		c.Write(rec)
	}
	c.Flush()
	return c.Error()
}
