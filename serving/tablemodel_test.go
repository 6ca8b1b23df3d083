package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/nets"
)

// tableRun trains med briefly on a table of a number (size), a kind (a,
// b, c: the target) and a colour that follows the kind, as train-table
// does, and returns the run folder, its results and its held-out rows as
// CSV records under their header.
func tableRun(t *testing.T) (run string, results densityrun.TableResults, header []string, heldOut [][]string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	b.WriteString("size,kind,colour\n")
	for range 600 {
		k := rng.IntN(3)
		colour := []string{"red", "green", "blue"}[k]
		if rng.Float64() < 0.2 {
			colour = []string{"red", "green", "blue"}[rng.IntN(3)]
		}
		fmt.Fprintf(&b, "%.3f,%c,%s\n", float64(k)+0.4*rng.NormFloat64(), 'a'+k, colour)
	}
	data := filepath.Join(t.TempDir(), "kinds.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run = t.TempDir()
	rs, err := densityrun.TrainTable(densityrun.TableOptions{NoAIS: true, Data: data, Out: run, Backend: testutil.BackendName(), Methods: []string{"med"}, Target: "kind",
		Model: func(c *density.Config) error {
			c.MLP = nets.MLPConfig{Hidden: []int{16, 16}, Activation: "softplus"}
			c.LearningRate = 1e-2
			return nil
		},
		Steps: 400, Batch: 64, Samples: 8, Sweeps: 2})
	if err != nil {
		t.Fatal(err)
	}
	scores := testutil.ReadCSV(t, filepath.Join(run, "med", densityrun.ScoresFile))
	header = scores[0][3:] // rank, row, energy, then the columns
	for _, row := range scores[1:] {
		heldOut = append(heldOut, row[3:])
	}
	return run, rs[0], header, heldOut
}

// csvBody is records under header as a CSV file.
func csvBody(header []string, records [][]string) string {
	var b strings.Builder
	b.WriteString(strings.Join(header, ",") + "\n")
	for _, r := range records {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	return b.String()
}

// TestServiceScoresTableRows serves a train-table run: the held-out rows
// sent as CSV in requests of up to 4, concurrently so that batches mix
// requests, get the energies whose mean is the run's held-out energy and
// the p-values, probabilities and predictions densityrun.TableModel gives
// them alone; the same rows as JSON objects (columns in another order, an
// extra field) get the same answers; then every kind of bad request, each
// with its status and the service still answering; /v1/info and
// /v1/samples.
func TestServiceScoresTableRows(t *testing.T) {
	run, results, header, heldOut := tableRun(t)
	o := Options{}
	o.Run, o.Backend, o.BatchSizes = run, testutil.BackendName(), testSizes
	model, err := Open(o.ModelOptions)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := model.(*TableModel); !ok {
		t.Fatalf("Open gave a %T for a train-table run", model)
	}
	h, err := NewHandler(model, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPTestServer(t, h, model)

	b, _, err := backend.Open(testutil.BackendName())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	direct, err := densityrun.OpenTableModel(b, run, "med")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]ScoredTableRow, len(heldOut))
	for i, rec := range heldOut {
		tab, err := direct.Schema.ParseRows("a row", header, [][]string{rec}, table.Options{})
		if err != nil {
			t.Fatal(err)
		}
		encoded, _ := direct.Encode(tab)
		e, p, err := direct.Score(encoded)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = ScoredTableRow{Energy: e[0], PValue: direct.PValue(e[0]), TargetProbabilities: map[string]float64{}}
		for c, name := range direct.TargetCategories {
			want[i].TargetProbabilities[name] = p[c]
			if p[c] == slices.Max(p) {
				want[i].Predicted = name
			}
		}
	}
	check := func(how string, from int, got []ScoredTableRow) {
		for j, g := range got {
			w := want[from+j]
			same := math.Abs(g.Energy-w.Energy) <= 1e-5*(1+math.Abs(w.Energy)) && math.Abs(g.PValue-w.PValue) <= 1.5/float64(len(heldOut)+1) && g.Predicted == w.Predicted
			for c, p := range w.TargetProbabilities {
				same = same && math.Abs(g.TargetProbabilities[c]-p) <= 1e-5
			}
			if !same {
				t.Errorf("%s: held-out row %d: %+v; alone %+v", how, from+j+1, g, w)
			}
		}
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var sum float64
	for from, size := 0, 1; from < len(heldOut); from, size = from+size, size%4+1 {
		to := min(from+size, len(heldOut))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var answer TableAnswer
			if code := post(t, srv, "/v1/score", "text/csv", strings.NewReader(csvBody(header, heldOut[from:to])), nil, &answer); code != http.StatusOK || len(answer.Rows) != to-from || answer.Target != "kind" {
				t.Errorf("rows %d…%d: status %d, %d rows, target %q", from+1, to, code, len(answer.Rows), answer.Target)
				return
			}
			check("CSV", from, answer.Rows)
			mu.Lock()
			for _, r := range answer.Rows {
				sum += r.Energy
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if mean := sum / float64(len(heldOut)); math.Abs(mean-results.TestEnergy) > 1e-5*(1+math.Abs(mean)) {
		t.Errorf("mean held-out energy %.8g through the service, the run's %.8g", mean, results.TestEnergy)
	}

	objects := make([]map[string]any, 4)
	for i := range objects {
		objects[i] = map[string]any{"id": i}
		for j, name := range header {
			objects[i][name] = heldOut[i][j]
		}
	}
	objects[0]["size"] = json.Number(heldOut[0][slices.Index(header, "size")]) // a number as a number
	raw, _ := json.Marshal(map[string]any{"rows": objects})
	var answer TableAnswer
	if code := post(t, srv, "/v1/score", "application/json", strings.NewReader(string(raw)), nil, &answer); code != http.StatusOK {
		t.Fatalf("JSON rows: status %d", code)
	}
	check("JSON", 0, answer.Rows)
	unseenRows(t, srv, header, heldOut, check)
	// Every row so far counted once by outcome: the held-out rows, the four
	// JSON ones, the four of unseenRows (two unseen, one colour, one kind).
	metrics := getBody(t, srv, "/metrics")
	for _, want := range []string{
		fmt.Sprintf(`edlebm_table_rows_total{outcome="scored"} %d`, len(heldOut)+8),
		`edlebm_table_rows_total{outcome="unseen"} 2`,
		`edlebm_table_unseen_categories_total{column="colour"} 1`,
		`edlebm_table_unseen_categories_total{column="kind"} 1`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	_, after, _ := strings.Cut(metrics, `edlebm_table_rows_total{outcome="flagged"} `)
	if flagged, err := strconv.Atoi(strings.Fields(after + " x")[0]); err != nil || flagged < 2 || flagged > len(heldOut)+8 {
		t.Errorf("/metrics: %d rows flagged (%v); want the two unseen rows at p = 1/121 at least", flagged, err)
	}

	good := `{"rows": [{"size": 1.2, "kind": "b", "colour": "green"}]}`
	cases := []struct {
		name, contentType, body string
		code                    int
		says                    string
	}{
		{"an unseen category", "application/json", `{"rows": [{"size": 1.2, "kind": "b", "colour": "green"}, {"size": 1.2, "kind": "b", "colour": "pink"}]}`, http.StatusUnprocessableEntity, `the request, row 2, column 3 (colour): table: column "colour": category "pink" was not in the training rows (blue, green, red) (or rank such rows first: ?unseen=anomalous)`},
		{"an unknown unseen policy", "application/json", good, http.StatusBadRequest, `?unseen="skip": want "error"`},
		{"a word among numbers", "text/csv", "size,kind,colour\nbig,b,green\n", http.StatusUnprocessableEntity, `row 1, column 1 (size): "big": want a finite number`},
		{"a missing column", "application/json", `{"rows": [{"size": 1.2, "kind": "b"}]}`, http.StatusUnprocessableEntity, `row 1 lacks the column "colour"`},
		{"a missing column in CSV", "text/csv", "size,kind\n1.2,b\n", http.StatusUnprocessableEntity, `lacks the model's columns ["colour"]`},
		{"a sentinel far past the rows", "text/csv", "size,kind,colour\n1,b,green\n9.9e99,b,green\n", http.StatusUnprocessableEntity, `the request, row 2, column "size": 9.9e+99 is`},
		{"spaces after the commas", "text/csv", "size, kind, colour\n1.2, b, pink\n", http.StatusUnprocessableEntity, `category "pink"`},
		{"null", "application/json", `{"rows": [{"size": null, "kind": "b", "colour": "green"}]}`, http.StatusUnprocessableEntity, `row 1, column "size": null`},
		{"a boolean", "application/json", `{"rows": [{"size": 1, "kind": true, "colour": "green"}]}`, http.StatusUnprocessableEntity, `row 1, column "kind": true: want a string or a number`},
		{"a missing value", "text/csv", "size,kind,colour\nNA,b,green\n", http.StatusUnprocessableEntity, `a missing value "NA"`},
		{"a short CSV row", "text/csv", "size,kind,colour\n1.2,b\n", http.StatusBadRequest, "malformed CSV"},
		{"no rows", "text/csv", "size,kind,colour\n", http.StatusBadRequest, "no rows"},
		{"an empty CSV", "text/csv", "", http.StatusBadRequest, "no header"},
		{"more rows than the largest batch", "text/csv", csvBody(header, heldOut[:5]), http.StatusRequestEntityTooLarge, "more than 4"},
		{"an unknown field", "application/json", `{"row": []}`, http.StatusBadRequest, "unknown field"},
		{"images", "image/png", "\x89PNG", http.StatusUnsupportedMediaType, "want application/json"},
	}
	for _, c := range cases {
		var answer ErrorAnswer
		path := "/v1/score"
		if strings.Contains(c.name, "policy") {
			path += "?unseen=skip"
		}
		if code := post(t, srv, path, c.contentType, strings.NewReader(c.body), nil, &answer); code != c.code || !strings.Contains(answer.Error, c.says) {
			t.Errorf("%s: status %d %q; want %d saying %q", c.name, code, answer.Error, c.code, c.says)
		}
		if code := post(t, srv, "/v1/score", "application/json", strings.NewReader(good), nil, nil); code != http.StatusOK {
			t.Errorf("%s: a good request after it: status %d", c.name, code)
		}
	}

	var info Info
	get := func(path string) (*http.Response, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	_, body := get("/v1/info")
	if err := json.Unmarshal([]byte(body), &info); err != nil || info.Kind != "table" || info.Method != "med" || info.Target != "kind" ||
		info.HeldOut != len(heldOut) || info.Schema == nil || !slices.Equal(info.Columns, header) || info.Schema.Columns[1].Kind != table.Categorical {
		t.Errorf("info %+v (%v)", info, err)
	}
	resp, body := get("/v1/samples")
	if resp.Header.Get("Content-Type") != "text/csv" || !strings.HasPrefix(body, strings.Join(header, ",")+"\n") || strings.Count(body, "\n") != 9 {
		t.Errorf("samples: %s, %q; want train-table's 8 rows under the header", resp.Header.Get("Content-Type"), body)
	}
	if _, err := model.(*TableModel).Score(context.Background(), &table.Table{Schema: direct.Schema, N: 0}); err == nil {
		t.Error("scoring no rows: no error")
	}
}

// unseenRows sends, with ?unseen=anomalous, two held-out rows around one of
// a colour and one of a kind training never saw: those two come back at
// energy +Inf (null in the JSON), the least p-value 1/(1 + held-out rows),
// no prediction, their words by column; the others as scored alone
// (check).
func unseenRows(t *testing.T, srv *httptest.Server, header []string, heldOut [][]string, check func(string, int, []ScoredTableRow)) {
	t.Helper()
	pink, kindZ := slices.Clone(heldOut[2]), slices.Clone(heldOut[2])
	pink[slices.Index(header, "colour")], kindZ[slices.Index(header, "kind")] = "pink", "z"
	body := csvBody(header, [][]string{heldOut[0], pink, kindZ, heldOut[1]})
	var raw json.RawMessage
	if code := post(t, srv, "/v1/score?unseen=anomalous", "text/csv", strings.NewReader(body), nil, &raw); code != http.StatusOK {
		t.Fatalf("?unseen=anomalous: status %d: %s", code, raw)
	}
	var answer TableAnswer
	if err := json.Unmarshal(raw, &answer); err != nil || len(answer.Rows) != 4 {
		t.Fatalf("?unseen=anomalous: %v, %s", err, raw)
	}
	if n := strings.Count(string(raw), `"energy":null`); n != 2 {
		t.Errorf("%d null energies in %s; want the two unseen rows'", n, raw)
	}
	check("?unseen=anomalous", 0, answer.Rows[:1])
	check("?unseen=anomalous", 1, answer.Rows[3:])
	least := 1 / float64(1+len(heldOut))
	for j, want := range []map[string]string{{"colour": "pink"}, {"kind": "z"}} {
		r := answer.Rows[1+j]
		if !math.IsInf(r.Energy, 1) || math.Abs(r.PValue-least) > 1e-12 || r.Predicted != "" || r.TargetProbabilities != nil || r.LogDensity != nil || !maps.Equal(r.Unseen, want) {
			t.Errorf("unseen row %d: %+v; want energy +Inf, p-value %.4g, unseen %v, nothing else", j+1, r, least, want)
		}
	}
}

// getBody is the body of a GET of path.
func getBody(t *testing.T, srv *httptest.Server, path string) string {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
