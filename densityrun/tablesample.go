package densityrun

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/flagcheck"
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
	// Conditions fix categorical columns, by name, to one of their
	// categories in every row: the rows are drawn from the model's law
	// given them.
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
	// start at them (at any training row, its categories set to the
	// conditions', when none does).
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
// rows, confined to their range), with o.Conditions' categories fixed in
// every row: rows from the model's law given them, p(rest | conditions) ∝
// exp(−E). It writes them, in the table's columns, to o.Out. A condition
// on a column that is not categorical, or on a category training never
// saw, is an error naming it, before any row is drawn.
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
	pinned, err := conditionPlaces(rec.Schema, o.Conditions)
	if err != nil {
		return TableSampleReport{}, err
	}
	encoded, err := tab.Encode(rec.Standardizer)
	if err != nil {
		return TableSampleReport{}, err
	}
	starts := rowsMeeting(rowsOf(encoded, rec.Schema.Width(), rec.Train), rec.Schema.Width(), pinned)
	r := TableSampleReport{Rows: o.Rows, Conditions: o.Conditions, Starts: len(starts) / rec.Schema.Width(), Out: o.Out}
	if r.Starts == 0 {
		starts = pinRows(rowsOf(encoded, rec.Schema.Width(), rec.Train), rec.Schema, pinned)
		fmt.Printf("no training row has every condition's category: the chains start at training rows set to them\n")
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
	rows, err := sampleRows(b, model.model, cfg, rec, rowDraw{rows: o.Rows, sweeps: o.Sweeps, seed: o.Seed, starts: starts, pinned: pinned, stop: o.Stop}, &res)
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

// conditionPlaces is where each condition's category sits in an encoded
// row of s (its one-hot block's place), in the columns' order.
func conditionPlaces(s table.Schema, conditions map[string]string) ([]int, error) {
	var places []int
	for _, name := range slices.Sorted(maps.Keys(conditions)) {
		if !isCategorical(s, name) {
			return nil, fmt.Errorf("Options.Conditions: column %q: want a categorical column of %v", name, s.Header())
		}
		k, err := s.Code(name, conditions[name])
		if err != nil {
			return nil, fmt.Errorf("Options.Conditions: %w", err)
		}
		at, _ := blockOf(s, name)
		places = append(places, at+k)
	}
	return places, nil
}

// rowsMeeting is the encoded rows (width values each) with a 1 at every
// place of pinned.
func rowsMeeting(rows []float32, width int, pinned []int) []float32 {
	var out []float32
	for i := range len(rows) / width {
		row := rows[i*width : (i+1)*width]
		if !slices.ContainsFunc(pinned, func(at int) bool { return row[at] != 1 }) {
			out = append(out, row...)
		}
	}
	return out
}

// pinRows is a copy of the encoded rows with each pinned place's one-hot
// block set to it.
func pinRows(rows []float32, s table.Schema, pinned []int) []float32 {
	out := slices.Clone(rows)
	width := s.Width()
	for _, b := range s.Blocks() {
		for _, at := range pinned {
			if at < b.At || at >= b.At+b.Categories {
				continue
			}
			for i := range len(out) / width {
				clear(out[i*width+b.At : i*width+b.At+b.Categories])
				out[i*width+at] = 1
			}
		}
	}
	return out
}
