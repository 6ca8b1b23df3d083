package densityrun

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets/vectors"
)

// DataFile records, in a run folder, which file the run read, how, which
// rows it trains on and which it holds out, and the standardisation.
const DataFile = "data.json"

// dataRecord is DataFile's content. D is the file's values a row; the
// standardiser and the models have the columns but those set aside
// (modelled).
type dataRecord struct {
	Version      int                 `json:"version"`
	File         string              `json:"file"`
	Read         vectors.ReadOptions `json:"read"`
	N            int                 `json:"rows"`
	D            int                 `json:"dim"`
	TestFraction float64             `json:"test_fraction"`
	Seed         int64               `json:"seed"`
	Train        []int               `json:"train_rows"`
	Test         []int               `json:"test_rows"`
	// ConstantColumns is the Options.ConstantColumns the run started
	// with; "" in a record written before the option existed, whose run
	// models every column (as ConstantModel).
	ConstantColumns string `json:"constant_columns,omitempty"`
	// SetAside are the columns set aside (ConstantSetAside), in the
	// file's order.
	SetAside     []ConstantColumn     `json:"set_aside_columns,omitempty"`
	Standardizer vectors.Standardizer `json:"standardizer"`
}

// The values of Options.ConstantColumns.
const (
	// ConstantSetAside (the default) sets aside every column that holds
	// one value in all the training rows: the models see the other
	// columns, and their log-likelihoods are those of the other columns
	// given the constant ones, log p(x_varying | x_constant) — a
	// constant column is a point mass, which has no density to add.
	// Samples get the value back in its column.
	ConstantSetAside = "set-aside"
	// ConstantModel models every column, the constant ones too, as runs
	// did before ConstantSetAside: a continuous density can then pile
	// onto the one value without limit, and the log-likelihood with it.
	ConstantModel = "model"
)

// ConstantColumn is a column set aside: it holds Value in every training
// row.
type ConstantColumn struct {
	// Index is the column's place among a row's values, from 0: the
	// file's columns as read, a label column (ReadOptions.Label) not
	// counted.
	Index int `json:"index"`
	// Name is the column's header, when the file has one.
	Name  string  `json:"name,omitempty"`
	Value float64 `json:"value"`
}

// String names the column for messages: its header in quotes, or its
// number from 1.
func (c ConstantColumn) String() string {
	if c.Name != "" {
		return fmt.Sprintf("column %q", c.Name)
	}
	return fmt.Sprintf("column %d", c.Index+1)
}

// runData are a run's vectors: the whole file, its two sets, and the
// standardised training and test points of the modelled columns (dim
// values a point).
type runData struct {
	record      dataRecord
	all         *vectors.Set
	train, test *vectors.Set
	modelled    []int
	dim         int
	trainPoints []float32
	testPoints  []float32
}

// resumedFile is the data file of a resumed run that trained on
// recorded: recorded itself when given (Options.Data) is empty or names
// the same file, relative or not; given when recorded is gone (the data
// moved: the rows are then checked against the run's record); an error
// naming both otherwise.
func resumedFile(given, recorded, out string) (string, error) {
	if given == "" {
		return recorded, nil
	}
	abs, err := filepath.Abs(given)
	if err != nil {
		return "", fmt.Errorf("Options.Data %s: %w", given, err)
	}
	if abs == recorded {
		return recorded, nil
	}
	if _, err := os.Stat(recorded); errors.Is(err, fs.ErrNotExist) {
		return abs, nil
	}
	return "", fmt.Errorf("Options.Data %s: the run in %s trained on %s", given, out, recorded)
}

// openData reads the file and its split: the one recorded in the run
// folder, or a new one (isNew), to record once the folder is claimed.
func openData(o Options) (d *runData, isNew bool, err error) {
	recordPath := filepath.Join(o.Out, DataFile)
	var rec dataRecord
	raw, err := os.ReadFile(recordPath)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &rec); err != nil || rec.Version != 1 {
			return nil, false, fmt.Errorf("%s: a damaged data record (%v); move the run away to start afresh", recordPath, err)
		}
		if rec.File, err = resumedFile(o.Data, rec.File, o.Out); err != nil {
			return nil, false, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if o.Data == "" {
			return nil, false, errors.New("Options.Data: required: the CSV, .npy or .npz file of vectors")
		}
		abs, err := filepath.Abs(o.Data)
		if err != nil {
			return nil, false, err
		}
		rec = dataRecord{Version: 1, File: abs, Read: o.Read, TestFraction: o.TestFraction, Seed: o.Seed, ConstantColumns: o.ConstantColumns}
		isNew = true
	default:
		return nil, false, err
	}
	all, err := vectors.Read(rec.File, rec.Read)
	if err != nil {
		return nil, false, fmt.Errorf("Options.Data: %w", err)
	}
	if isNew {
		if rec.Train, rec.Test, err = all.Split(rec.TestFraction, uint64(rec.Seed)); err != nil {
			return nil, false, fmt.Errorf("Options.TestFraction: %w", err)
		}
		rec.N, rec.D = all.N, all.D
		train := all.Subset(rec.Train)
		if rec.ConstantColumns == ConstantSetAside {
			rec.SetAside = constantColumns(train)
		}
		if len(rec.SetAside) == all.D {
			return nil, false, fmt.Errorf("Options.Data %s: each of its %d columns holds one value in all %d training rows: nothing varies to model", rec.File, all.D, train.N)
		}
		rec.Standardizer = vectors.Fit(selectColumns(train, rec.modelled()))
	} else if err := rec.check(all); err != nil {
		return nil, false, fmt.Errorf("%s: %w", recordPath, err)
	}
	d = &runData{record: rec, all: all, train: all.Subset(rec.Train), test: all.Subset(rec.Test), modelled: rec.modelled()}
	d.dim = len(d.modelled)
	d.trainPoints = rec.Standardizer.Apply(selectColumns(d.train, d.modelled))
	d.testPoints = rec.Standardizer.Apply(selectColumns(d.test, d.modelled))
	return d, isNew, nil
}

// columnsNote is what the run prints about its constant columns: those
// it set aside or, when it models every column, a warning naming those
// constant in the training rows; and, for a resumed run whose record
// holds another choice than asked (Options.ConstantColumns), that the
// record's holds. It is "" when there is nothing to say.
func (d *runData) columnsNote(asked string) string {
	var lines []string
	rec := d.record
	if policy := cmp.Or(rec.ConstantColumns, ConstantModel); asked != policy {
		why := "as when it started"
		if rec.ConstantColumns == "" {
			why = "recorded before constant columns were set aside"
		}
		lines = append(lines, fmt.Sprintf("constant columns: %q, the run's own (%s), not %q", policy, why, asked))
	}
	if len(rec.SetAside) > 0 {
		lines = append(lines, fmt.Sprintf("constant columns set aside (one value in every training row; not modelled, put back in the samples): %s; the log-likelihoods are those of the other %d columns given these",
			describeSetAside(rec.SetAside), d.dim))
	} else if constant := constantColumns(d.train); len(constant) > 0 {
		lines = append(lines, fmt.Sprintf("WARNING: modelled though they hold one value in every training row: %s; a density piled onto one value can make the log-likelihood as large as it likes (constant columns %q, the default for a new run, sets them aside)",
			describeSetAside(constant), ConstantSetAside))
	}
	return strings.Join(lines, "\n")
}

// constantColumns returns the columns of s that hold one value in every
// row (exactly equal: a standardiser's mean may round).
func constantColumns(s *vectors.Set) []ConstantColumn {
	var out []ConstantColumn
	for j := range s.D {
		v := s.Values[j]
		same := true
		for i := 1; i < s.N && same; i++ {
			same = s.Row(i)[j] == v
		}
		if same {
			c := ConstantColumn{Index: j, Value: v}
			if s.Columns != nil {
				c.Name = s.Columns[j]
			}
			out = append(out, c)
		}
	}
	return out
}

// modelled is the columns the models see, in the file's order: all D but
// those set aside.
func (r dataRecord) modelled() []int {
	out := make([]int, 0, r.D)
	k := 0
	for j := range r.D {
		if k < len(r.SetAside) && r.SetAside[k].Index == j {
			k++
			continue
		}
		out = append(out, j)
	}
	return out
}

// selectColumns returns the columns cols of s as a set of their own
// (s itself when cols are all of its columns).
func selectColumns(s *vectors.Set, cols []int) *vectors.Set {
	if len(cols) == s.D {
		return s
	}
	out := &vectors.Set{Name: s.Name, N: s.N, D: len(cols), Values: make([]float64, 0, s.N*len(cols)), Labels: s.Labels}
	for i := range s.N {
		row := s.Row(i)
		for _, j := range cols {
			out.Values = append(out.Values, row[j])
		}
	}
	if s.Columns != nil {
		for _, j := range cols {
			out.Columns = append(out.Columns, s.Columns[j])
		}
	}
	return out
}

// withSetAside returns the points (n × the modelled columns, on the
// data's scale) as the file's rows: each set-aside column's value put
// back in its place.
func (r dataRecord) withSetAside(values []float64) []float64 {
	if len(r.SetAside) == 0 {
		return values
	}
	modelled := r.modelled()
	n := len(values) / len(modelled)
	out := make([]float64, n*r.D)
	for i := range n {
		row := out[i*r.D : (i+1)*r.D]
		for k, j := range modelled {
			row[j] = values[i*len(modelled)+k]
		}
		for _, c := range r.SetAside {
			row[c.Index] = c.Value
		}
	}
	return out
}

// offSetAside returns the first set-aside column in which row (D values)
// does not hold the training value, and whether there is one.
func (r dataRecord) offSetAside(row []float64) (ConstantColumn, bool) {
	for _, c := range r.SetAside {
		if row[c.Index] != c.Value {
			return c, true
		}
	}
	return ConstantColumn{}, false
}

// check reports whether a recorded split still fits the file.
func (r dataRecord) check(all *vectors.Set) error {
	if all.N != r.N || all.D != r.D {
		return fmt.Errorf("the run split %s's %d rows of %d values, the file now has %d of %d", r.File, r.N, r.D, all.N, all.D)
	}
	for _, i := range slices.Concat(r.Train, r.Test) {
		if i < 0 || i >= r.N {
			return fmt.Errorf("row %d recorded, the file has %d", i, r.N)
		}
	}
	if len(r.Train) == 0 || len(r.Test) == 0 {
		return fmt.Errorf("%d training and %d test rows recorded", len(r.Train), len(r.Test))
	}
	if err := r.checkSetAside(); err != nil {
		return err
	}
	for _, i := range r.Train {
		if c, off := r.offSetAside(all.Row(i)); off {
			return fmt.Errorf("%s set aside as %v in every training row, the file's row %d now has %v", c, c.Value, i+1, all.Row(i)[c.Index])
		}
	}
	return nil
}

// checkSetAside reports whether the record's choice of columns and its
// standardiser fit its D columns (a record may have been edited).
func (r dataRecord) checkSetAside() error {
	switch r.ConstantColumns {
	case "", ConstantModel:
		if len(r.SetAside) > 0 {
			return fmt.Errorf("constant_columns %q with %d columns set aside, want %q to set them aside", r.ConstantColumns, len(r.SetAside), ConstantSetAside)
		}
	case ConstantSetAside:
	default:
		return fmt.Errorf("constant_columns %q, want %q or %q", r.ConstantColumns, ConstantSetAside, ConstantModel)
	}
	for k, c := range r.SetAside {
		if c.Index < 0 || c.Index >= r.D || k > 0 && c.Index <= r.SetAside[k-1].Index || math.IsNaN(c.Value) || math.IsInf(c.Value, 0) {
			return fmt.Errorf("set-aside column %d (index %d, value %v): want increasing indices in [0, %d) and finite values", k+1, c.Index, c.Value, r.D)
		}
	}
	if len(r.SetAside) >= r.D {
		return fmt.Errorf("all %d columns set aside, want one or more modelled", r.D)
	}
	return r.Standardizer.Check(r.D - len(r.SetAside))
}

// write records the data in the run folder.
func (r dataRecord) write(out string) error {
	return atomicfile.WriteJSON(filepath.Join(out, DataFile), r)
}

// pointBatches serves standardised points [B, d] in batches, shuffled per
// epoch by a PCG generator seeded with (seed, epoch), the last partial
// batch dropped: a train.Dataset whose position depends only on the step,
// so a resumed run sees the batches an uninterrupted one would.
type pointBatches struct {
	points      []float32
	n, d, batch int
	seed        uint64
	epoch, next int
	order       []int
}

var _ train.Dataset = (*pointBatches)(nil)

func newPointBatches(points []float32, d, batch int, seed uint64) (*pointBatches, error) {
	n := len(points) / d
	if batch < 1 || batch > n {
		return nil, fmt.Errorf("Options.Batch %d: want a value in [1, %d], the training rows", batch, n)
	}
	p := &pointBatches{points: points, n: n, d: d, batch: batch, seed: seed}
	p.seek(0)
	return p, nil
}

func (p *pointBatches) Name() string { return "vectors" }

// perEpoch is the number of batches in an epoch.
func (p *pointBatches) perEpoch() int { return p.n / p.batch }

// seek positions the stream at training step step.
func (p *pointBatches) seek(step int) {
	p.epoch, p.next = step/p.perEpoch(), step%p.perEpoch()*p.batch
	p.order = rand.New(rand.NewPCG(p.seed, uint64(p.epoch))).Perm(p.n)
}

// Yield returns the next batch; at an epoch's end it moves on to the next
// epoch itself, so the loop never sees io.EOF.
func (p *pointBatches) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	if p.next+p.batch > p.n {
		p.seek((p.epoch + 1) * p.perEpoch())
	}
	buf := make([]float32, 0, p.batch*p.d)
	for _, i := range p.order[p.next : p.next+p.batch] {
		buf = append(buf, p.points[i*p.d:(i+1)*p.d]...)
	}
	p.next += p.batch
	return nil, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(buf, p.batch, p.d)}, nil, nil
}

func (p *pointBatches) Reset() {}
