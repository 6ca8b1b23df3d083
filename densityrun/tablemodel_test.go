package densityrun

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/internal/testutil"
)

// mixedRun trains med briefly on the mixed table with its kind as the
// target, and returns the run folder.
func mixedRun(t *testing.T) string {
	t.Helper()
	data, _ := mixedCSV(t)
	out := t.TempDir()
	o := TableOptions{NoAIS: true, Data: data, Out: out, Backend: testutil.BackendName(), Methods: []string{"med"}, Target: "kind",
		Model: mixedModel, Steps: 300, Batch: 128, Samples: 10, Sweeps: 2}
	if _, err := TrainTable(o); err != nil {
		t.Fatal(err)
	}
	return out
}

func openBackend(t *testing.T) backends.Backend {
	t.Helper()
	b, _, err := backend.Open(testutil.BackendName())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Finalize)
	return b
}

// TestTableModelScoresNewRows opens a trained run's model and checks, for
// 2,000 fresh rows of the truth: the kind's probabilities against the
// truth's posterior; the p-values against a count over the run's
// scores.csv by hand, and their calibration (the share at most α is about
// α, as for any model: the held-out rows are exchangeable with fresh
// ones); the held-out rows' own p-values, exactly their ranks; a row far
// from every training row, the smallest p-value; then the columns' fits
// and the run's refusals.
func TestTableModelScoresNewRows(t *testing.T) {
	run := mixedRun(t)
	m, err := OpenTableModel(openBackend(t), run, "med")
	if err != nil {
		t.Fatal(err)
	}
	if m.Target != "kind" || !slices.Equal(m.TargetCategories, []string{"a", "b", "c"}) || m.HeldOut() != 400 {
		t.Fatalf("target %q, categories %q, %d held-out rows; want kind, a b c, 400", m.Target, m.TargetCategories, m.HeldOut())
	}
	rng := rand.New(rand.NewPCG(21, 22))
	const n = 2000
	records := make([][]string, n)
	sizes := make([]float64, n)
	for i := range records {
		size, kind := drawMixed(rng)
		sizes[i] = math.Round(size*1e4) / 1e4
		records[i] = []string{kind, strconv.FormatFloat(sizes[i], 'f', 4, 64)}
	}
	fresh, err := m.Schema.ParseRows("fresh rows", []string{"kind", "size"}, records, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := m.Encode(fresh)
	if err != nil {
		t.Fatal(err)
	}
	energies, probs, err := m.Score(encoded)
	if err != nil {
		t.Fatal(err)
	}
	var gap float64
	for i := range n {
		for k, p := range mixedPosterior(sizes[i]) {
			gap += math.Abs(probs[i*3+k]-p) / (3 * n)
		}
	}
	if gap > 0.05 {
		t.Errorf("mean |p(kind | size) − the truth's| = %.4f, want ≤ 0.05", gap)
	}

	ranked := testutil.ReadCSV(t, filepath.Join(run, "med", ScoresFile))[1:]
	var within10, within50 float64
	for i, e := range energies {
		p := m.PValue(e)
		rounded, _ := strconv.ParseFloat(strconv.FormatFloat(e, 'g', 8, 64), 64)
		count := 1
		for _, row := range ranked {
			if v, _ := strconv.ParseFloat(row[2], 64); v >= rounded {
				count++
			}
		}
		if want := float64(count) / float64(len(ranked)+1); p != want {
			t.Fatalf("row %d: p-value %v, by hand %v", i+1, p, want)
		}
		within10 += btof(p <= 0.1) / n
		within50 += btof(p <= 0.5) / n
	}
	t.Logf("mean |p − truth| %.4f; fresh rows with p ≤ 0.1: %.3f, ≤ 0.5: %.3f", gap, within10, within50)
	// A fixed calibration set of 400 rows: the coverage's spread is
	// √(α(1−α)/400) (0.015 at α 0.1), with the 2,000 rows' own 0.007.
	if math.Abs(within10-0.1) > 0.05 || math.Abs(within50-0.5) > 0.1 {
		t.Errorf("fresh rows with p ≤ 0.1: %.3f, ≤ 0.5: %.3f; want about 0.1 and 0.5", within10, within50)
	}

	var rec tableRecord
	if err := readJSON(filepath.Join(run, TableFile), &rec); err != nil {
		t.Fatal(err)
	}
	all, err := table.Read(rec.File, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	heldOut := make([][]string, len(rec.Test))
	for i, r := range rec.Test {
		heldOut[i] = all.Fields(r)
	}
	tab, err := m.Schema.ParseRows("held-out rows", m.Schema.Header(), heldOut, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	encoded, _ = m.Encode(tab)
	energies, _, err = m.Score(encoded)
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]float64, len(energies))
	for i, e := range energies {
		ps[i] = m.PValue(e) * float64(len(ps)+1)
	}
	slices.Sort(ps)
	for j, p := range ps { // ties share the largest rank
		if p < float64(j+2)-1e-9 || p > float64(len(ps)+1)+1e-9 {
			t.Fatalf("held-out row of rank %d from the bottom: p-value × 401 = %v, want ≥ %d", j+1, p, j+2)
		}
	}
	if distinct := len(slices.Compact(slices.Clone(ps))); distinct < len(ps)-5 || ps[0] != 2 {
		t.Errorf("held-out rows' p-values × 401: %d distinct, lowest %v; want their ranks 2…401", distinct, ps[0])
	}

	far, _ := m.Schema.ParseRows("a far row", []string{"size", "kind"}, [][]string{{"40", "a"}}, table.Options{})
	encoded, _ = m.Encode(far)
	energies, _, err = m.Score(encoded)
	if err != nil {
		t.Fatal(err)
	}
	if p := m.PValue(energies[0]); p != 1.0/401 {
		t.Errorf("a row of size 40: p-value %v, want 1/401", p)
	}
	columnFitsSeeAShiftedColumn(t, m)
	refusesUnfinishedRuns(t, run)
}

// refusesUnfinishedRuns: a checkpoint past the results (a run stopped
// while measuring), a method the run lacks and a folder of another kind
// are errors that say so.
func refusesUnfinishedRuns(t *testing.T, run string) {
	b := openBackend(t)
	path := filepath.Join(run, "med", ResultsFile)
	var res TableResults
	if err := readJSON(path, &res); err != nil {
		t.Fatal(err)
	}
	res.Step--
	if err := atomicfile.WriteJSON(path, res); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ run, method, want string }{
		{run, "med", "has not finished measuring"},
		{run, "mcd", "method mcd"},
		{t.TempDir(), "med", "a train-table run folder?"},
	} {
		if _, err := OpenTableModel(b, tc.run, tc.method); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s, %s: %v, want an error saying %q", tc.run, tc.method, err, tc.want)
		}
	}
}

func btof(b bool) float64 { return float64(btoi(b)) }

// columnFitsSeeAShiftedColumn: on 1,000 fresh rows of the truth the
// trained model's conditionals fit (the kind calibrated within 0.03, the
// size's mean PIT within 0.05 of 0.5 and no decile past 0.1 ± 0.05); with
// every size shifted up by 1 the size's mean PIT rises far above 0.5 (the
// rows' sizes sit high in the model's conditional: for them it puts the
// mass too low) and the kind's conditional log-likelihood drops.
func columnFitsSeeAShiftedColumn(t *testing.T, m *TableModel) {
	rng := rand.New(rand.NewPCG(31, 32))
	fresh, shifted := make([][]string, 1000), make([][]string, 1000)
	for i := range fresh {
		size, kind := drawMixed(rng)
		fresh[i] = []string{strconv.FormatFloat(size, 'f', 4, 64), kind}
		shifted[i] = []string{strconv.FormatFloat(size+1, 'f', 4, 64), kind}
	}
	fits := func(records [][]string) []ColumnFit {
		tab, err := m.Schema.ParseRows("rows", []string{"size", "kind"}, records, table.Options{})
		if err != nil {
			t.Fatal(err)
		}
		encoded, _ := m.Encode(tab)
		f, err := m.ColumnFits(encoded)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", f)
		return f
	}
	good, bad := fits(fresh), fits(shifted)
	if good[0].Column != "size" || good[1].Column != "kind" {
		t.Fatalf("columns %s, %s; want size, kind", good[0].Column, good[1].Column)
	}
	if math.Abs(good[0].MeanPIT-0.5) > 0.05 || good[1].CalibrationGap > 0.03 {
		t.Errorf("fresh rows: size's mean PIT %.3f, kind's calibration gap %.3f; want 0.5 ± 0.05, ≤ 0.03", good[0].MeanPIT, good[1].CalibrationGap)
	}
	for d, share := range good[0].Deciles {
		if math.Abs(share-0.1) > 0.05 {
			t.Errorf("fresh rows: %.3f of the sizes in PIT decile %d, want 0.1 ± 0.05", share, d+1)
		}
	}
	if bad[0].MeanPIT < 0.75 || bad[1].LogLikelihood > good[1].LogLikelihood-0.1 {
		t.Errorf("sizes shifted by 1: mean PIT %.3f (want ≥ 0.75), kind's conditional log-likelihood %.3f against %.3f unshifted", bad[0].MeanPIT, bad[1].LogLikelihood, good[1].LogLikelihood)
	}
}
