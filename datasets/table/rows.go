package table

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/edlebm/edlebm/datasets/vectors"
)

// ReadRows reads new rows for a model trained on schema s: a CSV file with
// a header naming every column of s, in any order; the file's other
// columns (a label, an identifier) are kept aside in Table.Other. Each
// value is checked against s, naming file, line and column: a number in a
// numeric column, a category training saw in a categorical one (s.Code's
// message), no missing value unless o.Missing drops the row. Only
// o.SkipRows and o.Missing are used: the kinds and categories are s's.
func ReadRows(path string, s Schema, o Options) (*Table, error) {
	o.Missing = cmp.Or(o.Missing, MissingError)
	if err := checkMissing(o.Missing); err != nil {
		return nil, err
	}
	t := &Table{Name: filepath.Base(path), Schema: s, Other: map[string][]string{}}
	var at []int // each schema column's place in the file
	var other []int
	var header []string
	err := vectors.ReadRecords(path, o.SkipRows, func(rec []string, line int) error {
		if header == nil {
			header = slices.Clone(rec)
			return t.placeColumns(path, header, &at, &other)
		}
		numbers, codes, err := s.parseRow(path, line, rec, at, o.Missing)
		switch {
		case err != nil:
			return err
		case numbers == nil:
			t.Dropped++
			return nil
		}
		t.Numbers, t.Codes = append(t.Numbers, numbers...), append(t.Codes, codes...)
		for _, j := range other {
			t.Other[header[j]] = append(t.Other[header[j]], strings.TrimSpace(rec[j]))
		}
		t.Lines = append(t.Lines, line)
		t.N++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if header == nil || t.N == 0 {
		return nil, fmt.Errorf("table: %s: a header and at least one row wanted", path)
	}
	return t, nil
}

// placeColumns finds each of t's schema columns in the file's header
// (at) and lists the file's other columns (other).
func (t *Table) placeColumns(path string, header []string, at, other *[]int) error {
	var missing []string
	for _, c := range t.Schema.Columns {
		j := slices.Index(header, c.Name)
		if j < 0 {
			missing = append(missing, c.Name)
		}
		*at = append(*at, j)
	}
	if len(missing) > 0 {
		return fmt.Errorf("table: %s: the header %q lacks the model's columns %q", path, header, missing)
	}
	for j, name := range header {
		if !slices.Contains(*at, j) && !slices.Contains(header[:j], name) {
			*other = append(*other, j)
		}
	}
	return nil
}

// parseRow parses one record's values in the schema's columns (at: their
// places in the record): the numeric columns' numbers and the categorical
// columns' codes, in the schema's order. A row with a missing value is
// nil, nil, nil when missing is MissingDrop.
func (s Schema) parseRow(path string, line int, rec []string, at []int, missing string) (numbers []float64, codes []int, err error) {
	numbers, codes = []float64{}, []int{}
	for i, c := range s.Columns {
		field := strings.TrimSpace(rec[at[i]])
		where := fmt.Sprintf("%s, line %d, column %d (%s)", path, line, at[i]+1, c.Name)
		if isMissing(field) {
			if missing == MissingDrop {
				return nil, nil, nil
			}
			return nil, nil, fmt.Errorf("table: %s: a missing value %q: fill it in, or drop such rows (Options.Missing %q)", where, field, MissingDrop)
		}
		if c.Kind == Numeric {
			v, err := strconv.ParseFloat(field, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, nil, fmt.Errorf("table: %s: %q: want a finite number, as in training", where, field)
			}
			numbers = append(numbers, v)
			continue
		}
		k, err := s.Code(c.Name, field)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", where, err)
		}
		codes = append(codes, k)
	}
	return numbers, codes, nil
}

// Fields is row i's values as text, in the schema's columns (the file's
// order): numbers as read (shortest form), each category its word.
func (t *Table) Fields(i int) []string {
	numeric, categorical := 0, 0
	for _, c := range t.Schema.Columns {
		if c.Kind == Numeric {
			numeric++
		} else {
			categorical++
		}
	}
	out := make([]string, 0, len(t.Schema.Columns))
	n, k := 0, 0
	for _, c := range t.Schema.Columns {
		if c.Kind == Numeric {
			out = append(out, strconv.FormatFloat(t.Numbers[i*numeric+n], 'g', -1, 64))
			n++
			continue
		}
		out = append(out, c.Categories[t.Codes[i*categorical+k]])
		k++
	}
	return out
}
