// Package table reads a user's table of mixed columns — numbers and
// categories — from a CSV file (gzip, a header, quoted fields, a
// byte-order mark: vectors.ReadRecords), infers each column's kind, and
// records the schema (each categorical column's categories, in order, and
// the structure of its perturbation graph) so that training, scoring and
// sampling encode rows alike.
//
// A column with a word is categorical; one of numbers only is numeric,
// unless the user says otherwise (an integer column with few distinct
// values is offered as categorical in Summary). Bad input is refused
// before anything else happens, naming the file, line and column: a column
// mixing numbers and words (unless declared categorical), a missing value
// (empty, NA, NaN; or Options.Missing drops such rows), a column with one
// value, and a categorical column of more than Options.MaxCategories
// distinct values (an identifier, most likely).
//
// A numeric column's point mass (a value held by Options.SpikeShare of the
// rows or more) is its Spike: encoded rows say in a block of their own
// whether they are at it, so that a model keeps the mass whole.
package table

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/edlebm/edlebm/datasets/vectors"
)

// Kind is a column's kind.
type Kind string

// The kinds of Kind.
const (
	Numeric     Kind = "numeric"
	Categorical Kind = "categorical"
)

// The structures of a categorical column's perturbation graph (as
// losses.CategoryGraph names them).
const (
	Uniform  = "uniform"
	Ordinal  = "ordinal"
	Cyclical = "cyclical"
)

// Column is one column of a schema.
type Column struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Categories are a categorical column's values, in their order (the
	// order given, else numbers in numeric order and words in byte
	// order); Structure is its graph: Uniform (the default), Ordinal or
	// Cyclical.
	Categories []string `json:"categories,omitempty"`
	Structure  string   `json:"structure,omitempty"`
	// Integer says a numeric column holds whole numbers only, and Range
	// is its smallest and largest value in the file: Decode rounds and
	// clamps a model's numbers to them, as SDV does by default (a schema
	// recorded without them decodes as before).
	Integer bool      `json:"integer,omitempty"`
	Range   []float64 `json:"range,omitempty"`
	// Spike, when set, is a value that a numeric column holds in at least
	// Options.SpikeShare of its rows (a point mass: no capital gain, no
	// previous contact): an encoded row says in a block of its own
	// whether it is at the spike, and Decode writes the value itself for
	// a row the block puts there, where the numbers' Gaussian noise would
	// smear the mass over its neighbours.
	Spike *float64 `json:"spike,omitempty"`
}

// Schema is a table's columns, in the file's order.
type Schema struct {
	Columns []Column `json:"columns"`
}

// ColumnOptions override what Read infers of one column.
type ColumnOptions struct {
	// Kind, when set, is the column's kind.
	Kind Kind
	// Structure is a categorical column's graph (default Uniform).
	Structure string
	// Order, for an ordinal or cyclical column, is its categories in
	// order; every value of the column must be one of them.
	Order []string
}

// Missing is what Read does with a missing value.
const (
	MissingError = "error" // the default: an error naming file, line and column
	MissingDrop  = "drop"  // the row is dropped (Summary says how many)
)

// Unseen is what ReadRows does with a category training never saw.
const (
	UnseenError = "error" // the default: an error naming file, line, column and category
	// UnseenAnomalous keeps the row and lists the category in
	// Table.Unseen: a model gives such a row probability 0, so an anomaly
	// ranking puts it first.
	UnseenAnomalous = "anomalous"
)

// Options say how to read a table.
type Options struct {
	// SkipRows drops that many lines at the start of the file.
	SkipRows int
	// Columns override the inferred kinds and structures, by header name.
	Columns map[string]ColumnOptions
	// Drop names columns to leave out (an identifier, a constant column).
	Drop []string
	// Missing is MissingError (default) or MissingDrop.
	Missing string
	// Unseen, for ReadRows only, is UnseenError (default) or
	// UnseenAnomalous.
	Unseen string
	// MaxCategories bounds a categorical column's distinct values
	// (default 1000).
	MaxCategories int
	// FewValues: an integer column with at most this many distinct values
	// is offered as categorical in Summary (default 10).
	FewValues int
	// SpikeShare: a numeric column of more than FewValues distinct values
	// whose most frequent value holds at least this share of the rows
	// gets that value as its Spike (default DefaultSpikeShare; 1: none).
	SpikeShare float64
}

// DefaultSpikeShare is Options.SpikeShare's default: a mass of a tenth of
// the rows on one value, smeared by the numbers' noise, costs the column
// up to 0.05 of its Kolmogorov–Smirnov complement; adult's hours-per-week
// holds 47 % of its rows at 40, its capital-loss 95 % at 0
// (docs/tables.md).
const DefaultSpikeShare = 0.1

// Table is a mixed table read by Read.
type Table struct {
	// Name is the file's base name.
	Name   string
	Schema Schema
	// N is the number of rows; Dropped the rows left out for a missing
	// value (Options.MissingDrop).
	N, Dropped int
	// Numbers holds the numeric columns' values, N rows of as many as the
	// schema has numeric columns, in its order.
	Numbers []float64
	// Codes holds the categorical columns' category indices, N rows of as
	// many as the schema has categorical columns, in its order.
	Codes []int
	// Lines are each row's line in the file.
	Lines []int
	// Other holds, for ReadRows, the file's columns that are not the
	// schema's (a label, an identifier): each row's field, by header name.
	Other map[string][]string
	// Unseen holds, for ReadRows with Options.Unseen UnseenAnomalous, each
	// row's categories training never saw, by column name (nil for a row
	// with none; Unseen itself nil when no row has one). Such a
	// category's code in Codes is 0, a placeholder: the row's energy
	// under any model means nothing. Fields gives the row's own words.
	Unseen []map[string]string
	// few lists the numeric columns of integers with few distinct values.
	few []string
	// newRows, for rows read against a trained schema, is what Lines
	// count: "line" (ReadRows': a file's) or "row" (ParseRows'); "" for a
	// table read to train (Read), whose numbers Encode takes as they are.
	newRows string
}

// missingWords are a missing value's spellings (and the empty field).
var missingWords = []string{"", "na", "n/a", "nan", "null", "none", "?"}

func isMissing(field string) bool {
	return slices.Contains(missingWords, strings.ToLower(strings.TrimSpace(field)))
}

// Check reports the first of o's settings out of its range (a zero value
// is valid: it takes the default), before any file is read.
func (o Options) Check() error {
	if o.Missing != "" && o.Missing != MissingError && o.Missing != MissingDrop {
		return fmt.Errorf("table: Options.Missing %q: want %q or %q", o.Missing, MissingError, MissingDrop)
	}
	if o.Unseen != "" && o.Unseen != UnseenError && o.Unseen != UnseenAnomalous {
		return fmt.Errorf("table: Options.Unseen %q: want %q or %q", o.Unseen, UnseenError, UnseenAnomalous)
	}
	if o.SpikeShare < 0 || o.SpikeShare > 1 {
		return fmt.Errorf("table: Options.SpikeShare %g: want a share of the rows in (0, 1]", o.SpikeShare)
	}
	for _, c := range []struct {
		name  string
		value int
	}{{"SkipRows", o.SkipRows}, {"MaxCategories", o.MaxCategories}, {"FewValues", o.FewValues}} {
		if c.value < 0 {
			return fmt.Errorf("table: Options.%s %d: want 0 or more", c.name, c.value)
		}
	}
	return nil
}

// Read reads the CSV file at path (.csv or .csv.gz) with a header. Errors
// name the file, and the line and column where there is one.
func Read(path string, o Options) (*Table, error) {
	o.Missing, o.MaxCategories, o.FewValues = cmp.Or(o.Missing, MissingError), cmp.Or(o.MaxCategories, 1000), cmp.Or(o.FewValues, 10)
	o.SpikeShare = cmp.Or(o.SpikeShare, DefaultSpikeShare)
	if err := o.Check(); err != nil {
		return nil, err
	}
	r := &reader{path: path, o: o}
	if err := vectors.ReadRecords(path, o.SkipRows, r.add); err != nil {
		return nil, err
	}
	switch {
	case r.header == nil:
		return nil, fmt.Errorf("table: %s: a header and at least one row wanted", path)
	case len(r.keep) == 0:
		return nil, fmt.Errorf("table: %s: every column of the header %q dropped (Options.Drop): none left to read", path, r.header)
	case len(r.rows) == 0 && r.dropped > 0:
		return nil, fmt.Errorf("table: %s: all %d rows dropped for a missing value (Options.Missing %q): none left", path, r.dropped, MissingDrop)
	case len(r.rows) == 0:
		return nil, fmt.Errorf("table: %s: a header and at least one row wanted", path)
	}
	t, err := r.table()
	if err != nil {
		return nil, err
	}
	t.Name = filepath.Base(path)
	return t, nil
}

// reader collects a file's fields, column by column.
type reader struct {
	path    string
	o       Options
	header  []string
	keep    []int      // the columns read, by index in the file
	rows    [][]string // kept rows' fields, by kept column
	lines   []int
	dropped int
}

func (r *reader) add(rec []string, line int) error {
	if r.header == nil {
		r.header = slices.Clone(rec)
		for j, name := range r.header {
			if slices.Contains(r.header[:j], name) || strings.TrimSpace(name) == "" {
				return fmt.Errorf("table: %s, line %d, column %d: header name %q empty or repeated: want a name for each column", r.path, line, j+1, name)
			}
			if !slices.Contains(r.o.Drop, name) {
				r.keep = append(r.keep, j)
			}
		}
		for _, name := range slices.Concat(r.o.Drop, mapKeys(r.o.Columns)) {
			if !slices.Contains(r.header, name) {
				return fmt.Errorf("table: %s: column %q named in the options is not in the header %q", r.path, name, r.header)
			}
		}
		return nil
	}
	row := make([]string, len(r.keep))
	for i, j := range r.keep {
		if isMissing(rec[j]) {
			if r.o.Missing == MissingDrop {
				r.dropped++
				return nil
			}
			return fmt.Errorf("table: %s, line %d, column %d (%s): a missing value %q: fill it in, or drop such rows (Options.Missing %q)", r.path, line, j+1, r.header[j], rec[j], MissingDrop)
		}
		row[i] = strings.TrimSpace(rec[j])
	}
	r.rows, r.lines = append(r.rows, row), append(r.lines, line)
	return nil
}

func mapKeys(m map[string]ColumnOptions) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// table infers each kept column's kind and encodes the rows.
func (r *reader) table() (*Table, error) {
	t := &Table{N: len(r.rows), Dropped: r.dropped, Lines: r.lines}
	for i, j := range r.keep {
		col, err := r.column(i, j)
		if err != nil {
			return nil, err
		}
		t.Schema.Columns = append(t.Schema.Columns, col)
	}
	for _, row := range r.rows {
		for i, col := range t.Schema.Columns {
			if col.Kind == Numeric {
				v, _ := strconv.ParseFloat(row[i], 64) // checked by column
				t.Numbers = append(t.Numbers, v)
			} else {
				t.Codes = append(t.Codes, slices.Index(col.Categories, row[i]))
			}
		}
	}
	for i, col := range t.Schema.Columns {
		if col.Kind == Numeric && r.integersWithFewValues(i) {
			t.few = append(t.few, col.Name)
		}
	}
	t.describeNumbers(r.o)
	return t, nil
}

// describeNumbers records each numeric column's range, whether it holds
// whole numbers only, and its spike (Options.SpikeShare).
func (t *Table) describeNumbers(o Options) {
	if t.N == 0 {
		return
	}
	numeric := len(t.Numbers) / t.N
	j := 0
	for i := range t.Schema.Columns {
		c := &t.Schema.Columns[i]
		if c.Kind != Numeric {
			continue
		}
		lo, hi, whole := math.Inf(1), math.Inf(-1), true
		counts := map[float64]int{}
		for r := range t.N {
			v := t.Numbers[r*numeric+j]
			lo, hi, whole = min(lo, v), max(hi, v), whole && v == math.Trunc(v)
			counts[v]++
		}
		c.Integer, c.Range = whole, []float64{lo, hi}
		if spike, n := mostFrequent(counts); len(counts) > o.FewValues && float64(n) >= o.SpikeShare*float64(t.N) {
			c.Spike = &spike
		}
		j++
	}
}

// mostFrequent is the value counted most often (the smallest of a tie) and
// its count.
func mostFrequent(counts map[float64]int) (value float64, n int) {
	for v, k := range counts {
		if k > n || k == n && v < value {
			value, n = v, k
		}
	}
	return value, n
}

// column infers kept column i's (file column j's) kind and categories.
func (r *reader) column(i, j int) (Column, error) {
	name := r.header[j]
	col := Column{Name: name}
	given := r.o.Columns[name]
	var firstWord, firstNumber = -1, -1
	distinct := map[string]bool{}
	for k, row := range r.rows {
		distinct[row[i]] = true
		switch number := isNumber(row[i]); {
		case number && firstNumber < 0:
			firstNumber = k
		case !number && firstWord < 0:
			firstWord = k
		}
	}
	where := func(k int) string { return fmt.Sprintf("%s, line %d, column %d (%s)", r.path, r.lines[k], j+1, name) }
	switch {
	case len(r.rows) == 1:
		return col, fmt.Errorf("table: %s: one row: nothing to learn from; want a table of many rows", r.path)
	case len(distinct) == 1:
		return col, fmt.Errorf("table: %s: the one value %q in all %d rows: nothing to learn; drop the column (Options.Drop)", where(0), r.rows[0][i], len(r.rows))
	case given.Kind == Numeric && firstWord >= 0:
		return col, fmt.Errorf("table: %s: %q is not a number, and the column was declared numeric", where(firstWord), r.rows[firstWord][i])
	case given.Kind == "" && firstWord >= 0 && firstNumber >= 0:
		return col, fmt.Errorf("table: %s: the word %q in a column of numbers (%q at line %d): fix the value, or declare the column categorical", where(firstWord), r.rows[firstWord][i], r.rows[firstNumber][i], r.lines[firstNumber])
	case given.Kind != "" && given.Kind != Numeric && given.Kind != Categorical:
		return col, fmt.Errorf("table: column %q: kind %q, want %q or %q", name, given.Kind, Numeric, Categorical)
	}
	col.Kind = cmp.Or(given.Kind, Numeric)
	if firstWord >= 0 {
		col.Kind = Categorical
	}
	if col.Kind == Numeric {
		for k, row := range r.rows {
			if v, _ := strconv.ParseFloat(row[i], 64); math.IsInf(v, 0) {
				return col, fmt.Errorf("table: %s: %q: want a finite number", where(k), row[i])
			}
		}
		return col, nil
	}
	if len(distinct) > r.o.MaxCategories {
		return col, fmt.Errorf("table: column %d (%s) of %s: %d distinct values, more than the %d a categorical column may have (Options.MaxCategories): an identifier? drop it (Options.Drop)", j+1, name, r.path, len(distinct), r.o.MaxCategories)
	}
	col.Structure = cmp.Or(given.Structure, Uniform)
	if !slices.Contains([]string{Uniform, Ordinal, Cyclical}, col.Structure) {
		return col, fmt.Errorf("table: column %q: structure %q, want %q, %q or %q", name, col.Structure, Uniform, Ordinal, Cyclical)
	}
	if given.Order != nil {
		col.Categories = slices.Clone(given.Order)
		for k, row := range r.rows {
			if !slices.Contains(col.Categories, row[i]) {
				return col, fmt.Errorf("table: %s: %q is not one of the order given, %q", where(k), row[i], given.Order)
			}
		}
		return col, nil
	}
	for v := range distinct {
		col.Categories = append(col.Categories, v)
	}
	slices.SortFunc(col.Categories, compareValues)
	return col, nil
}

// isNumber reports whether a field is a number (finite or not: ±Inf is
// then refused by name).
func isNumber(field string) bool {
	_, err := strconv.ParseFloat(field, 64)
	return err == nil
}

// compareValues orders numbers numerically before words in byte order.
func compareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Or(cmp.Compare(x, y), strings.Compare(a, b))
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// integersWithFewValues reports whether kept column i holds integers of at
// most FewValues distinct values.
func (r *reader) integersWithFewValues(i int) bool {
	distinct := map[string]bool{}
	for _, row := range r.rows {
		v, err := strconv.ParseFloat(row[i], 64)
		if err != nil || v != math.Trunc(v) {
			return false
		}
		distinct[row[i]] = true
	}
	return len(distinct) <= r.o.FewValues
}

// Summary describes the table as a person checks it before training: its
// rows, each column's kind and values, the integer columns that may be
// categories, and the rows dropped.
func (t *Table) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d rows", t.Name, t.N)
	if t.Dropped > 0 {
		fmt.Fprintf(&b, " (%d dropped for a missing value)", t.Dropped)
	}
	b.WriteString("\n")
	sp := t.Schema.spikes() // in the columns' order, as Blocks puts them
	for _, c := range t.Schema.Columns {
		if c.Kind == Numeric && c.Spike != nil {
			fmt.Fprintf(&b, "  %-20s numeric, %.1f %% of the rows at %g (a spike, decoded as such)\n", c.Name, 100*t.shareAt(sp[0]), *c.Spike)
			sp = sp[1:]
			continue
		}
		if c.Kind == Numeric {
			fmt.Fprintf(&b, "  %-20s numeric\n", c.Name)
			continue
		}
		shown := c.Categories[:min(len(c.Categories), 6)]
		more := ""
		if len(c.Categories) > len(shown) {
			more = fmt.Sprintf(", … (%d in all)", len(c.Categories))
		}
		fmt.Fprintf(&b, "  %-20s categorical, %s: %s%s\n", c.Name, c.Structure, strings.Join(shown, ", "), more)
	}
	for _, name := range t.few {
		fmt.Fprintf(&b, "  %s holds few distinct integers: a category? declare it categorical to treat it as one\n", name)
	}
	return b.String()
}

// Code returns the category index of value in categorical column name, or
// an error naming a value training never saw.
func (s Schema) Code(name, value string) (int, error) {
	for _, c := range s.Columns {
		if c.Name != name {
			continue
		}
		if c.Kind != Categorical {
			return 0, fmt.Errorf("table: column %q is %s, not categorical", name, c.Kind)
		}
		if k := slices.Index(c.Categories, strings.TrimSpace(value)); k >= 0 {
			return k, nil
		}
		return 0, &CategoryError{Column: name, Category: value, Known: c.Categories}
	}
	return 0, fmt.Errorf("table: no column %q in the schema", name)
}

// A CategoryError is Schema.Code's error for a category that its
// column's training rows never had.
type CategoryError struct {
	Column, Category string
	Known            []string // the column's categories
}

func (e *CategoryError) Error() string {
	return fmt.Sprintf("table: column %q: category %q was not in the training rows (%s)", e.Column, e.Category, strings.Join(e.Known[:min(len(e.Known), 10)], ", "))
}

// Block is a categorical block of an encoded row: a categorical column's
// one-hot categories, or a spiked numeric column's indicator (two
// categories: off its Spike, at it).
type Block struct {
	// Column is the column's place in Schema.Columns; At is where the
	// block starts in an encoded row, Categories its width.
	Column, At, Categories int
	// Structure is the block's graph (a spike's: Uniform).
	Structure string
}

// Blocks are an encoded row's categorical blocks, after its numbers: each
// categorical column's, in the schema's order, then each spike's.
func (s Schema) Blocks() []Block {
	at := len(s.numericColumns())
	var out []Block
	for i, c := range s.Columns {
		if c.Kind == Categorical {
			out = append(out, Block{Column: i, At: at, Categories: len(c.Categories), Structure: c.Structure})
			at += len(c.Categories)
		}
	}
	for i, c := range s.Columns {
		if c.Kind == Numeric && c.Spike != nil {
			out = append(out, Block{Column: i, At: at, Categories: 2, Structure: Uniform})
			at += 2
		}
	}
	return out
}

// numericColumns is the numeric columns' places in Columns.
func (s Schema) numericColumns() []int {
	var out []int
	for i, c := range s.Columns {
		if c.Kind == Numeric {
			out = append(out, i)
		}
	}
	return out
}

// Width is the values of an encoded row: one a numeric column, then each
// block's (Blocks).
func (s Schema) Width() int {
	w := len(s.numericColumns())
	for _, b := range s.Blocks() {
		w += b.Categories
	}
	return w
}

// A DeviationError is Encode's error for a new row's number more than
// vectors.MaxDeviations from its column's training mean (a fault of the row, not
// of the model).
type DeviationError struct {
	Place, Column           string // the file and line, or the request and row
	Value, Deviations, Mean float64
}

func (e *DeviationError) Error() string {
	return fmt.Sprintf("table: %s, column %q: %g is %.3g standard deviations from the training rows' mean (%g): more than the %g a model scores; a sentinel for a missing value?",
		e.Place, e.Column, e.Value, e.Deviations, e.Mean, float64(vectors.MaxDeviations))
}

// place names row i for an error: its line in the file ("row" and its
// number for ParseRows' rows), or its place among t's rows.
func (t *Table) place(i int) string {
	if t.Lines == nil {
		return fmt.Sprintf("row %d", i+1)
	}
	return fmt.Sprintf("%s %d", cmp.Or(t.newRows, "line"), t.Lines[i])
}

// Encode returns the rows as a model takes them, N × Width values in the
// schema's kinds: numeric columns first, standardised by z (fitted on the
// numeric columns, vectors.Fit of NumericSet), then the one-hot Blocks. In
// new rows (ReadRows, ParseRows) a number more than vectors.MaxDeviations
// from its column's mean is a *DeviationError naming its row and column;
// a table read to train is taken as it is (a held-out row may lie far
// from a training split whose column hardly varies).
func (t *Table) Encode(z vectors.Standardizer) ([]float32, error) {
	numeric := t.Schema.numericColumns()
	if err := z.Check(len(numeric)); err != nil {
		return nil, fmt.Errorf("table: %s: %w", t.Name, err)
	}
	blocks, spikes := t.Schema.Blocks(), t.Schema.spikes()
	categorical := len(t.Schema.Columns) - len(numeric)
	width := t.Schema.Width()
	out := make([]float32, t.N*width)
	for i := range t.N {
		row := out[i*width : (i+1)*width]
		numbers := t.Numbers[i*len(numeric) : (i+1)*len(numeric)]
		for j, v := range numbers {
			d, within := z.Deviations(j, v)
			if t.newRows != "" && !within {
				return nil, &DeviationError{Place: t.Name + ", " + t.place(i), Column: t.Schema.Columns[numeric[j]].Name, Value: v, Deviations: d, Mean: z.Mean[j]}
			}
			row[j] = float32(d)
		}
		for c, b := range blocks[:categorical] {
			row[b.At+t.Codes[i*categorical+c]] = 1
		}
		for _, sp := range spikes {
			at := 0 // off the spike
			if numbers[sp.number] == sp.value {
				at = 1
			}
			row[sp.block+at] = 1
		}
	}
	return out, nil
}

// SpikeSpread is the standard deviation, in the column's standard
// deviations, of the normal draw SpreadSpikes adds to a number at its
// spike.
const SpikeSpread = 1

// SpreadSpikes adds to each number at its column's Spike in encoded rows
// (as Encode writes them: the spike's block at 1) a normal draw of
// standard deviation SpikeSpread, seeded by seed. Training rows so spread
// show the model a smooth density where the file has a point mass, one
// that depends on nothing else in the row (the block alone says where the
// row is): a sharp peak would hold the sampler's chains, and a row's
// energy with its number at the spike itself, as Encode leaves it, is
// then −log p(at the spike, the rest) up to a constant.
func (s Schema) SpreadSpikes(encoded []float32, seed uint64) {
	spikes, width := s.spikes(), s.Width()
	rng := rand.New(rand.NewPCG(seed, 0x7370696b))
	for r := 0; r+width <= len(encoded); r += width {
		row := encoded[r : r+width]
		for _, sp := range spikes {
			if row[sp.block+1] == 1 {
				row[sp.number] += float32(SpikeSpread * rng.NormFloat64())
			}
		}
	}
}

// LogJacobian is the term that turns a model's log-density of one encoded
// row (its numbers standardised by z, its spikes spread as SpreadSpikes
// spreads the training rows') into the row's log-likelihood on the data's
// scale, log p(x) = log p(u) + LogJacobian. A number off its column's
// Spike is a density, and counts log|∂u/∂x| = −log σ_j (as
// vectors.Standardizer.LogJacobian); a number at its Spike (its block
// leaning to "at") is held with a probability, and the model's density
// there is that probability times the spread's normal density at its
// centre, 1/(√(2π)·SpikeSpread): it counts log(√(2π)·SpikeSpread).
func (s Schema) LogJacobian(row []float32, z vectors.Standardizer) float64 {
	term := z.LogJacobian()
	for _, sp := range s.spikes() {
		if atSpike(row, sp.block) {
			term += math.Log(z.Std[sp.number]) + math.Log(math.Sqrt(2*math.Pi)*SpikeSpread)
		}
	}
	return term
}

// atSpike says whether an encoded row's spike block starting at block
// leans to "at" (ties to "off", as Decode reads it).
func atSpike(row []float32, block int) bool { return row[block+1] > row[block] }

// spikeBlocks is where each spiked column's block starts in an encoded
// row (its "off" place; "at" is the next), by the column's place.
func (s Schema) spikeBlocks() map[int]int {
	out := make(map[int]int)
	for _, b := range s.Blocks() {
		if s.Columns[b.Column].Kind == Numeric {
			out[b.Column] = b.At
		}
	}
	return out
}

// spike is a spiked numeric column in an encoded row: its number's place,
// its block's, and its value.
type spike struct {
	number, block int
	value         float64
}

// spikes are the schema's spikes, in the order of their blocks.
func (s Schema) spikes() []spike {
	numeric := s.numericColumns()
	var out []spike
	for _, b := range s.Blocks() {
		if c := s.Columns[b.Column]; c.Kind == Numeric {
			out = append(out, spike{number: slices.Index(numeric, b.Column), block: b.At, value: *c.Spike})
		}
	}
	return out
}

// NumericSet is the numeric columns as vectors, for vectors.Fit.
func (t *Table) NumericSet() *vectors.Set {
	s := &vectors.Set{Name: t.Name, N: t.N, D: len(t.Numbers) / max(t.N, 1), Values: t.Numbers}
	for _, c := range t.Schema.Columns {
		if c.Kind == Numeric {
			s.Columns = append(s.Columns, c.Name)
		}
	}
	return s
}

// Decode turns encoded rows (n × Width values, as Encode writes them;
// samples of a model) back into the schema's columns, in the file's order:
// numbers on the data's scale (z inverted), clamped to the column's Range
// and rounded when it is Integer, or the column's Spike where its block
// says so; each categorical column the word of its largest value in its
// block.
func (s Schema) Decode(encoded []float32, z vectors.Standardizer) ([][]string, error) {
	width := s.Width()
	if width == 0 || len(encoded)%width != 0 {
		return nil, fmt.Errorf("table: %d encoded values are not rows of %d", len(encoded), width)
	}
	numeric := s.numericColumns()
	if err := z.Check(len(numeric)); err != nil {
		return nil, fmt.Errorf("table: decoding: %w", err)
	}
	blocks := s.Blocks()
	rows := make([][]string, len(encoded)/width)
	for r := range rows {
		in := encoded[r*width : (r+1)*width]
		row := make([]string, len(s.Columns))
		for j, i := range numeric {
			row[i] = strconv.FormatFloat(s.Columns[i].conform(float64(in[j])*z.Std[j]+z.Mean[j]), 'g', -1, 64)
		}
		for _, b := range blocks {
			block := in[b.At : b.At+b.Categories]
			k := slices.Index(block, slices.Max(block))
			switch c := s.Columns[b.Column]; {
			case c.Kind == Categorical:
				row[b.Column] = c.Categories[k]
			case k == 1:
				row[b.Column] = strconv.FormatFloat(*c.Spike, 'g', -1, 64)
			}
		}
		rows[r] = row
	}
	return rows, nil
}

// OutOfRange is, for each numeric column with a Range, the share of the
// encoded rows whose number lies outside it: Decode writes such a number
// at the range's edge. A row at the column's Spike (its block leaning to
// "at") is not counted: its number is not written. Rows drawn from a
// smooth model of rows near an edge spill a little past it; a sampler's
// chains that left the rows' range pile up there.
func (s Schema) OutOfRange(encoded []float32, z vectors.Standardizer) map[string]float64 {
	width, numeric, spikeBlock := s.Width(), s.numericColumns(), s.spikeBlocks()
	out := make(map[string]float64)
	rows := len(encoded) / max(width, 1)
	for j, i := range numeric {
		c := s.Columns[i]
		if len(c.Range) != 2 {
			continue
		}
		n := 0
		for r := range rows {
			in := encoded[r*width : (r+1)*width]
			if at, ok := spikeBlock[i]; ok && atSpike(in, at) {
				continue
			}
			if v := float64(in[j])*z.Std[j] + z.Mean[j]; v < c.Range[0] || v > c.Range[1] {
				n++
			}
		}
		out[c.Name] = float64(n) / float64(max(rows, 1))
	}
	return out
}

// NumberBox is the range of each number of an encoded row, standardised
// by z (±Inf for a column without a Range), and where its row says the
// number does not count: its spike's "at" category, or −1 — the box a
// sampler of synthetic rows keeps its chains in (sampling.Box), so that
// what Decode writes needs no clamping.
func (s Schema) NumberBox(z vectors.Standardizer) (lo, hi []float64, freeAt []int) {
	spikeBlock := s.spikeBlocks()
	for j, i := range s.numericColumns() {
		c := s.Columns[i]
		l, h := math.Inf(-1), math.Inf(1)
		if len(c.Range) == 2 {
			l, h = (c.Range[0]-z.Mean[j])/z.Std[j], (c.Range[1]-z.Mean[j])/z.Std[j]
		}
		at := -1
		if block, ok := spikeBlock[i]; ok {
			at = block + 1
		}
		lo, hi, freeAt = append(lo, l), append(hi, h), append(freeAt, at)
	}
	return lo, hi, freeAt
}

// conform is a model's number v of numeric column c clamped to the
// column's range and, for an integer column, rounded.
func (c Column) conform(v float64) float64 {
	if len(c.Range) == 2 {
		v = min(max(v, c.Range[0]), c.Range[1])
	}
	if c.Integer {
		v = math.Round(v)
	}
	return v
}

// shareAt is the share of t's rows at spike sp.
func (t *Table) shareAt(sp spike) float64 {
	numeric := len(t.Numbers) / max(t.N, 1)
	n := 0
	for r := range t.N {
		if t.Numbers[r*numeric+sp.number] == sp.value {
			n++
		}
	}
	return float64(n) / float64(t.N)
}

// Header is the columns' names, in the file's order.
func (s Schema) Header() []string {
	names := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		names[i] = c.Name
	}
	return names
}
