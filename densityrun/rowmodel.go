package densityrun

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/training"
)

// RowModel is one method's trained model of a run folder of Train, for
// new rows: their log-density on the data's scale, with the run's
// standardisation and AIS estimate of log Z. It is not safe for
// concurrent use.
type RowModel struct {
	// Method is the method's name (its folder in the run).
	Method string
	// Dim is the values of a row, as in the training file; Columns their
	// names, when the file had a header.
	Dim     int
	Columns []string
	// SetAside are the columns the run set aside (Options.ConstantColumns),
	// each one value in every training row: a row must hold that value
	// there, and the model sees the other columns.
	SetAside []ConstantColumn
	// LogZ is the run's AIS estimate (Results.LogZ), Step the checkpoint's.
	LogZ float64
	Step int64
	// Converged is AIS's own judgement of its estimate.
	Converged bool

	model    *density.Model
	record   dataRecord
	modelled []int
}

// OpenRowModel loads method's model of the run folder run: its data
// record, its results (a run that has not finished measuring has no log Z
// to score with) and its checkpoint, each error naming its file.
func OpenRowModel(b backends.Backend, run, method string) (*RowModel, error) {
	var rec dataRecord
	if err := readJSON(filepath.Join(run, DataFile), &rec); err != nil {
		return nil, err
	}
	if err := rec.checkSetAside(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(run, DataFile), err)
	}
	var res Results
	if err := readJSON(filepath.Join(run, method, ResultsFile), &res); err != nil {
		return nil, fmt.Errorf("method %s: %w (has the run finished measuring it?)", method, err)
	}
	if math.IsNaN(res.LogZ) || math.IsInf(res.LogZ, 0) {
		return nil, fmt.Errorf("%s: log Z %v, want a finite estimate", filepath.Join(run, method, ResultsFile), res.LogZ)
	}
	model, err := density.Load(b, training.Folder{Dir: filepath.Join(run, method)}.Checkpoints())
	if err != nil {
		return nil, err
	}
	var columns []string // the header, when the training file is still there to read it
	if all, err := vectors.Read(rec.File, rec.Read); err == nil && all.D == rec.D {
		columns = all.Columns
	}
	return &RowModel{Method: method, Dim: rec.D, Columns: columns, SetAside: rec.SetAside, LogZ: res.LogZ, Step: model.Step(), Converged: res.AIS.Converged,
		model: model, record: rec, modelled: rec.modelled()}, nil
}

// CheckRows reports whether rows (n × Dim values) are rows the model
// scores: each holds, in every set-aside column, the value all the
// training rows held there, and in every other column that varied in
// training a value at most vectors.MaxDeviations from the training rows'
// mean (a sentinel such as 9.9e99 would overflow the model's float32
// energy). The error names the
// first row at fault (from 1), the column and the values.
func (m *RowModel) CheckRows(rows []float64) error {
	if len(rows)%m.Dim != 0 {
		return fmt.Errorf("densityrun: %d values are not rows of %d", len(rows), m.Dim)
	}
	z := m.record.Standardizer
	for i := range len(rows) / m.Dim {
		row := rows[i*m.Dim : (i+1)*m.Dim]
		if c, off := m.record.offSetAside(row); off {
			return fmt.Errorf("row %d, %s: %v, but every training row held %v there (a constant column, set aside: the model has no density for another value)", i+1, c, row[c.Index], c.Value)
		}
		for k, j := range m.modelled {
			if z.Std[k] <= 1e-9*max(1, math.Abs(z.Mean[k])) {
				continue // a constant column the run modelled (ConstantModel, or a run from before set-aside): such runs score any value
			}
			if d, within := z.Deviations(k, row[j]); !within {
				return fmt.Errorf("row %d, column %d: %g is %.3g standard deviations from the training rows' mean (%g): more than the %g a model scores; a sentinel for a missing value?",
					i+1, j+1, row[j], d, z.Mean[k], float64(vectors.MaxDeviations))
			}
		}
	}
	return nil
}

// Center is the training rows' mean, the set-aside columns' values among
// them: a row CheckRows accepts (a service warms its graphs with it).
func (m *RowModel) Center() []float64 {
	return slices.Clone(m.record.withSetAside(m.record.Standardizer.Mean))
}

// LogDensities returns log p(x) = −E(u) − log Z + log|∂u/∂x| of each of
// the rows (n × Dim values on the data's scale), u the standardised row
// of the modelled columns: the log-likelihoods Results averages. With
// columns set aside it is log p(x_varying | x_constant), and a row that
// CheckRows refuses is an error.
func (m *RowModel) LogDensities(rows []float64) ([]float64, error) {
	if err := m.CheckRows(rows); err != nil {
		return nil, err
	}
	set := selectColumns(&vectors.Set{N: len(rows) / m.Dim, D: m.Dim, Values: rows}, m.modelled)
	energies, err := m.model.Energies(m.record.Standardizer.Apply(set), set.D)
	if err != nil {
		return nil, err
	}
	logJ := m.record.Standardizer.LogJacobian()
	for i, e := range energies {
		energies[i] = -e - m.LogZ + logJ
	}
	return energies, nil
}

// readJSON decodes the file at path into v, naming the file in its errors.
func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
