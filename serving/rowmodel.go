package serving

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/backend"

	"github.com/edlebm/edlebm/densityrun"
)

// Model is a model the service answers for: an *ImageModel, a *RowModel
// or a *TableModel (Open opens the one a run folder holds).
type Model interface{ served }

// Open opens the model of a run folder: a RowModel for a train-vectors run
// (it has densityrun.DataFile), a TableModel for a train-table run
// (densityrun.TableFile), else an ImageModel of a train-lebm run.
func Open(o ModelOptions) (Model, error) {
	if o.Run != "" {
		if _, err := os.Stat(filepath.Join(o.Run, densityrun.DataFile)); err == nil {
			return OpenRowModel(o)
		}
		if _, err := os.Stat(filepath.Join(o.Run, densityrun.TableFile)); err == nil {
			return OpenTableModel(o)
		}
	}
	return OpenImageModel(o)
}

// A RowModel serves one method's model of a train-vectors run: the
// log-density of new rows on the data's scale (densityrun.RowModel),
// batched across callers. It is safe for concurrent use.
type RowModel struct {
	o      ModelOptions
	lock   *modelLock // the model computes under it
	model  *densityrun.RowModel
	scores *Batcher[float64]
}

// openBackend opens the GoMLX backend request asks for (backend.Resolve's
// syntax; "" for auto) and says which it is and why.
func openBackend(request string) (backends.Backend, string, error) {
	b, choice, err := backend.Open(cmp.Or(request, "auto"))
	if err != nil {
		return nil, "", fmt.Errorf("Options.Backend: %w", err)
	}
	return b, fmt.Sprintf("%s (%s)", b.Name(), choice.Reason), nil
}

// open checks o, its method defaulting to defaultMethod, and opens its
// backend: the lock a model computes under.
func (o ModelOptions) open(defaultMethod string) (ModelOptions, *modelLock, error) {
	o, err := o.withDefaults()
	if err != nil {
		return o, nil, err
	}
	o.Method = cmp.Or(o.Method, defaultMethod)
	b, described, err := openBackend(o.Backend)
	return o, &modelLock{backend: b, described: described}, err
}

// batcher is the options of a batcher of op's batches (rows of width
// values in, outWidth out), reporting to o.Observe.
func (o ModelOptions) batcher(op string, width, outWidth int) BatcherOptions {
	bo := BatcherOptions{Sizes: o.BatchSizes, Width: width, OutWidth: outWidth, MaxWait: o.MaxWait}
	if o.Observe != nil {
		bo.Observe = func(rows, size int, took time.Duration, err error) { o.Observe(op, rows, size, took, err) }
	}
	return bo
}

// modelLock serialises a model's computations, and frees its backend
// once, after the computation under way.
type modelLock struct {
	mu        sync.Mutex
	closed    bool // under mu: the backend is freed
	backend   backends.Backend
	described string // the backend and why it was chosen
}

// run calls fn under the lock, or answers ErrClosed once closed.
func (l *modelLock) run(fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return fn()
}

func (l *modelLock) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed && l.backend != nil {
		l.backend.Finalize()
	}
	l.closed = true
}

// closeModel stops a model's batchers (those opened) and frees its backend.
func closeModel[T Value](lock *modelLock, batchers ...*Batcher[T]) {
	for _, b := range batchers {
		if b != nil {
			b.Close()
		}
	}
	lock.close()
}

// DefaultMethod is ModelOptions.Method's default for a train-vectors run
// (a train-table run's is med, its energy discrepancy).
const DefaultMethod = "ed"

// OpenRowModel loads the method's model of a train-vectors run.
func OpenRowModel(o ModelOptions) (*RowModel, error) {
	o, lock, err := o.open(DefaultMethod)
	if err != nil {
		return nil, err
	}
	m := &RowModel{o: o, lock: lock}
	if m.model, err = densityrun.OpenRowModel(lock.backend, o.Run, o.Method); err != nil {
		lock.close()
		return nil, fmt.Errorf("Options.Run: %w", err)
	}
	if m.scores, err = NewBatcher(m.scoreBatch, o.batcher("score", m.model.Dim, 1)); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Dim is the values of a row.
func (m *RowModel) Dim() int { return m.model.Dim }

// MaxRows is the most rows one call may have.
func (m *RowModel) MaxRows() int { return m.scores.MaxRows() }

// LogDensities returns log p(x) of n rows (n × Dim values on the data's
// scale), as densityrun.RowModel computes them.
func (m *RowModel) LogDensities(ctx context.Context, rows []float64, n int) ([]float64, error) {
	return m.scores.Do(ctx, rows, n)
}

func (m *RowModel) scoreBatch(rows []float64, size int) (out []float64, err error) {
	// The requests' rows hold the set-aside columns' values (answerScore
	// checked them); the batch's padding rows, zeros, are given them too.
	for i := range size {
		for _, c := range m.model.SetAside {
			rows[i*m.model.Dim+c.Index] = c.Value
		}
	}
	err = m.lock.run(func() error {
		out, err = m.model.LogDensities(rows)
		return err
	})
	return out, err
}

// Warm computes a batch of every size (copies of the training rows'
// mean), so that every graph is compiled before the first request.
func (m *RowModel) Warm() error { return m.scores.warm(m.model.Center()) }

// Close stops the batcher and frees the backend.
func (m *RowModel) Close() { closeModel(m.lock, m.scores) }

// RowsRequest is /v1/score's request for rows: numbers on the data's
// scale, Dim a row.
type RowsRequest struct {
	Rows [][]*float64 `json:"rows"`
}

// ScoredRow is one row of /v1/score's answer.
type ScoredRow struct {
	// LogDensity is log p(x) on the data's scale; Score is −LogDensity,
	// higher for rows less typical of the training rows.
	LogDensity float64 `json:"log_density"`
	Score      float64 `json:"score"`
}

// RowsAnswer is /v1/score's answer for rows.
type RowsAnswer struct {
	Method string      `json:"method"`
	Step   int64       `json:"step"`
	Rows   []ScoredRow `json:"rows"`
}

func (m *RowModel) info() Info {
	return Info{Kind: "rows", Backend: m.lock.described, Step: m.model.Step, Method: m.model.Method, Dim: m.model.Dim, Columns: m.model.Columns, SetAside: m.model.SetAside,
		LogZ: m.model.LogZ, MaxItems: m.MaxRows(), BatchSizes: m.scores.sizes}
}

func (m *RowModel) answerScore(r *http.Request) (any, error) {
	rows, n, err := decodeRows(r, m.model.Dim, m.MaxRows())
	if err != nil {
		return nil, err
	}
	if err := m.model.CheckRows(rows); err != nil { // here, not in a batch shared with other requests
		return nil, refused(http.StatusUnprocessableEntity, "%v", err)
	}
	logp, err := m.LogDensities(r.Context(), rows, n)
	if err != nil {
		return nil, err
	}
	answer := RowsAnswer{Method: m.model.Method, Step: m.model.Step, Rows: make([]ScoredRow, n)}
	for i, v := range logp {
		answer.Rows[i] = ScoredRow{LogDensity: v, Score: -v}
	}
	return answer, nil
}

// answerSamples is the samples the run drew and wrote back on the data's
// scale (train-vectors' samples.csv of the method).
func (m *RowModel) answerSamples() (string, []byte, error) {
	raw, err := os.ReadFile(filepath.Join(m.o.Run, m.model.Method, "samples.csv"))
	return "text/csv", raw, err
}

// decodeRows reads a RowsRequest: 1 to maxRows rows of dim numbers each.
// The errors name the row and column at fault.
func decodeRows(r *http.Request, dim, maxRows int) ([]float64, int, error) {
	if t := mediaType(r); t != "application/json" {
		return nil, 0, refused(http.StatusUnsupportedMediaType, "content type %q: want application/json, {\"rows\": [[...], ...]}", r.Header.Get("Content-Type"))
	}
	var req RowsRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if tooLarge(err) {
			return nil, 0, bodyTooLarge(err)
		}
		return nil, 0, refused(http.StatusBadRequest, "malformed JSON (want {\"rows\": [[...], ...]}, numbers only: JSON has no NaN or infinity): %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, 0, refused(http.StatusBadRequest, "malformed JSON: more after the request object")
	}
	switch n := len(req.Rows); {
	case n == 0:
		return nil, 0, refused(http.StatusBadRequest, "no rows in the request")
	case n > maxRows:
		return nil, 0, refused(http.StatusRequestEntityTooLarge, "%d rows in one request, more than %d: send them in several", n, maxRows)
	}
	values := make([]float64, 0, len(req.Rows)*dim)
	for i, row := range req.Rows {
		if len(row) != dim {
			return nil, 0, refused(http.StatusUnprocessableEntity, "row %d has %d values, want %d", i+1, len(row), dim)
		}
		for j, v := range row {
			if v == nil {
				return nil, 0, refused(http.StatusUnprocessableEntity, "row %d, column %d: null, want a number", i+1, j+1)
			}
			values = append(values, *v)
		}
	}
	return values, len(req.Rows), nil
}
