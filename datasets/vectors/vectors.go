// Package vectors reads a user's table of real vectors — a CSV file
// (gzipped or not), a NumPy .npy array or an .npz archive — as the N × d
// points the density models train on, splits it into training and
// held-out rows by a seed, standardises it with the training rows'
// statistics, and writes points back in the input's format.
//
// A CSV file's first row is a header when none of its fields is a number;
// SkipRows drops leading lines first (scikit-learn's bundled files start
// with a line of counts and class names). A label column, named by
// ReadOptions.Label, is set aside. Every other field must be a finite
// number: a ragged row, a word or a NaN is an error naming the file, the
// line and the column.
package vectors

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/edlebm/edlebm/npy"
)

// Set is N vectors of dimension D.
type Set struct {
	// Name is the file's base name.
	Name string
	N, D int
	// Values holds the N·D values row by row.
	Values []float64
	// Columns names the D columns (a CSV header), or is nil.
	Columns []string
	// Labels holds each row's label, when a label column was read.
	Labels []string
}

// Row returns row i as a view into Values.
func (s *Set) Row(i int) []float64 { return s.Values[i*s.D : (i+1)*s.D : (i+1)*s.D] }

// ReadOptions say how to read a file.
type ReadOptions struct {
	// Label names the label column of a CSV file — its header name, its
	// number counted from 1, or "last" — or the label array of an .npz
	// archive; "" reads no labels.
	Label string
	// SkipRows drops that many lines at the start of a CSV file.
	SkipRows int
	// Array names the array of an .npz archive holding the vectors
	// (default: its only array other than Label, or the one called "x",
	// "X" or "data").
	Array string
}

// Formats are the file name endings Read and Write know.
var Formats = []string{".csv", ".csv.gz", ".npy", ".npz"}

// format returns the ending of Formats that path has, or "".
func format(path string) string {
	lower := strings.ToLower(path)
	for _, f := range []string{".csv.gz", ".csv", ".npy", ".npz"} {
		if strings.HasSuffix(lower, f) {
			return f
		}
	}
	return ""
}

// Read reads the vectors of the file at path, by its name's ending (one of
// Formats). Errors name the file, and the line and column where there is
// one.
func Read(path string, o ReadOptions) (*Set, error) {
	var s *Set
	var err error
	switch format(path) {
	case ".csv", ".csv.gz":
		s, err = readCSV(path, o)
	case ".npy", ".npz":
		s, err = readNumPy(path, o)
	default:
		return nil, fmt.Errorf("vectors: %s: unknown format; want a file ending in one of %v", path, Formats)
	}
	if err != nil {
		return nil, err
	}
	if s.N == 0 || s.D == 0 {
		return nil, fmt.Errorf("vectors: %s holds %d rows of %d values: want at least one row and one column", path, s.N, s.D)
	}
	s.Name = filepath.Base(path)
	return s, nil
}

// readCSV reads a CSV file, gzipped when its name ends in .gz.
func readCSV(path string, o ReadOptions) (*Set, error) {
	t := &table{path: path, firstLine: o.SkipRows + 1, label: -1}
	err := ReadRecords(path, o.SkipRows, func(rec []string, line int) error { return t.add(rec, line, o.Label) })
	if err != nil {
		return nil, err
	}
	return t.set(), nil
}

// ReadRecords calls fn with each record of the CSV file at path (gzipped
// when its name ends in .gz) and its line, after skipRows lines: quoted
// fields as encoding/csv reads them, a leading byte-order mark dropped,
// every record as long as the first. The record is reused between calls.
// Errors name the file and line.
func ReadRecords(path string, skipRows int, fn func(rec []string, line int) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("vectors: %w", err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("vectors: %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	br := bufio.NewReader(r)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
		br.Discard(3)
	}
	for i := range skipRows {
		if _, err := br.ReadString('\n'); err != nil {
			return fmt.Errorf("vectors: %s: skipping line %d of %d: %w", path, i+1, skipRows, err)
		}
	}
	cr := csv.NewReader(br)
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if pe := (*csv.ParseError)(nil); errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("vectors: %s, line %d: %d fields, want %d like the rows before", path, pe.Line+skipRows, len(rec), cr.FieldsPerRecord)
		}
		if err != nil {
			return fmt.Errorf("vectors: %s: %w", path, err)
		}
		line, _ := cr.FieldPos(0) // only valid for a record read without error
		if err := fn(rec, line+skipRows); err != nil {
			return err
		}
	}
}

// table collects the rows of a CSV file.
type table struct {
	path      string
	firstLine int
	fields    int // per row, label included
	label     int // the label column's index, or −1
	header    []string
	values    []float64
	labels    []string
	rows      int
}

// add adds one record read at line: the header, when it is the first and
// holds no number, else a row of numbers (and the label).
func (t *table) add(rec []string, line int, label string) error {
	if t.fields == 0 {
		t.fields = len(rec)
		isHeader := !slices.ContainsFunc(rec, func(f string) bool { _, err := parseNumber(f); return err == nil })
		if isHeader {
			t.header = slices.Clone(rec)
		}
		if err := t.findLabel(label); err != nil {
			return err
		}
		if isHeader {
			return nil
		}
	}
	for j, field := range rec {
		if j == t.label {
			t.labels = append(t.labels, field)
			continue
		}
		v, err := parseNumber(field)
		if err != nil {
			return fmt.Errorf("vectors: %s, line %d, column %d%s: %w", t.path, line, j+1, t.columnName(j), err)
		}
		t.values = append(t.values, v)
	}
	t.rows++
	return nil
}

// findLabel sets the label column named by label: a header name, a
// column number from 1, or "last".
func (t *table) findLabel(label string) error {
	switch {
	case label == "":
		return nil
	case label == "last":
		t.label = t.fields - 1
		return nil
	}
	if i := slices.Index(t.header, label); i >= 0 {
		t.label = i
		return nil
	}
	if n, err := strconv.Atoi(label); err == nil && n >= 1 && n <= t.fields {
		t.label = n - 1
		return nil
	}
	return fmt.Errorf("vectors: %s: label column %q: want a header name %q, a column number from 1 to %d, or last", t.path, label, t.header, t.fields)
}

// columnName is " (name)" for a column of a file with a header.
func (t *table) columnName(j int) string {
	if t.header == nil {
		return ""
	}
	return " (" + t.header[j] + ")"
}

// set returns the table's vectors.
func (t *table) set() *Set {
	s := &Set{N: t.rows, Values: t.values}
	s.D = t.fields
	if t.label >= 0 {
		s.D--
		s.Labels = t.labels
	}
	if t.header != nil {
		for j, h := range t.header {
			if j != t.label {
				s.Columns = append(s.Columns, h)
			}
		}
	}
	return s
}

// ErrNotANumber is what a field that is not a number is (errors.Is): a
// word in a file of numbers.
var ErrNotANumber = errors.New("not a number")

// parseNumber reads a finite number.
func parseNumber(field string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is %w", field, ErrNotANumber)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%v: want finite numbers (remove or fill in missing values)", v)
	}
	return v, nil
}

// readNumPy reads an .npy array [N, d] (or [N]) or an array of an .npz
// archive.
func readNumPy(path string, o ReadOptions) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vectors: %w", err)
	}
	var arr, labels npy.Array
	if format(path) == ".npy" {
		if o.Label != "" {
			return nil, fmt.Errorf("vectors: %s: a label column needs a CSV file or an .npz archive with a label array", path)
		}
		if arr, err = npy.Decode(data); err != nil {
			return nil, fmt.Errorf("vectors: %s: %w", path, err)
		}
	} else {
		name, err := npzArray(data, o)
		if err != nil {
			return nil, fmt.Errorf("vectors: %s: %w", path, err)
		}
		names := []string{name}
		if o.Label != "" {
			names = append(names, o.Label)
		}
		arrays, err := npy.DecodeNPZ(data, names...)
		if err != nil {
			return nil, fmt.Errorf("vectors: %s: %w", path, err)
		}
		arr, labels = arrays[name], arrays[o.Label]
	}
	s, err := fromArray(arr)
	if err != nil {
		return nil, fmt.Errorf("vectors: %s: %w", path, err)
	}
	if o.Label != "" {
		if len(labels.Shape) != 1 || labels.Shape[0] != s.N {
			return nil, fmt.Errorf("vectors: %s: label array %s has shape %v, want [%d]", path, o.Label, labels.Shape, s.N)
		}
		for _, v := range labels.Values {
			s.Labels = append(s.Labels, strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	return s, nil
}

// npzArray picks the archive's array of vectors.
func npzArray(data []byte, o ReadOptions) (string, error) {
	names, err := npy.ArrayNames(data)
	if err != nil {
		return "", err
	}
	if o.Array != "" {
		return o.Array, nil
	}
	others := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == o.Label })
	if len(others) == 1 {
		return others[0], nil
	}
	for _, n := range []string{"x", "X", "data"} {
		if slices.Contains(others, n) {
			return n, nil
		}
	}
	return "", fmt.Errorf("arrays %v: name the one holding the vectors", names)
}

// fromArray checks an array's shape and values.
func fromArray(a npy.Array) (*Set, error) {
	s := &Set{Values: a.Values}
	switch len(a.Shape) {
	case 1:
		s.N, s.D = a.Shape[0], 1
	case 2:
		s.N, s.D = a.Shape[0], a.Shape[1]
	default:
		return nil, fmt.Errorf("array of shape %v: want [N, d] (or [N])", a.Shape)
	}
	for i, v := range s.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("row %d, column %d: %v: want finite numbers (remove or fill in missing values)", i/s.D, i%s.D+1, v)
		}
	}
	return s, nil
}

// Subset returns the rows at indices, in that order, as a new set.
func (s *Set) Subset(indices []int) *Set {
	out := &Set{Name: s.Name, N: len(indices), D: s.D, Columns: s.Columns, Values: make([]float64, 0, len(indices)*s.D)}
	for _, i := range indices {
		out.Values = append(out.Values, s.Row(i)...)
		if s.Labels != nil {
			out.Labels = append(out.Labels, s.Labels[i])
		}
	}
	return out
}

// Split holds out round(fraction·N) rows (at least one, and one fewer
// than all) chosen by a PCG generator seeded with seed; both sets keep the
// file's row order. It returns the rows of each, for recording.
func (s *Set) Split(fraction float64, seed uint64) (train, test []int, err error) {
	if !(fraction > 0 && fraction < 1) {
		return nil, nil, fmt.Errorf("vectors: test fraction %v, want a value in (0, 1)", fraction)
	}
	if s.N < 2 {
		return nil, nil, fmt.Errorf("vectors: %s has %d row, want at least 2 to hold one out", s.Name, s.N)
	}
	nTest := min(max(int(math.Round(fraction*float64(s.N))), 1), s.N-1)
	held := make([]bool, s.N)
	for _, i := range rand.New(rand.NewPCG(seed, 0)).Perm(s.N)[:nTest] {
		held[i] = true
	}
	for i, h := range held {
		if h {
			test = append(test, i)
		} else {
			train = append(train, i)
		}
	}
	return train, test, nil
}
