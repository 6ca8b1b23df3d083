package densityrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/training"
)

// batchValue is the constant column's value in withConstant's file.
const batchValue = 7.0

// withConstant writes the wine2 file with a column "batch" inserted
// between its two, batchValue in every row but the held-out row offRow
// (by the split of seed 1 and fraction 0.2), which holds batchValue+1. It
// returns the file and the offending row's place among the held-out rows.
func withConstant(t *testing.T, wine2 string) (path string, offHeldOut int) {
	t.Helper()
	all, err := vectors.Read(wine2, vectors.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, test, err := all.Split(0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	offHeldOut = len(test) / 2
	var b strings.Builder
	b.WriteString("alcohol,batch,malic_acid\n")
	for i := range all.N {
		v := batchValue
		if i == test[offHeldOut] {
			v++
		}
		fmt.Fprintf(&b, "%v,%v,%v\n", all.Row(i)[0], v, all.Row(i)[1])
	}
	path = filepath.Join(t.TempDir(), "wine-batch.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, offHeldOut
}

// readRecord reads a run's data record as a JSON object.
func readRecord(t *testing.T, run string) map[string]any {
	t.Helper()
	var rec map[string]any
	raw, err := os.ReadFile(filepath.Join(run, DataFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestConstantColumnIsSetAside trains ED on wine's two columns with a
// constant third between them, and the same run on the two columns
// alone: the split, standardisation, batches, noise, AIS and sampling of
// two varying columns are the same, so the held-out log-likelihood,
// log Z and the samples' varying columns must be the same too, as they
// would not be were the constant column modelled (a third dimension of
// the network's input, the AIS and the samples). It checks the data
// record, the results, the samples written back with the constant in its
// column, and the RowModel: its log-densities those of the two-column
// run's, and a row off the constant refused, naming row and column.
func TestConstantColumnIsSetAside(t *testing.T) {
	two := wine2(t)
	three, offHeldOut := withConstant(t, two)
	runs := map[string]string{"constant": t.TempDir(), "two columns": t.TempDir()}
	results := map[string]Results{}
	for name, data := range map[string]string{"constant": three, "two columns": two} {
		rs, err := Train(quick(data, runs[name], 10))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		results[name] = rs[0]
	}
	got, want := results["constant"], results["two columns"]

	t.Run("data record", func(t *testing.T) {
		var rec dataRecord
		raw, _ := os.ReadFile(filepath.Join(runs["constant"], DataFile))
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		wantSetAside := []ConstantColumn{{Index: 1, Name: "batch", Value: batchValue}}
		if rec.ConstantColumns != ConstantSetAside || !slices.Equal(rec.SetAside, wantSetAside) || rec.D != 3 || len(rec.Standardizer.Mean) != 2 {
			t.Errorf("%s: constant_columns %q, set aside %+v, dim %d, standardiser of %d columns; want %q, %+v, 3 and 2",
				DataFile, rec.ConstantColumns, rec.SetAside, rec.D, len(rec.Standardizer.Mean), ConstantSetAside, wantSetAside)
		}
		if cols := readRecord(t, runs["constant"])["set_aside_columns"]; fmt.Sprint(cols) != "[map[index:1 name:batch value:7]]" {
			t.Errorf("%s: set_aside_columns %v", DataFile, cols)
		}
	})

	t.Run("results", func(t *testing.T) {
		var written Results
		raw, _ := os.ReadFile(filepath.Join(runs["constant"], "ed", ResultsFile))
		if err := json.Unmarshal(raw, &written); err != nil {
			t.Fatal(err)
		}
		for _, r := range []Results{got, written} {
			if r.ModelledColumns != 2 || len(r.SetAside) != 1 || r.SetAside[0].Name != "batch" || r.TestRowsOffConstant != 1 ||
				!strings.Contains(r.LogLikelihoodOf, "the 2 varying columns given the 1 set aside") {
				t.Errorf("results: modelled %d, set aside %+v, held-out rows off the constant %d, log-likelihood of %q",
					r.ModelledColumns, r.SetAside, r.TestRowsOffConstant, r.LogLikelihoodOf)
			}
		}
		if want.ModelledColumns != 2 || want.SetAside != nil || want.LogLikelihoodOf != "all 2 columns" {
			t.Errorf("the two-column run: modelled %d, set aside %+v, %q", want.ModelledColumns, want.SetAside, want.LogLikelihoodOf)
		}
		rows := testutil.ReadCSV(t, filepath.Join(runs["constant"], SummaryFile))
		if c := slices.Index(rows[0], "modelled_columns"); c < 0 || rows[1][c] != "2" {
			t.Errorf("%s: %v, want modelled_columns 2", SummaryFile, rows)
		}
	})

	t.Run("log-likelihood of the varying columns", func(t *testing.T) {
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"held-out log-likelihood", got.TestLogLikelihood, want.TestLogLikelihood},
			{"training log-likelihood", got.TrainLogLikelihood, want.TrainLogLikelihood},
			{"log Z", got.LogZ, want.LogZ},
		} {
			if math.Abs(c.got-c.want) > 1e-6*(1+math.Abs(c.want)) {
				t.Errorf("%s: %v with the constant column set aside, %v without the column", c.name, c.got, c.want)
			}
		}
	})

	t.Run("samples", func(t *testing.T) {
		s3, err := vectors.Read(filepath.Join(runs["constant"], "ed", "samples.csv"), vectors.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s2, err := vectors.Read(filepath.Join(runs["two columns"], "ed", "samples.csv"), vectors.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s3.N != 64 || s3.D != 3 || !slices.Equal(s3.Columns, []string{"alcohol", "batch", "malic_acid"}) {
			t.Fatalf("samples: %d rows of %d columns %v, want 64 of alcohol, batch, malic_acid", s3.N, s3.D, s3.Columns)
		}
		for i := range s3.N {
			r3, r2 := s3.Row(i), s2.Row(i)
			if r3[1] != batchValue || math.Abs(r3[0]-r2[0]) > 1e-6*math.Abs(r2[0]) || math.Abs(r3[2]-r2[1]) > 1e-6*(1+math.Abs(r2[1])) {
				t.Fatalf("sample %d: %v, want batch %v and the two-column run's %v around it", i, r3, batchValue, r2)
			}
		}
	})

	t.Run("RowModel", func(t *testing.T) {
		m3, err := OpenRowModel(testutil.Backend(), runs["constant"], "ed")
		if err != nil {
			t.Fatal(err)
		}
		m2, err := OpenRowModel(testutil.Backend(), runs["two columns"], "ed")
		if err != nil {
			t.Fatal(err)
		}
		if m3.Dim != 3 || len(m3.SetAside) != 1 || !slices.Equal(m3.Columns, []string{"alcohol", "batch", "malic_acid"}) {
			t.Errorf("RowModel: dim %d, set aside %+v, columns %v; want 3, batch, the file's", m3.Dim, m3.SetAside, m3.Columns)
		}
		var rec dataRecord
		raw, _ := os.ReadFile(filepath.Join(runs["constant"], DataFile))
		json.Unmarshal(raw, &rec)
		all, _ := vectors.Read(three, vectors.ReadOptions{})
		heldOut := all.Subset(rec.Test)
		_, err = m3.LogDensities(heldOut.Values)
		for _, part := range []string{fmt.Sprintf("row %d,", offHeldOut+1), `column "batch"`, ": 8,", "held 7"} {
			if err == nil || !strings.Contains(err.Error(), part) {
				t.Errorf("a held-out row off the constant: error %v, want one saying %q", err, part)
			}
		}
		heldOut.Row(offHeldOut)[1] = batchValue
		logp3, err := m3.LogDensities(heldOut.Values)
		if err != nil {
			t.Fatal(err)
		}
		logp2, err := m2.LogDensities(selectColumns(heldOut, []int{0, 2}).Values)
		if err != nil {
			t.Fatal(err)
		}
		testutil.AssertAllClose(t, "log-densities of the held-out rows, against the two-column run's", logp3, logp2, 1e-9)
		if mean := (func() (s float64) {
			for _, v := range logp3 {
				s += v / float64(len(logp3))
			}
			return s
		})(); math.Abs(mean-got.TestLogLikelihood) > 1e-6*(1+math.Abs(mean)) {
			t.Errorf("RowModel's mean log-density of the held-out rows %v, the run's held-out log-likelihood %v", mean, got.TestLogLikelihood)
		}
		if c := m3.Center(); len(c) != 3 || c[1] != batchValue || m3.CheckRows(c) != nil {
			t.Errorf("Center %v: want 3 values, batch %v, a row CheckRows accepts", c, batchValue)
		}
		// Unnamed columns are named by their number from 1.
		if s := (ConstantColumn{Index: 4, Value: 0}).String(); s != "column 5" {
			t.Errorf("an unnamed column: %q, want column 5", s)
		}
	})
}

// TestConstantColumnsModelled: -constant-columns model trains on every
// column, as runs did before; so does a run whose data record was
// written before constant columns were set aside (no constant_columns
// field), resumed with the default options: it loads, continues from its
// checkpoint, and its RowModel scores a row off the constant.
func TestConstantColumnsModelled(t *testing.T) {
	three, _ := withConstant(t, wine2(t))
	run := t.TempDir()
	stop := make(chan os.Signal, 1)
	stop <- os.Interrupt
	o := quick(three, run, 10)
	o.ConstantColumns, o.Stop = ConstantModel, stop
	if _, err := Train(o); !errors.Is(err, training.ErrStopped) {
		t.Fatalf("a stopped run: error %v, want ErrStopped", err)
	}
	rec := readRecord(t, run)
	if rec["constant_columns"] != ConstantModel || rec["set_aside_columns"] != nil || len(rec["standardizer"].(map[string]any)["mean"].([]any)) != 3 {
		t.Errorf("%s of a run modelling its constant column: %v", DataFile, rec)
	}
	// The record as it was written before constant columns were set aside.
	delete(rec, "constant_columns")
	if keys := slices.Sorted(maps.Keys(rec)); !slices.Equal(keys, []string{"dim", "file", "read", "rows", "seed", "standardizer", "test_fraction", "test_rows", "train_rows", "version"}) {
		t.Fatalf("%s's fields %v, want the old record's", DataFile, keys)
	}
	raw, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(run, DataFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	results, err := Train(quick("", run, 10)) // the default options: set-aside
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Step != 10 || r.ModelledColumns != 3 || r.SetAside != nil || r.LogLikelihoodOf != "all 3 columns" {
		t.Errorf("the old run resumed: step %d, modelled %d, set aside %+v, %q; want 10, all 3 columns", r.Step, r.ModelledColumns, r.SetAside, r.LogLikelihoodOf)
	}
	if n := len(readLoggedLosses(t, run)); n != 10 {
		t.Errorf("the old run logged %d steps, want 10 (1 before the stop, 9 resumed)", n)
	}
	m, err := OpenRowModel(testutil.Backend(), run, "ed")
	if err != nil {
		t.Fatal(err)
	}
	if logp, err := m.LogDensities([]float64{13, batchValue + 1, 2}); err != nil || m.SetAside != nil || len(logp) != 1 {
		t.Errorf("the old run's RowModel: set aside %+v, a row off the constant: %v, %v; want it scored", m.SetAside, logp, err)
	}
	samples, err := vectors.Read(filepath.Join(run, "ed", "samples.csv"), vectors.ReadOptions{})
	if err != nil || samples.D != 3 {
		t.Fatalf("samples of the old run: %v, %v", samples, err)
	}
}

// TestColumnsNote: what the run prints about its constant columns.
func TestColumnsNote(t *testing.T) {
	train := &vectors.Set{N: 2, D: 3, Values: []float64{1, 0, 5, 2, 0, 6}, Columns: []string{"a", "b", "c"}}
	b := []ConstantColumn{{Index: 1, Name: "b", Value: 0}}
	for _, tc := range []struct {
		name   string
		rec    dataRecord
		asked  string
		want   []string
		absent string
	}{
		{"set aside", dataRecord{ConstantColumns: ConstantSetAside, SetAside: b}, ConstantSetAside,
			[]string{`column "b" = 0`, "the other 2 columns given these"}, "WARNING"},
		{"modelled", dataRecord{ConstantColumns: ConstantModel}, ConstantModel,
			[]string{`WARNING: modelled though they hold one value in every training row: column "b" = 0`, `"set-aside", the default for a new run, sets them aside`}, "the run's own"},
		{"an old run resumed", dataRecord{}, ConstantSetAside,
			[]string{`constant columns: "model", the run's own (recorded before constant columns were set aside), not "set-aside"`, "WARNING"}, "given these"},
		{"a resumed run keeps its choice", dataRecord{ConstantColumns: ConstantSetAside, SetAside: b}, ConstantModel,
			[]string{`constant columns: "set-aside", the run's own (as when it started), not "model"`}, "WARNING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rec.D = 3
			d := &runData{record: tc.rec, train: train, dim: 3 - len(tc.rec.SetAside)}
			note := d.columnsNote(tc.asked)
			for _, w := range tc.want {
				if !strings.Contains(note, w) {
					t.Errorf("note %q, want it to say %q", note, w)
				}
			}
			if strings.Contains(note, tc.absent) {
				t.Errorf("note %q says %q", note, tc.absent)
			}
		})
	}
}
