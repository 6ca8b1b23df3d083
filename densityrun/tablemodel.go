package densityrun

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/training"
)

// TableModel is one method's trained model of a TrainTable run folder, for
// new rows: their energy, how it ranks among the energies of the run's
// held-out rows (a conformal p-value), and, when the run classified a
// target column, p(target | the rest). It is not safe for concurrent use.
type TableModel struct {
	// Method is the method's name (its folder in the run); Step the
	// checkpoint's.
	Method string
	Step   int64
	// Schema is the run's: the columns a row must have, their kinds and
	// categories.
	Schema table.Schema
	// Target is the categorical column the run classified ("" for none),
	// TargetCategories its categories, in the order of Score's
	// probabilities.
	Target           string
	TargetCategories []string
	// LogZ is the run's AIS estimate of the model's log Z (its results'),
	// HasLogZ false for a run that skipped it: LogDensity needs it.
	LogZ    float64
	HasLogZ bool

	model   *density.Model
	record  tableRecord
	heldOut []float64 // the held-out rows' energies, ascending, at rankedEnergyDigits
	at, k   int       // the target's one-hot block (k 0: no target)
}

// OpenTableModel loads method's model of the TrainTable run folder run:
// its record (table.json), results (the target it classified) and
// checkpoint, and its held-out rows' energies (ScoresFile). A run whose
// checkpoint is past its results has not finished measuring: an error
// that says so.
func OpenTableModel(b backends.Backend, run, method string) (*TableModel, error) {
	var rec tableRecord
	if err := readJSON(filepath.Join(run, TableFile), &rec); err != nil {
		return nil, fmt.Errorf("%w (a train-table run folder?)", err)
	}
	folder := filepath.Join(run, method)
	var res TableResults
	if err := readJSON(filepath.Join(folder, ResultsFile), &res); err != nil {
		return nil, fmt.Errorf("method %s: %w (has the run finished measuring it?)", method, err)
	}
	model, err := density.Load(b, training.Folder{Dir: folder}.Checkpoints())
	if err != nil {
		return nil, fmt.Errorf("method %s: %w", method, err)
	}
	if model.Step() != res.Step {
		return nil, fmt.Errorf("method %s: the checkpoint is at step %d, its results (%s) at %d: the run has not finished measuring it (run train-table -out %s again)",
			method, model.Step(), filepath.Join(folder, ResultsFile), res.Step, run)
	}
	heldOut, err := readRankedEnergies(filepath.Join(folder, ScoresFile))
	if err != nil {
		return nil, fmt.Errorf("method %s: %w", method, err)
	}
	if len(heldOut) != len(rec.Test) {
		return nil, fmt.Errorf("method %s: %s ranks %d rows, the run held out %d", method, filepath.Join(folder, ScoresFile), len(heldOut), len(rec.Test))
	}
	slices.Sort(heldOut)
	m := &TableModel{Method: method, Step: model.Step(), Schema: rec.Schema, Target: res.Target, LogZ: res.LogZ, HasLogZ: res.AIS != nil,
		model: model, record: rec, heldOut: heldOut}
	if m.Target != "" {
		if !isCategorical(rec.Schema, m.Target) {
			return nil, fmt.Errorf("method %s: its results' target %q is no categorical column of %s", method, m.Target, filepath.Join(run, TableFile))
		}
		m.at, m.k = blockOf(rec.Schema, m.Target)
		for _, c := range rec.Schema.Columns {
			if c.Name == m.Target {
				m.TargetCategories = c.Categories
			}
		}
	}
	return m, nil
}

// Width is the values of an encoded row.
func (m *TableModel) Width() int { return m.record.Schema.Width() }

// HeldOut is the number of held-out rows whose energies calibrate PValue.
func (m *TableModel) HeldOut() int { return len(m.heldOut) }

// Encode encodes rows read against the model's schema (table.ReadRows,
// Schema.ParseRows) as the model sees them: numbers standardised as the
// training rows were, categories one-hot.
func (m *TableModel) Encode(t *table.Table) ([]float32, error) {
	return t.Encode(m.record.Standardizer)
}

// Score returns the energies of encoded rows (Width values a row) and,
// when the model has a target, each row's p(target = c | the rest) ∝
// exp(−E(row with c)) for every category c (len(TargetCategories) a row,
// in their order), as train-table's classification computes them.
func (m *TableModel) Score(encoded []float32) (energies, probs []float64, err error) {
	width := m.Width()
	if len(encoded)%width != 0 {
		return nil, nil, fmt.Errorf("densityrun: %d values are not rows of %d", len(encoded), width)
	}
	if m.k == 0 {
		energies, err = m.model.Energies(encoded, width)
		return energies, nil, err
	}
	all, err := m.model.Energies(targetVariants(encoded, width, m.at, m.k), width)
	if err != nil {
		return nil, nil, err
	}
	n := len(encoded) / width
	energies = make([]float64, n)
	for i := range n {
		c := slices.Index(encoded[i*width+m.at:i*width+m.at+m.k], 1)
		if c < 0 {
			return nil, nil, fmt.Errorf("densityrun: row %d has no category of %s", i+1, m.Target)
		}
		energies[i] = all[i*m.k+c] // the row itself is one of its variants
	}
	return energies, softmaxOfNegatives(all, m.k), nil
}

// PValue is the conformal p-value of a row of energy e: (1 + the held-out
// rows of energy at least e) / (1 + the held-out rows), e compared at the
// digits ScoresFile holds. For a row drawn as the training rows were,
// P(PValue ≤ α) ≤ α whatever the model; a row less typical than every
// held-out row gets 1/(1 + HeldOut()).
func (m *TableModel) PValue(e float64) float64 {
	e, _ = strconv.ParseFloat(strconv.FormatFloat(e, 'g', rankedEnergyDigits, 64), 64)
	above := len(m.heldOut) - sort.SearchFloat64s(m.heldOut, e)
	return float64(1+above) / float64(1+len(m.heldOut))
}

// Center is an encoded row the model scores: the numbers at the training
// rows' mean, each categorical block at its first category (a service
// pads and warms its batches with it).
func (m *TableModel) Center() []float32 {
	row := make([]float32, m.Width())
	for _, b := range m.record.Schema.Blocks() {
		row[b.At] = 1
	}
	return row
}

// LogDensity is the log-likelihood of a row of energy e, as TableResults'
// held-out log-likelihood counts it: −e − log Z + log|∂u/∂x|, the numbers'
// density on the data's scale times the categories' probability. It
// needs the run's log Z (HasLogZ).
func (m *TableModel) LogDensity(e float64) float64 {
	return -e - m.LogZ + m.record.Standardizer.LogJacobian()
}
