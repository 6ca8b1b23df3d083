package densityrun

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// TableSampleOptions say which rows SampleTable draws from a finished
// TrainTable run.
type TableSampleOptions struct {
	// Run is the TrainTable run folder, Method the method whose model
	// draws (default med). Data is the table's CSV file when it moved
	// since training (default: the one the run recorded): the chains start
	// at its training rows.
	Run, Method, Data string
	// Conditions fix columns, by name, in every row: a categorical
	// column to one of its categories, a numeric one to a range LO..HI on
	// the data's scale (either end may be left out: 30.., ..40); the rows
	// are drawn from the model's law given them.
	Conditions map[string]string
	// Rows is how many rows (default 1000); Sweeps the chains' sweeps
	// (default 200, train-table's); Seed their randomness (default 1).
	Rows, Sweeps int
	Seed         int64
	// Out is the CSV file written, in the table's columns (default
	// RUN/METHOD/samples-COLUMN=CATEGORY,….csv, the names' bytes a file
	// name cannot hold as %XX; samples-more.csv without conditions).
	// SampleTable holds the run folder's writer lock while it draws.
	Out, Backend string
	// Stop, when it receives, ends the sampling with training.ErrStopped.
	Stop <-chan os.Signal
}

// TableSampleReport is what SampleTable drew.
type TableSampleReport struct {
	Rows       int
	Conditions map[string]string
	// Starts is how many training rows meet the conditions: the chains
	// start at them (at any training row moved to them, its categories set
	// and numbers clamped, when none does).
	Starts int
	// SamplesOutOfRange is the share of each number the chains took
	// outside the training rows' range (none: they are confined to it).
	SamplesOutOfRange map[string]float64
	StepSize          float64
	Acceptance        *float64
	Seconds           float64
	Out               string
}

func (o TableSampleOptions) withDefaults() (TableSampleOptions, error) {
	o.Method, o.Rows, o.Sweeps, o.Seed = cmp.Or(o.Method, density.MixedMethods[0]), cmp.Or(o.Rows, 1000), cmp.Or(o.Sweeps, 200), cmp.Or(o.Seed, 1)
	err := flagcheck.CheckOptions(
		flagcheck.Rule{Name: "Run", Value: o.Run, OK: o.Run != "", Want: "a train-table run folder"},
		flagcheck.Rule{Name: "Method", Value: o.Method, OK: slices.Contains(density.MixedMethods, o.Method), Want: fmt.Sprintf("one of %v", density.MixedMethods)},
		flagcheck.Rule{Name: "Rows", Value: o.Rows, OK: o.Rows >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "Sweeps", Value: o.Sweeps, OK: o.Sweeps >= 1, Want: "≥ 1"},
	)
	if err != nil {
		return o, err
	}
	if o.Out == "" {
		var parts []string
		for _, column := range slices.Sorted(maps.Keys(o.Conditions)) {
			parts = append(parts, fileSafe(column)+"="+fileSafe(o.Conditions[column]))
		}
		o.Out = filepath.Join(o.Run, o.Method, "samples-"+cmp.Or(strings.Join(parts, ","), "more")+".csv")
	}
	return o, nil
}

// fileSafe is s with every byte a file name may not hold on some system
// (a path separator, < > : " | ? *, a control byte, %) written as %XX, and
// a leading dot too.
func fileSafe(s string) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if c < 0x20 || strings.IndexByte(`/\<>:"|?*%`, c) >= 0 || c == '.' && i == 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// SampleTable draws o.Rows synthetic rows from a finished TrainTable run's
// model, as train-table draws its own (sampling.MixedSweeps from training
// rows, confined to their range), given o.Conditions in every row (a
// category fixed, a number kept in a range): rows from the model's law
// given them, p(rest | conditions) ∝ exp(−E). It writes them, in the table's columns, to o.Out. A condition
// on no column of the table, a category training never saw, or a range
// that is malformed or outside the training rows' is an error naming it,
// before any row is drawn.
func SampleTable(o TableSampleOptions) (TableSampleReport, error) {
	o, err := o.withDefaults()
	if err != nil {
		return TableSampleReport{}, err
	}
	if _, err := os.Stat(filepath.Join(o.Run, TableFile)); err != nil {
		return TableSampleReport{}, fmt.Errorf("Options.Run %s: not a train-table run folder (%w)", o.Run, err)
	}
	rec, tab, _, err := openTable(TableOptions{Out: o.Run, Data: o.Data})
	if err != nil {
		return TableSampleReport{}, err
	}
	box, err := conditionBox(rec, o.Conditions)
	if err != nil {
		return TableSampleReport{}, err
	}
	encoded, err := tab.Encode(rec.Standardizer)
	if err != nil {
		return TableSampleReport{}, err
	}
	train := rowsOf(encoded, rec.Schema.Width(), rec.Train)
	starts := inBox(train, rec.Schema.Width(), box)
	r := TableSampleReport{Rows: o.Rows, Conditions: o.Conditions, Starts: len(starts) / rec.Schema.Width(), Out: o.Out}
	if r.Starts == 0 {
		starts = moveInto(train, rec.Schema, box)
		fmt.Printf("no training row meets every condition: the chains start at training rows moved to them\n")
	}
	b, err := backend.OpenForCommand(cmp.Or(o.Backend, "auto"))
	if err != nil {
		return r, err
	}
	defer b.Finalize()
	writer, err := training.Folder{Dir: o.Run}.Claim() // as train-table: no training beside it
	if err != nil {
		return r, fmt.Errorf("Options.Run: %w", err)
	}
	defer writer.Release()
	model, err := OpenTableModel(b, o.Run, o.Method)
	if err != nil {
		return r, fmt.Errorf("Options.Method %s: %w", o.Method, err)
	}
	cfg, err := density.SavedConfig(methodFolder(o.Run, o.Method).Checkpoints())
	if err != nil {
		return r, err
	}
	start := time.Now()
	var res TableResults
	rows, err := sampleRows(b, model.model, cfg, rec, rowDraw{rows: o.Rows, sweeps: o.Sweeps, seed: o.Seed, starts: starts, box: box, stop: o.Stop}, &res)
	if err != nil {
		return r, err
	}
	r.Seconds, r.StepSize, r.Acceptance = time.Since(start).Seconds(), res.SampleStepSize, res.SampleAcceptance
	r.SamplesOutOfRange = rec.Schema.OutOfRange(rows, rec.Standardizer)
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return r, fmt.Errorf("Options.Out: %w", err)
	}
	return r, writeRows(o.Out, rec, rows)
}

// conditionBox is the box sampleRows keeps the chains in for conditions
// on a table of schema s: the training rows' range of each number
// (rangeBox), narrowed to a numeric condition's LO..HI (on the data's
// scale; either end may be left out), and each categorical condition's
// category pinned. A spiked number whose spike lies outside its range has
// its spike's "off" category pinned as well.
func conditionBox(rec tableRecord, conditions map[string]string) (sampling.Box, error) {
	s, z := rec.Schema, rec.Standardizer
	box := rangeBox(rec)
	numbers := map[string]int{} // each numeric column's place in an encoded row
	for _, c := range s.Columns {
		if c.Kind == table.Numeric {
			numbers[c.Name] = len(numbers)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(conditions)) {
		value := conditions[name]
		if j, ok := numbers[name]; ok {
			lo, hi, err := parseRange(value)
			if err != nil {
				return box, fmt.Errorf("Options.Conditions: column %q: %w", name, err)
			}
			box.Lo[j], box.Hi[j] = max(box.Lo[j], (lo-z.Mean[j])/z.Std[j]), min(box.Hi[j], (hi-z.Mean[j])/z.Std[j])
			c := columnOf(s, name)
			if box.Lo[j] > box.Hi[j] {
				return box, fmt.Errorf("Options.Conditions: column %q: %s lies outside the training rows' range %v", name, value, c.Range)
			}
			if sp := c.Spike; sp != nil && box.FreeAt[j] >= 0 && (*sp < lo || *sp > hi) {
				box.Pinned = append(box.Pinned, box.FreeAt[j]-1) // off the spike: its number counts
				box.FreeAt[j] = -1
			}
			continue
		}
		if !isCategorical(s, name) {
			return box, fmt.Errorf("Options.Conditions: column %q: not a column of %v", name, s.Header())
		}
		k, err := s.Code(name, value)
		if err != nil {
			return box, fmt.Errorf("Options.Conditions: %w", err)
		}
		at, _ := blockOf(s, name)
		box.Pinned = append(box.Pinned, at+k)
	}
	return box, nil
}

// parseRange reads LO..HI (either end may be empty: no bound there).
func parseRange(text string) (lo, hi float64, err error) {
	l, h, ok := strings.Cut(text, "..")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want a range LO..HI of numbers (either end may be left out, as 30.. or ..40)", text)
	}
	lo, hi = math.Inf(-1), math.Inf(1)
	for _, end := range []struct {
		text string
		v    *float64
	}{{l, &lo}, {h, &hi}} {
		if t := strings.TrimSpace(end.text); t != "" {
			if *end.v, err = strconv.ParseFloat(t, 64); err != nil || math.IsNaN(*end.v) {
				return 0, 0, fmt.Errorf("%q: %q is not a number", text, t)
			}
		}
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("%q: its low end is above its high end", text)
	}
	return lo, hi, nil
}

// columnOf is s's column of that name.
func columnOf(s table.Schema, name string) table.Column {
	return s.Columns[slices.IndexFunc(s.Columns, func(c table.Column) bool { return c.Name == name })]
}

// inBox is the encoded rows (width values each) inside box: every pinned
// place at 1, every number in its range unless its FreeAt place is 1.
func inBox(rows []float32, width int, box sampling.Box) []float32 {
	var out []float32
	for i := range len(rows) / width {
		row := rows[i*width : (i+1)*width]
		if !slices.ContainsFunc(box.Pinned, func(at int) bool { return row[at] != 1 }) && numbersInBox(row, box) {
			out = append(out, row...)
		}
	}
	return out
}

func numbersInBox(row []float32, box sampling.Box) bool {
	for j := range box.Lo {
		free := box.FreeAt[j] >= 0 && row[box.FreeAt[j]] == 1
		if v := float64(row[j]); !free && (v < box.Lo[j] || v > box.Hi[j]) {
			return false
		}
	}
	return true
}

// moveInto is a copy of the encoded rows moved into box: each pinned
// place's one-hot block set to it, each number clamped to its range.
func moveInto(rows []float32, s table.Schema, box sampling.Box) []float32 {
	out := slices.Clone(rows)
	width := s.Width()
	for i := range len(out) / width {
		row := out[i*width : (i+1)*width]
		for _, b := range s.Blocks() {
			for _, at := range box.Pinned {
				if at >= b.At && at < b.At+b.Categories {
					clear(row[b.At : b.At+b.Categories])
					row[at] = 1
				}
			}
		}
		for j := range box.Lo {
			row[j] = float32(min(max(float64(row[j]), box.Lo[j]), box.Hi[j]))
		}
	}
	return out
}
