package serving

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"

	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
)

// A TableModel serves one method's model of a train-table run: new rows'
// energies, their conformal p-values against the run's held-out rows and,
// when the run classified a target column, its probabilities
// (densityrun.TableModel), batched across callers. It is safe for
// concurrent use.
type TableModel struct {
	o      ModelOptions
	lock   *modelLock // the model computes under it
	model  *densityrun.TableModel
	scores *Batcher[float32]
}

// OpenTableModel loads the method's model of a train-table run (default
// med, energy discrepancy).
func OpenTableModel(o ModelOptions) (*TableModel, error) {
	o, lock, err := o.open(density.MixedMethods[0])
	if err != nil {
		return nil, err
	}
	m := &TableModel{o: o, lock: lock}
	if m.model, err = densityrun.OpenTableModel(lock.backend, o.Run, o.Method); err != nil {
		lock.close()
		return nil, fmt.Errorf("Options.Run: %w", err)
	}
	bo := o.batcher("score", m.model.Width(), 1+len(m.model.TargetCategories))
	for _, v := range m.model.Center() {
		bo.Pad = append(bo.Pad, float64(v))
	}
	if m.scores, err = NewBatcher(m.scoreBatch, bo); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// MaxRows is the most rows one call may have.
func (m *TableModel) MaxRows() int { return m.scores.MaxRows() }

// Schema is the run's: the columns a row must have.
func (m *TableModel) Schema() table.Schema { return m.model.Schema }

// ScoredTableRow is one row of /v1/score's answer for a table.
type ScoredTableRow struct {
	// Energy is the model's energy of the row: higher for rows less
	// typical of the training rows; +Inf (null in JSON) for a row with a
	// category training never saw, kept by ?unseen=anomalous.
	Energy float64 `json:"energy"`
	// PValue is the share of the run's held-out rows at least as
	// atypical, (1 + k)/(1 + n): for a row drawn as the training rows
	// were, P(PValue ≤ α) ≤ α.
	PValue float64 `json:"p_value"`
	// LogDensity is the row's log-likelihood under the model (its
	// numbers' density on the data's scale times its categories'
	// probability), absent for a run that did not estimate log Z and for
	// a row with an unseen category (probability 0).
	LogDensity *float64 `json:"log_density,omitempty"`
	// TargetProbabilities are p(target = c | the rest) for each category
	// c of the run's target column, and Predicted the likeliest; absent
	// when the run classified none, or the row has an unseen category.
	TargetProbabilities map[string]float64 `json:"target_probabilities,omitempty"`
	Predicted           string             `json:"predicted,omitempty"`
	// Unseen is the row's categories training never saw, by column (a
	// request with ?unseen=anomalous; without it such a row is refused).
	Unseen map[string]string `json:"unseen,omitempty"`
}

// scoredTableRowJSON is a ScoredTableRow as JSON: JSON has no infinity,
// so an unseen row's energy is null.
type scoredTableRowJSON struct {
	Energy *float64 `json:"energy"`
	scoredTableRowFields
}

type scoredTableRowFields ScoredTableRow

// MarshalJSON writes the row with a null energy when it is +Inf.
func (r ScoredTableRow) MarshalJSON() ([]byte, error) {
	out := scoredTableRowJSON{scoredTableRowFields: scoredTableRowFields(r)}
	if !math.IsInf(r.Energy, 1) {
		out.Energy = &r.Energy
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads MarshalJSON's form: a null energy is +Inf.
func (r *ScoredTableRow) UnmarshalJSON(raw []byte) error {
	var in scoredTableRowJSON
	if err := json.Unmarshal(raw, &in); err != nil {
		return err
	}
	*r = ScoredTableRow(in.scoredTableRowFields)
	r.Energy = math.Inf(1)
	if in.Energy != nil {
		r.Energy = *in.Energy
	}
	return nil
}

// TableAnswer is /v1/score's answer for a table.
type TableAnswer struct {
	Method string `json:"method"`
	Step   int64  `json:"step"`
	// Target is the column TargetProbabilities are of ("" for none).
	Target string           `json:"target,omitempty"`
	Rows   []ScoredTableRow `json:"rows"`
}

// Score scores rows read against the run's schema (table.ReadRows,
// Schema.ParseRows), at most MaxRows. A row with a category training never
// saw (rows.Unseen) has energy +Inf and the least p-value.
func (m *TableModel) Score(ctx context.Context, rows *table.Table) ([]ScoredTableRow, error) {
	encoded, err := m.model.Encode(rows)
	if de := new(table.DeviationError); errors.As(err, &de) {
		return nil, refused(http.StatusUnprocessableEntity, "%v", err)
	}
	if err != nil {
		return nil, err
	}
	out, err := m.scores.Do(ctx, encoded, rows.N)
	if err != nil {
		return nil, err
	}
	categories := m.model.TargetCategories
	width := 1 + len(categories)
	energies := make([]float64, rows.N)
	for i := range energies {
		energies[i] = float64(out[i*width])
	}
	scored := make([]ScoredTableRow, rows.N)
	for _, i := range densityrun.UnseenEnergies(rows, energies) {
		r := ScoredTableRow{Energy: energies[i], PValue: m.model.PValue(energies[i])}
		if m.model.HasLogZ {
			v := m.model.LogDensity(encoded[i*m.model.Width():(i+1)*m.model.Width()], energies[i])
			r.LogDensity = &v
		}
		if probs := out[i*width+1 : (i+1)*width]; len(categories) > 0 {
			r.TargetProbabilities = make(map[string]float64, len(categories))
			for c, p := range probs {
				r.TargetProbabilities[categories[c]] = float64(p)
			}
			r.Predicted = categories[slices.Index(probs, slices.Max(probs))]
		}
		scored[i] = r
	}
	for i, unseen := range rows.Unseen {
		if unseen != nil {
			scored[i] = ScoredTableRow{Energy: energies[i], PValue: m.model.PValue(energies[i]), Unseen: unseen}
		}
	}
	return scored, nil
}

// scoreBatch computes a batch's energies and target probabilities, 1 +
// len(TargetCategories) values a row.
func (m *TableModel) scoreBatch(encoded []float32, size int) (out []float32, err error) {
	var energies, probs []float64
	err = m.lock.run(func() error {
		energies, probs, err = m.model.Score(encoded)
		return err
	})
	if err != nil {
		return nil, err
	}
	k := len(m.model.TargetCategories)
	out = make([]float32, 0, size*(1+k))
	for i, e := range energies {
		out = append(out, float32(e))
		for _, p := range probs[i*k : (i+1)*k] {
			out = append(out, float32(p))
		}
	}
	return out, nil
}

// Warm computes a batch of every size, so that every graph is compiled
// before the first request.
func (m *TableModel) Warm() error { return m.scores.warm(m.model.Center()) }

// Close stops the batcher and frees the backend.
func (m *TableModel) Close() { closeModel(m.lock, m.scores) }

func (m *TableModel) info() Info {
	schema := m.model.Schema
	info := Info{Kind: "table", Backend: m.lock.described, Step: m.model.Step, Method: m.model.Method, Columns: schema.Header(), Schema: &schema,
		Target: m.model.Target, HeldOut: m.model.HeldOut(), MaxItems: m.MaxRows(), BatchSizes: m.scores.sizes}
	if m.model.HasLogZ {
		info.LogZ = m.model.LogZ
	}
	return info
}

func (m *TableModel) answerScore(r *http.Request) (any, error) {
	rows, err := decodeTableRows(r, m.model.Schema, m.MaxRows())
	if err != nil {
		return nil, err
	}
	scored, err := m.Score(r.Context(), rows)
	if err != nil {
		return nil, err
	}
	return TableAnswer{Method: m.model.Method, Step: m.model.Step, Target: m.model.Target, Rows: scored}, nil
}

// answerSamples is the synthetic rows the run wrote (train-table's
// samples.csv of the method).
func (m *TableModel) answerSamples() (string, []byte, error) {
	raw, err := os.ReadFile(filepath.Join(m.o.Run, m.model.Method, densityrun.SamplesFile))
	return "text/csv", raw, err
}

// TableRowsRequest is /v1/score's JSON request for a table: each row an
// object of the run's columns by name, each value a string or a number
// (categories by their word); other names are ignored.
type TableRowsRequest struct {
	Rows []map[string]any `json:"rows"`
}

// decodeTableRows reads a table's rows from a request: JSON (a
// TableRowsRequest) or a CSV file with a header (text/csv), 1 to maxRows
// rows, each value checked against the schema. The errors name the row and
// the column at fault.
func decodeTableRows(r *http.Request, s table.Schema, maxRows int) (*table.Table, error) {
	o := table.Options{Unseen: r.URL.Query().Get("unseen")}
	if o.Check() != nil {
		return nil, refused(http.StatusBadRequest, "?unseen=%q: want %q (the default: refuse a category training never saw) or %q (rank such a row first, energy null)", o.Unseen, table.UnseenError, table.UnseenAnomalous)
	}
	var header []string
	var records [][]string
	var err error
	switch t := mediaType(r); t {
	case "application/json":
		header = s.Header()
		records, err = decodeTableJSON(r.Body, header)
	case "text/csv":
		header, records, err = decodeTableCSV(r.Body)
	default:
		return nil, refused(http.StatusUnsupportedMediaType, "content type %q: want application/json ({\"rows\": [{\"column\": value, …}, …]}) or text/csv (a header, then rows)", r.Header.Get("Content-Type"))
	}
	if err != nil {
		return nil, err
	}
	switch n := len(records); {
	case n == 0:
		return nil, refused(http.StatusBadRequest, "no rows in the request")
	case n > maxRows:
		return nil, refused(http.StatusRequestEntityTooLarge, "%d rows in one request, more than %d: send them in several", n, maxRows)
	}
	rows, err := s.ParseRows("the request", header, records, o)
	if ce := new(table.CategoryError); errors.As(err, &ce) {
		return nil, refused(http.StatusUnprocessableEntity, "%v (or rank such rows first: ?unseen=%s)", err, table.UnseenAnomalous)
	}
	if err != nil {
		return nil, refused(http.StatusUnprocessableEntity, "%v", err)
	}
	return rows, nil
}

// decodeTableJSON reads a TableRowsRequest's rows as records of header's
// columns.
func decodeTableJSON(body io.Reader, header []string) ([][]string, error) {
	var req TableRowsRequest
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		if tooLarge(err) {
			return nil, bodyTooLarge(err)
		}
		return nil, refused(http.StatusBadRequest, "malformed JSON (want {\"rows\": [{\"column\": value, …}, …]}): %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, refused(http.StatusBadRequest, "malformed JSON: more after the request object")
	}
	records := make([][]string, len(req.Rows))
	for i, row := range req.Rows {
		records[i] = make([]string, len(header))
		for j, name := range header {
			switch v := row[name].(type) {
			case string:
				records[i][j] = v
			case json.Number:
				records[i][j] = v.String()
			case nil:
				if _, ok := row[name]; ok {
					return nil, refused(http.StatusUnprocessableEntity, "row %d, column %q: null: want a value", i+1, name)
				}
				return nil, refused(http.StatusUnprocessableEntity, "row %d lacks the column %q (the model's columns: %q)", i+1, name, header)
			default:
				return nil, refused(http.StatusUnprocessableEntity, "row %d, column %q: %v: want a string or a number", i+1, name, v)
			}
		}
	}
	return records, nil
}

// decodeTableCSV reads a CSV body: its header and rows.
func decodeTableCSV(body io.Reader) (header []string, records [][]string, err error) {
	raw, err := io.ReadAll(body)
	if err != nil {
		if tooLarge(err) {
			return nil, nil, bodyTooLarge(err)
		}
		return nil, nil, err
	}
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))))
	cr.TrimLeadingSpace = true // as score-table reads a file (vectors.ReadRecords)
	all, err := cr.ReadAll()
	if err != nil {
		return nil, nil, refused(http.StatusBadRequest, "malformed CSV: %v", err)
	}
	if len(all) == 0 {
		return nil, nil, refused(http.StatusBadRequest, "no header in the CSV: want the column names, then rows")
	}
	return all[0], all[1:], nil
}
