package densityrun

import (
	"fmt"
	"math"
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

// LogDensity is the log-likelihood of an encoded row (Encode's) of energy
// e, as TableResults' held-out log-likelihood counts it: −e − log Z plus
// the row's Schema.LogJacobian, the numbers' density on the data's scale
// times the categories' probability (and a spike's, for a number at it).
// It needs the run's log Z (HasLogZ).
func (m *TableModel) LogDensity(row []float32, e float64) float64 {
	return m.record.logLikelihood(row, e, m.LogZ)
}

// ColumnFit is how one column's conditional law given the rest of the
// row, p(column | rest) ∝ exp(−E), fits rows drawn as the training rows
// were: a model's joint law is right only if every such conditional is.
type ColumnFit struct {
	Column string     `json:"column"`
	Kind   table.Kind `json:"kind"`
	// A categorical column's CalibrationGap is the largest |mean p(c |
	// rest) − share of c| over its categories (0 when the conditional is
	// calibrated in the large), and LogLikelihood the mean log p(c | rest)
	// of the rows' own categories.
	CalibrationGap float64 `json:"calibration_gap,omitempty"`
	LogLikelihood  float64 `json:"conditional_loglik,omitempty"`
	// A numeric column's MeanPIT is the mean of P(value < the row's |
	// rest) under the conditional (on a grid of the standardised value,
	// each point's mass spread over its cell):
	// 0.5 when it is right, less when the model puts the column's mass
	// too high; Deciles are the rows' shares in each tenth of that
	// probability (0.1 each when right).
	MeanPIT float64   `json:"mean_pit,omitempty"`
	Deciles []float64 `json:"pit_deciles,omitempty"`
}

// pitGrid is the grid of standardised values on which ColumnFits
// integrates a number's conditional: ±6 around the training rows' mean
// in steps of 0.1.
var pitGrid = func() []float32 {
	var g []float32
	for i := -60; i <= 60; i++ {
		g = append(g, float32(i)/10)
	}
	return g
}()

// ColumnFits measures, for each column of the encoded rows (Width values
// a row), how its conditional given the rest of the row fits them: the
// categories' calibration in the large and log-likelihood, the numbers'
// probability integral transform. A spike's block counts as a
// categorical column of its number.
func (m *TableModel) ColumnFits(encoded []float32) ([]ColumnFit, error) {
	width := m.Width()
	n := len(encoded) / width
	if n == 0 || len(encoded)%width != 0 {
		return nil, fmt.Errorf("densityrun: %d values are not rows of %d", len(encoded), width)
	}
	var fits []ColumnFit
	numeric := 0
	for _, c := range m.Schema.Columns {
		if c.Kind != table.Numeric {
			continue
		}
		fit, err := m.numericFit(encoded, numeric)
		if err != nil {
			return nil, err
		}
		fit.Column = c.Name
		fits = append(fits, fit)
		numeric++
	}
	for _, b := range m.Schema.Blocks() {
		energies, err := m.model.Energies(targetVariants(encoded, width, b.At, b.Categories), width)
		if err != nil {
			return nil, err
		}
		k := b.Categories
		probs := softmaxOfNegatives(energies, k)
		meanP, share := make([]float64, k), make([]float64, k)
		fit := ColumnFit{Column: m.Schema.Columns[b.Column].Name, Kind: table.Categorical}
		for i := range n {
			own := slices.Index(encoded[i*width+b.At:i*width+b.At+k], 1)
			share[own] += 1 / float64(n)
			fit.LogLikelihood += math.Log(probs[i*k+own]) / float64(n)
			for c := range k {
				meanP[c] += probs[i*k+c] / float64(n)
			}
		}
		for c := range k {
			fit.CalibrationGap = max(fit.CalibrationGap, math.Abs(meanP[c]-share[c]))
		}
		fits = append(fits, fit)
	}
	return fits, nil
}

// numericFit is the probability integral transform of the rows' j-th
// number under its conditional given the rest, on pitGrid.
func (m *TableModel) numericFit(encoded []float32, j int) (ColumnFit, error) {
	width, g := m.Width(), len(pitGrid)
	n := len(encoded) / width
	variants := make([]float32, 0, n*g*width)
	for i := range n {
		row := encoded[i*width : (i+1)*width]
		for _, v := range pitGrid {
			variant := slices.Clone(row)
			variant[j] = v
			variants = append(variants, variant...)
		}
	}
	energies, err := m.model.Energies(variants, width)
	if err != nil {
		return ColumnFit{}, err
	}
	probs := softmaxOfNegatives(energies, g)
	fit := ColumnFit{Kind: table.Numeric, Deciles: make([]float64, 10)}
	const h = 0.1 // pitGrid's step: each point the middle of a cell of its mass, spread evenly
	for i := range n {
		var below float64
		x := float64(encoded[i*width+j])
		for k, v := range pitGrid {
			below += probs[i*g+k] * min(max((x-float64(v))/h+0.5, 0), 1)
		}
		fit.MeanPIT += below / float64(n)
		fit.Deciles[min(int(below*10), 9)] += 1 / float64(n)
	}
	return fit, nil
}
