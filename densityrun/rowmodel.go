package densityrun

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

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
	// Dim is the values of a row; Columns their names, when the file had
	// a header.
	Dim     int
	Columns []string
	// LogZ is the run's AIS estimate (Results.LogZ), Step the checkpoint's.
	LogZ float64
	Step int64
	// Converged is AIS's own judgement of its estimate.
	Converged bool

	model        *density.Model
	standardizer vectors.Standardizer
}

// OpenRowModel loads method's model of the run folder run: its data
// record, its results (a run that has not finished measuring has no log Z
// to score with) and its checkpoint, each error naming its file.
func OpenRowModel(b backends.Backend, run, method string) (*RowModel, error) {
	var rec dataRecord
	if err := readJSON(filepath.Join(run, DataFile), &rec); err != nil {
		return nil, err
	}
	if err := rec.Standardizer.Check(rec.D); err != nil {
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
	return &RowModel{Method: method, Dim: rec.D, Columns: columns, LogZ: res.LogZ, Step: model.Step(), Converged: res.AIS.Converged,
		model: model, standardizer: rec.Standardizer}, nil
}

// LogDensities returns log p(x) = −E(u) − log Z + log|∂u/∂x| of each of
// the rows (n × Dim values on the data's scale), u the standardised row:
// the log-likelihoods Results averages.
func (m *RowModel) LogDensities(rows []float64) ([]float64, error) {
	if len(rows)%m.Dim != 0 {
		return nil, fmt.Errorf("densityrun: %d values are not rows of %d", len(rows), m.Dim)
	}
	set := &vectors.Set{N: len(rows) / m.Dim, D: m.Dim, Values: rows}
	energies, err := m.model.Energies(m.standardizer.Apply(set), m.Dim)
	if err != nil {
		return nil, err
	}
	logJ := m.standardizer.LogJacobian()
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
