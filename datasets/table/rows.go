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
// message) unless o.Unseen keeps the row (Table.Unseen), no missing value
// unless o.Missing drops the row. Only o.SkipRows, o.Missing and o.Unseen
// are used: the kinds and categories are s's.
func ReadRows(path string, s Schema, o Options) (*Table, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	o.Missing = cmp.Or(o.Missing, MissingError)
	p := rowParser{t: &Table{Name: filepath.Base(path), Schema: s, Other: map[string][]string{}, newRows: "line"}, source: path, missing: o.Missing,
		keepUnseen: o.Unseen == UnseenAnomalous, unseenHint: unseenHint}
	err := vectors.ReadRecords(path, o.SkipRows, func(rec []string, line int) error {
		if p.header == nil {
			return p.setHeader(rec)
		}
		return p.add(rec, fmt.Sprintf("%s, line %d", path, line), line)
	})
	if err != nil {
		return nil, err
	}
	if p.header == nil || p.t.N == 0 {
		return nil, fmt.Errorf("table: %s: a header and at least one row wanted", path)
	}
	return p.t, nil
}

// ParseRows reads new rows held in memory (a request's) for a model
// trained on schema s, as ReadRows reads a file's: header names the
// records' fields, every column of s among them; each record is one row,
// its fields checked as ReadRows checks them, the errors naming source,
// the row (from 1) and the column. A category training never saw is an
// error wrapping a *CategoryError (its caller says how to keep such rows)
// unless o.Unseen keeps the row (Table.Unseen); a missing value is
// an error (every record is answered: o.Missing MissingDrop is refused).
// Only o.Unseen and o.Missing are used. Table.Lines holds each row's
// number.
func (s Schema) ParseRows(source string, header []string, records [][]string, o Options) (*Table, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Missing == MissingDrop {
		return nil, fmt.Errorf("table: %s: Options.Missing %q: each row given is answered, none dropped", source, MissingDrop)
	}
	p := rowParser{t: &Table{Name: source, Schema: s, Other: map[string][]string{}, newRows: "row"}, source: source, missing: MissingError,
		keepUnseen: o.Unseen == UnseenAnomalous}
	if err := p.setHeader(header); err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("table: %s: no rows", source)
	}
	for i, rec := range records {
		if len(rec) != len(header) {
			return nil, fmt.Errorf("table: %s, row %d: %d fields, want %d (%q)", source, i+1, len(rec), len(header), header)
		}
		if err := p.add(rec, fmt.Sprintf("%s, row %d", source, i+1), i+1); err != nil {
			return nil, err
		}
	}
	return p.t, nil
}

// unseenHint is what an unseen category's error adds: how to keep the row.
var unseenHint = fmt.Sprintf(" (or rank such rows first: Options.Unseen %q)", UnseenAnomalous)

// rowParser parses the rows of ReadRows and ParseRows into t.
type rowParser struct {
	t       *Table
	source  string // the file or what sent the rows
	missing string // Options.Missing
	// keepUnseen keeps a row with a category training never saw
	// (Options.Unseen UnseenAnomalous).
	keepUnseen bool
	unseenHint string // what an unseen category's error adds (ReadRows': the option)
	header     []string
	at         []int // each schema column's place in a record
	other      []int // the records' fields that are not the schema's
}

// setHeader finds each of the schema's columns in the header and lists
// its other columns.
func (p *rowParser) setHeader(header []string) error {
	p.header = slices.Clone(header)
	var missing []string
	for _, c := range p.t.Schema.Columns {
		j := slices.Index(header, c.Name)
		if j < 0 {
			missing = append(missing, c.Name)
		} else if k := slices.Index(header[j+1:], c.Name); k >= 0 {
			return fmt.Errorf("table: %s: the header names the model's column %q twice (columns %d and %d): which is it?", p.source, c.Name, j+1, j+k+2)
		}
		p.at = append(p.at, j)
	}
	if len(missing) > 0 {
		return fmt.Errorf("table: %s: the header %q lacks the model's columns %q", p.source, header, missing)
	}
	for j, name := range header {
		if !slices.Contains(p.at, j) && !slices.Contains(header[:j], name) {
			p.other = append(p.other, j)
		}
	}
	return nil
}

// add parses one record, found at place (a file's line, a request's row),
// into t; a row with a missing value is dropped when p.missing says so.
func (p *rowParser) add(rec []string, place string, line int) error {
	numbers, codes, unseen, err := p.parseRow(place, rec)
	switch {
	case err != nil:
		return err
	case numbers == nil:
		p.t.Dropped++
		return nil
	}
	t := p.t
	if unseen != nil && t.Unseen == nil {
		t.Unseen = make([]map[string]string, t.N)
	}
	if t.Unseen != nil {
		t.Unseen = append(t.Unseen, unseen)
	}
	t.Numbers, t.Codes = append(t.Numbers, numbers...), append(t.Codes, codes...)
	for _, j := range p.other {
		t.Other[p.header[j]] = append(t.Other[p.header[j]], strings.TrimSpace(rec[j]))
	}
	t.Lines = append(t.Lines, line)
	t.N++
	return nil
}

// parseRow parses one record's values in the schema's columns (p.at:
// their places in the record; place says where the record is, for the
// errors): the numeric columns' numbers and the categorical columns'
// codes, in the schema's order, and, when p keeps them, the categories
// training never saw by column (each coded 0). A row with a missing value
// is all nil when p.missing is MissingDrop, whatever its other fields.
func (p *rowParser) parseRow(place string, rec []string) (numbers []float64, codes []int, unseen map[string]string, err error) {
	s := p.t.Schema
	where := func(i int) string { return fmt.Sprintf("%s, column %d (%s)", place, p.at[i]+1, s.Columns[i].Name) }
	for i := range s.Columns {
		if field := strings.TrimSpace(rec[p.at[i]]); isMissing(field) {
			if p.missing == MissingDrop {
				return nil, nil, nil, nil
			}
			return nil, nil, nil, fmt.Errorf("table: %s: a missing value %q: fill it in, or drop such rows (Options.Missing %q)", where(i), field, MissingDrop)
		}
	}
	numbers, codes = []float64{}, []int{}
	for i, c := range s.Columns {
		field := strings.TrimSpace(rec[p.at[i]])
		if c.Kind == Numeric {
			v, err := strconv.ParseFloat(field, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, nil, nil, fmt.Errorf("table: %s: %q: want a finite number, as in training", where(i), field)
			}
			numbers = append(numbers, v)
			continue
		}
		k, err := s.Code(c.Name, field)
		switch {
		case err != nil && p.keepUnseen:
			if unseen == nil {
				unseen = map[string]string{}
			}
			unseen[c.Name] = field
		case err != nil:
			return nil, nil, nil, fmt.Errorf("%s: %w%s", where(i), err, p.unseenHint)
		}
		codes = append(codes, k)
	}
	return numbers, codes, unseen, nil
}

// Fields is row i's values as text, in the schema's columns (the file's
// order): numbers as read (shortest form), each category its word (an
// unseen one as read, Table.Unseen).
func (t *Table) Fields(i int) []string {
	numeric, categorical := t.Schema.counts()
	out := make([]string, 0, len(t.Schema.Columns))
	n, k := 0, 0
	for _, c := range t.Schema.Columns {
		if c.Kind == Numeric {
			out = append(out, strconv.FormatFloat(t.Numbers[i*numeric+n], 'g', -1, 64))
			n++
			continue
		}
		if word, ok := t.unseen(i)[c.Name]; ok {
			out = append(out, word)
		} else {
			out = append(out, c.Categories[t.Codes[i*categorical+k]])
		}
		k++
	}
	return out
}

// unseen is row i's categories training never saw, by column (nil when
// none).
func (t *Table) unseen(i int) map[string]string {
	if t.Unseen == nil {
		return nil
	}
	return t.Unseen[i]
}

// UnseenSummary is row i's categories training never saw as
// "column=value", in the schema's order, joined by "; " ("" when none).
func (t *Table) UnseenSummary(i int) string {
	var parts []string
	for _, c := range t.Schema.Columns {
		if word, ok := t.unseen(i)[c.Name]; ok {
			parts = append(parts, c.Name+"="+word)
		}
	}
	return strings.Join(parts, "; ")
}

// Rows is a table of t's rows at indices, in that order, with t's schema.
func (t *Table) Rows(indices []int) *Table {
	numeric, categorical := t.Schema.counts()
	out := &Table{Name: t.Name, Schema: t.Schema, N: len(indices)}
	for _, i := range indices {
		out.Numbers = append(out.Numbers, t.Numbers[i*numeric:(i+1)*numeric]...)
		out.Codes = append(out.Codes, t.Codes[i*categorical:(i+1)*categorical]...)
		if t.Lines != nil {
			out.Lines = append(out.Lines, t.Lines[i])
		}
		out.newRows = t.newRows
		if t.Unseen != nil {
			out.Unseen = append(out.Unseen, t.Unseen[i])
		}
	}
	return out
}

// Column is schema column c's values, one a row: its numbers if it is
// numeric, else its category indices.
func (t *Table) Column(c int) (numbers []float64, codes []int) {
	numeric, categorical := t.Schema.counts()
	at := 0 // c's place among the columns of its kind
	for _, col := range t.Schema.Columns[:c] {
		if col.Kind == t.Schema.Columns[c].Kind {
			at++
		}
	}
	for i := range t.N {
		if t.Schema.Columns[c].Kind == Numeric {
			numbers = append(numbers, t.Numbers[i*numeric+at])
		} else {
			codes = append(codes, t.Codes[i*categorical+at])
		}
	}
	return numbers, codes
}

// counts is the schema's numeric and categorical columns.
func (s Schema) counts() (numeric, categorical int) {
	for _, c := range s.Columns {
		if c.Kind == Numeric {
			numeric++
		} else {
			categorical++
		}
	}
	return numeric, categorical
}
