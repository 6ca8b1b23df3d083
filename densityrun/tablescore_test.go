package densityrun

import (
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
)

// naiveAveragePrecision is the AUPRC of a ranking, anomalies first at
// best: the mean, over the anomalies, of the precision at each one's rank.
func naiveAveragePrecision(anomalous []bool) float64 {
	var found, total, sum float64
	for _, a := range anomalous {
		if a {
			total++
		}
	}
	for i, a := range anomalous {
		if a {
			found++
			sum += found / float64(i+1)
		}
	}
	return sum / total
}

// TestScoreTableRanksNewRowsAsTraining trains med briefly on the mixed
// table, then scores a new file — the held-out rows as the data file has
// them, in another column order with an id and a label, plus rows of a
// size the table never has — and checks: each held-out row's energy equals
// train-table's for the same row (two encodings of one row: the reader's
// and ReadRows'); the ranking is by energy; the AUPRC equals a naive
// average precision over scores.csv's order, and finds the far rows; a
// category or a label column training never saw is refused by name, or
// the row ranked first when asked (checkUnseenRanksFirst).
func TestScoreTableRanksNewRowsAsTraining(t *testing.T) {
	data, _ := mixedCSV(t)
	run := t.TempDir()
	o := TableOptions{NoAIS: true, Data: data, Out: run, Backend: testutil.BackendName(), Methods: []string{"med"}, Target: "kind",
		Model: func(c *density.Config) error {
			c.MLP = nets.MLPConfig{Hidden: []int{32, 32}, Activation: "softplus"}
			c.LearningRate, c.ED = 1e-2, losses.EDConfig{T: 0.05, M: 16, W: 1}
			return nil
		},
		Steps: 150, Batch: 128, CheckpointEvery: 150, Samples: 10, Sweeps: 10}
	results, err := TrainTable(o)
	if err != nil {
		t.Fatal(err)
	}
	var rec tableRecord
	if err := readJSON(filepath.Join(run, TableFile), &rec); err != nil {
		t.Fatal(err)
	}
	lines := testutil.ReadCSV(t, data) // header, then rows: size, kind
	var b strings.Builder
	b.WriteString("id,kind,odd,size\n")
	for _, i := range rec.Test {
		fmt.Fprintf(&b, "r%d,%s,no,%s\n", i+1, lines[i+1][1], lines[i+1][0])
	}
	for k := range 20 {
		fmt.Fprintf(&b, "far%d,%s,yes,%.2f\n", k, string(rune('a'+k%3)), 6+0.1*float64(k))
	}
	newRows := filepath.Join(t.TempDir(), "new.csv.gz")
	f, err := os.Create(newRows)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	gz.Write([]byte(b.String()))
	if err := errors.Join(gz.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}

	r, err := ScoreTable(TableScoreOptions{Run: run, Data: newRows, Label: "odd", Anomalies: []string{"yes"}, Backend: testutil.BackendName()})
	if err != nil {
		t.Fatal(err)
	}
	if r.N != len(rec.Test)+20 || r.Anomalies != 20 || r.HeldOut != len(rec.Test) || r.Out != filepath.Join(run, "med", "scores-new") {
		t.Errorf("report %+v", r)
	}
	if len(r.ColumnFits) != 2 || r.ColumnFits[0].Column != "size" || len(r.ColumnFits[0].Deciles) != 10 || r.ColumnFits[1].Column != "kind" {
		t.Errorf("column fits %+v, want size's and kind's", r.ColumnFits)
	}
	trained := map[string]float64{} // train-table's held-out energies by line
	for _, row := range testutil.ReadCSV(t, filepath.Join(run, "med", ScoresFile))[1:] {
		trained[row[1]], _ = strconv.ParseFloat(row[2], 64)
	}
	scored := testutil.ReadCSV(t, filepath.Join(r.Out, ScoresFile))
	if got := strings.Join(scored[0], ","); got != "rank,line,energy,p_value,predicted_kind,predicted_probability,size,kind,odd" {
		t.Fatalf("header %s", got)
	}
	var anomalous []bool
	prev, prevP, flagged, right := math.Inf(1), 0.0, 0, 0.0
	for _, row := range scored[1:] {
		line, _ := strconv.Atoi(row[1])
		e, _ := strconv.ParseFloat(row[2], 64)
		p, _ := strconv.ParseFloat(row[3], 64)
		if e > prev || p < prevP {
			t.Errorf("line %d: energy %v, p-value %v ranked below %v, %v", line, e, p, prev, prevP)
		}
		prev, prevP = e, p
		if p <= FlagLevel {
			flagged++
		}
		if row[8] == "yes" && math.Abs(p-1/float64(len(rec.Test)+1)) > 1e-6 {
			t.Errorf("line %d, a row of a size the table never has: p-value %v, want 1/%d", line, p, len(rec.Test)+1)
		}
		if row[8] == "no" && row[4] == row[7] {
			right++
		}
		anomalous = append(anomalous, row[8] == "yes")
		if line-2 < len(rec.Test) {
			want := trained[strconv.Itoa(rec.Test[line-2]+2)] // data row i on line i+2
			if math.Abs(e-want) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("line %d (data line %d): energy %v, train-table's %v", line, rec.Test[line-2]+2, e, want)
			}
		}
	}
	// The predictions of the held-out rows score train-table's accuracy.
	if acc := right / float64(len(rec.Test)); math.Abs(acc-results[0].TargetAccuracy) > 1e-9 {
		t.Errorf("predicted kinds right on %.4f of the held-out rows, train-table's accuracy %.4f", acc, results[0].TargetAccuracy)
	}
	if flagged != r.Flagged || flagged < 20 {
		t.Errorf("report: %d rows flagged; the file has %d at p ≤ %v, 20 of them far rows", r.Flagged, flagged, FlagLevel)
	}
	if naive := naiveAveragePrecision(anomalous); math.Abs(r.AUPRC-naive) > 1e-12 || r.AUPRC < 0.9 || r.AUPRCInterval.Lo > r.AUPRC || r.AUPRCInterval.Hi < r.AUPRC {
		t.Errorf("AUPRC %v (interval %+v), naive average precision %v; want equal and ≥ 0.9", r.AUPRC, r.AUPRCInterval, naive)
	}

	checkUnseenRanksFirst(t, run, rec.Test, lines, trained)

	for _, tc := range []struct {
		text string
		o    TableScoreOptions
		want string
	}{
		{"size,kind\n0.5,a\n0.1,d\n", TableScoreOptions{}, `line 3, column 2 (kind): table: column "kind": category "d" was not in the training rows (a, b, c) (or rank such rows first: Options.Unseen "anomalous")`},
		{"size,kind\n0.5,a\n", TableScoreOptions{Read: table.Options{Unseen: "skip"}}, `Options.Unseen "skip"`},
		{"size,kind\n0.5,a\n", TableScoreOptions{Label: "odd", Anomalies: []string{"yes"}}, `Label "odd": not a column of`},
		{"size,kind,odd\n0.5,a,no\n", TableScoreOptions{Label: "odd", Anomalies: []string{"yes"}}, "0 of the 1 rows"},
		{"size,kind\n0.5,a\n", TableScoreOptions{Label: "odd"}, "Anomalies: required"},
		{"size,kind\n0.5,a\n", TableScoreOptions{Method: "ed"}, `Method "ed"`},
		{"size,kind\n0.5,a\n-1e300,b\n", TableScoreOptions{}, `bad.csv, line 3, column "size": -1e+300 is`},
	} {
		p := filepath.Join(t.TempDir(), "bad.csv")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		tc.o.Run, tc.o.Data, tc.o.Backend = run, p, testutil.BackendName()
		if _, err := ScoreTable(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.text, err, tc.want)
		}
	}
}

// checkUnseenRanksFirst scores, with table.UnseenAnomalous, four rows of
// a kind training never saw ahead of the run's held-out rows (test: their
// indices among the data file's rows; trained: train-table's energies by
// the file's line): the four come first with energy +Inf, the least p-value, no
// log-density nor prediction, their own word and "kind=d" in the last
// column; every held-out row keeps train-table's energy; labelled as the
// anomalies they give an AUPRC of 1; and the columns' fits are those of
// the held-out rows alone (the unseen rows, first in the file, left out);
// a file of one unseen row is scored, with no fit.
func checkUnseenRanksFirst(t *testing.T, run string, test []int, lines [][]string, trained map[string]float64) {
	t.Helper()
	var withUnseen, alone strings.Builder
	withUnseen.WriteString("size,kind,odd\n")
	alone.WriteString("size,kind,odd\n")
	for k := range 4 {
		fmt.Fprintf(&withUnseen, "%.1f,d,yes\n", 0.5*float64(k))
	}
	for _, i := range test {
		fmt.Fprintf(&withUnseen, "%s,%s,no\n", lines[i+1][0], lines[i+1][1])
		fmt.Fprintf(&alone, "%s,%s,no\n", lines[i+1][0], lines[i+1][1])
	}
	dir := t.TempDir()
	score := func(name, text string, anomalies ...string) TableScoreReport {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		o := TableScoreOptions{Run: run, Data: p, Read: table.Options{Unseen: table.UnseenAnomalous}, Anomalies: anomalies,
			Backend: testutil.BackendName(), Out: filepath.Join(dir, "scores-"+name)}
		if anomalies != nil {
			o.Label = "odd"
		}
		r, err := ScoreTable(o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := score("unseen.csv", withUnseen.String(), "yes")
	if r.Unseen != 4 || !slices.Equal(r.UnseenCategories, []string{"kind=d"}) || r.AUPRC != 1 {
		t.Errorf("unseen %d %q, AUPRC %v; want 4 [kind=d], 1", r.Unseen, r.UnseenCategories, r.AUPRC)
	}
	if ref := score("alone.csv", alone.String()); !reflect.DeepEqual(r.ColumnFits, ref.ColumnFits) {
		t.Errorf("column fits %+v, want the held-out rows' alone %+v", r.ColumnFits, ref.ColumnFits)
	}
	if only := score("only-unseen.csv", "size,kind,odd\n0.5,d,yes\n"); only.Unseen != 1 || only.ColumnFits != nil {
		t.Errorf("a file of one unseen row: unseen %d, column fits %+v; want 1 and none", only.Unseen, only.ColumnFits)
	}
	scored := testutil.ReadCSV(t, filepath.Join(r.Out, ScoresFile))
	if got := strings.Join(scored[0], ","); got != "rank,line,energy,p_value,predicted_kind,predicted_probability,size,kind,unseen,odd" {
		t.Fatalf("header %s", got)
	}
	least := strconv.FormatFloat(1/float64(len(test)+1), 'g', 6, 64)
	for n, row := range scored[1:] {
		line, _ := strconv.Atoi(row[1])
		if line <= 5 {
			if n >= 4 || row[2] != "+Inf" || row[3] != least || row[4] != "" || row[5] != "" || row[7] != "d" || row[8] != "kind=d" {
				t.Errorf("rank %d: %q; want among the first four, energy +Inf, p-value %s, no prediction, kind d, unseen kind=d", n+1, row, least)
			}
			continue
		}
		e, _ := strconv.ParseFloat(row[2], 64)
		if want := trained[strconv.Itoa(test[line-6]+2)]; math.Abs(e-want) > 1e-5*(1+math.Abs(want)) || row[8] != "" {
			t.Errorf("line %d: energy %v (unseen %q), train-table's %v", line, e, row[8], want)
		}
	}
}

// TestFlaggedSummarySaysWhenNoRowCanBeFlagged checks the note on too few
// held-out rows: the smallest p-value of n held-out rows is 1/(n+1)
// (worked by hand below), and FlagLevel 0.01 is reachable from n = 99.
func TestFlaggedSummarySaysWhenNoRowCanBeFlagged(t *testing.T) {
	for _, c := range []struct {
		heldOut int
		note    string // "" for none
	}{
		{20, "no p-value is below 0.0476"}, // 1/21
		{98, "no p-value is below 0.0101"}, // 1/99
		{99, ""},                           // 1/100 = FlagLevel
		{9044, ""},
	} {
		got := TableScoreReport{Flagged: 3, HeldOut: c.heldOut}.FlaggedSummary()
		if !strings.HasPrefix(got, fmt.Sprintf("3 rows at p ≤ 0.01 against the run's %d held-out rows", c.heldOut)) {
			t.Errorf("%d held-out rows: %q", c.heldOut, got)
		}
		if has := strings.Contains(got, "no p-value"); has != (c.note != "") || c.note != "" && !strings.Contains(got, c.note) {
			t.Errorf("%d held-out rows: %q, want the note %q", c.heldOut, got, c.note)
		}
	}
}
