package serving

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/sampling"
)

// vectorRun trains ED briefly on three columns of scikit-learn's wine data
// (Debian's python3-sklearn) as train-vectors does, and returns the run
// folder, its results and its held-out rows.
func vectorRun(t *testing.T) (run string, results densityrun.Results, heldOut *vectors.Set) {
	t.Helper()
	all, err := vectors.Read("/usr/lib/python3/dist-packages/sklearn/datasets/data/wine_data.csv", vectors.ReadOptions{SkipRows: 1, Label: "last"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("alcohol,malic_acid,ash\n")
	for i := range all.N {
		fmt.Fprintf(&b, "%v,%v,%v\n", all.Row(i)[0], all.Row(i)[1], all.Row(i)[2])
	}
	data := filepath.Join(t.TempDir(), "wine3.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run = t.TempDir()
	rs, err := densityrun.Train(densityrun.Options{Data: data, Out: run, Backend: testutil.BackendName(), Methods: []string{"ed"},
		Model: func(c *density.Config) error { c.MLP.Hidden = []int{16}; return nil },
		Steps: 20, Batch: 32, Samples: 16, SampleSteps: 10,
		AIS: sampling.AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 64, Temperatures: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Test []int `json:"test_rows"`
	}
	raw, _ := os.ReadFile(filepath.Join(run, densityrun.DataFile))
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	three, err := vectors.Read(data, vectors.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return run, rs[0], three.Subset(rec.Test)
}

// TestServiceScoresRowsAsTrainVectors sends a train-vectors run's held-out
// rows in requests of up to 4 and checks that the mean of their
// log-densities is the held-out log-likelihood the run measured; then
// every kind of bad request, each with its status and the service still
// answering.
func TestServiceScoresRowsAsTrainVectors(t *testing.T) {
	run, results, heldOut := vectorRun(t)
	o := Options{}
	o.Run, o.Backend, o.BatchSizes = run, testutil.BackendName(), testSizes
	model, err := Open(o.ModelOptions)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(model, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPTestServer(t, h, model)
	rowsJSON := func(from, to int) string {
		var rows [][]float64
		for i := from; i < to; i++ {
			rows = append(rows, heldOut.Row(i))
		}
		raw, _ := json.Marshal(map[string]any{"rows": rows})
		return string(raw)
	}
	var sum float64
	for from := 0; from < heldOut.N; from += 4 {
		var answer RowsAnswer
		if code := post(t, srv, "/v1/score", "application/json", strings.NewReader(rowsJSON(from, min(from+4, heldOut.N))), nil, &answer); code != http.StatusOK {
			t.Fatalf("rows %d…: status %d", from, code)
		}
		for _, r := range answer.Rows {
			sum += r.LogDensity
			if r.Score != -r.LogDensity {
				t.Errorf("score %v, log-density %v: want opposites", r.Score, r.LogDensity)
			}
		}
	}
	if mean := sum / float64(heldOut.N); math.Abs(mean-results.TestLogLikelihood) > 1e-9*(1+math.Abs(mean)) {
		t.Errorf("mean held-out log-density %.12g, the run's held-out log-likelihood %.12g", mean, results.TestLogLikelihood)
	}

	cases := []struct {
		name, contentType, body string
		code                    int
		says                    string
	}{
		{"a row of 2 values", "application/json", `{"rows": [[1, 2]]}`, http.StatusUnprocessableEntity, "row 1 has 2 values, want 3"},
		{"null in a row", "application/json", `{"rows": [[13, 2, 2.4], [13, null, 2.4]]}`, http.StatusUnprocessableEntity, "row 2, column 2: null"},
		{"NaN in a row", "application/json", `{"rows": [[13, NaN, 2.4]]}`, http.StatusBadRequest, "no NaN"},
		{"a number too large for float64", "application/json", `{"rows": [[13, 1e999, 2.4]]}`, http.StatusBadRequest, "malformed JSON"},
		{"a sentinel far past the rows", "application/json", `{"rows": [[13, 2, 2.4], [13, 9.9e99, 2.4]]}`, http.StatusUnprocessableEntity, "row 2, column 2: 9.9e+99 is"},
		{"more rows than the largest batch", "application/json", rowsJSON(0, 5), http.StatusRequestEntityTooLarge, "more than 4"},
		{"no rows", "application/json", `{"rows": []}`, http.StatusBadRequest, "no rows"},
		{"an unknown field", "application/json", `{"row": [[1, 2, 3]]}`, http.StatusBadRequest, "unknown field"},
		{"two objects", "application/json", `{"rows": [[13, 2, 2.4]]} {}`, http.StatusBadRequest, "more after"},
		{"CSV", "text/csv", "13,2,2.4\n", http.StatusUnsupportedMediaType, "want application/json"},
	}
	for _, c := range cases {
		var answer ErrorAnswer
		if code := post(t, srv, "/v1/score", c.contentType, strings.NewReader(c.body), nil, &answer); code != c.code || !strings.Contains(answer.Error, c.says) {
			t.Errorf("%s: status %d %q; want %d saying %q", c.name, code, answer.Error, c.code, c.says)
		}
		if code := post(t, srv, "/v1/score", "application/json", strings.NewReader(rowsJSON(0, 1)), nil, nil); code != http.StatusOK {
			t.Errorf("%s: a good request after it: status %d", c.name, code)
		}
	}
	var info Info
	resp, err := srv.Client().Get(srv.URL + "/v1/info")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || info.Kind != "rows" || info.Dim != 3 || info.Method != "ed" || info.Columns[2] != "ash" || info.LogZ != results.LogZ {
		t.Errorf("info %+v (%v)", info, err)
	}
}

// TestServiceRowsWithAConstantColumn serves a train-vectors run whose
// file has a constant column ("batch", 7 in every row), which the run set
// aside: the service warms up with rows it accepts, scores rows holding 7
// there as the run's RowModel does, refuses a row holding another value
// with 422 naming the row, the column and both values (and still answers
// after it), and lists the column in /v1/info.
func TestServiceRowsWithAConstantColumn(t *testing.T) {
	all, err := vectors.Read("/usr/lib/python3/dist-packages/sklearn/datasets/data/wine_data.csv", vectors.ReadOptions{SkipRows: 1, Label: "last"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("alcohol,batch,malic_acid\n")
	for i := range all.N {
		fmt.Fprintf(&b, "%v,7,%v\n", all.Row(i)[0], all.Row(i)[1])
	}
	data := filepath.Join(t.TempDir(), "wine-batch.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	if _, err := densityrun.Train(densityrun.Options{Data: data, Out: run, Backend: testutil.BackendName(), Methods: []string{"ed"},
		Model: func(c *density.Config) error { c.MLP.Hidden = []int{16}; return nil },
		Steps: 10, Batch: 32, Samples: 16, SampleSteps: 10,
		AIS: sampling.AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 64, Temperatures: 100}}}); err != nil {
		t.Fatal(err)
	}
	o := Options{}
	o.Run, o.Backend, o.BatchSizes = run, testutil.BackendName(), testSizes
	model, err := Open(o.ModelOptions)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.(*RowModel).Warm(); err != nil {
		t.Fatalf("warming up: %v", err)
	}
	h, err := NewHandler(model, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPTestServer(t, h, model)
	rows := []float64{13, 7, 2, 12.5, 7, 3.1}
	want, err := model.(*RowModel).model.LogDensities(rows)
	if err != nil {
		t.Fatal(err)
	}
	var answer RowsAnswer
	if code := post(t, srv, "/v1/score", "application/json", strings.NewReader(`{"rows": [[13, 7, 2], [12.5, 7, 3.1]]}`), nil, &answer); code != http.StatusOK ||
		len(answer.Rows) != 2 || answer.Rows[0].LogDensity != want[0] || answer.Rows[1].LogDensity != want[1] {
		t.Errorf("rows holding the constant: status %d, %+v; want 200 and %v", code, answer, want)
	}
	var refusal ErrorAnswer
	if code := post(t, srv, "/v1/score", "application/json", strings.NewReader(`{"rows": [[13, 7, 2], [12.5, 8, 3.1]]}`), nil, &refusal); code != http.StatusUnprocessableEntity ||
		!strings.Contains(refusal.Error, `row 2, column "batch": 8, but every training row held 7`) {
		t.Errorf("a row off the constant: status %d %q; want 422 naming row 2, column batch, 8 and 7", code, refusal.Error)
	}
	if code := post(t, srv, "/v1/score", "application/json", strings.NewReader(`{"rows": [[13, 7, 2]]}`), nil, nil); code != http.StatusOK {
		t.Errorf("a good request after it: status %d", code)
	}
	var info Info
	resp, err := srv.Client().Get(srv.URL + "/v1/info")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || info.Dim != 3 || len(info.SetAside) != 1 || info.SetAside[0].Name != "batch" || info.SetAside[0].Value != 7 {
		t.Errorf("info %+v (%v): want dim 3 and batch = 7 set aside", info, err)
	}
}
