package densityrun

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// TestSampleTableDrawsTheConditionalLaw draws 2,000 rows of a trained
// mixed run given its kind, a and then c, and checks them against the
// model's own conditional law computed apart from the sampler: p(size |
// kind) ∝ exp(−E(size, kind)) on the training rows' range of sizes (where
// the chains are confined), by quadrature over 2,001 sizes scored by
// TableModel. Every row has the kind asked for; the sizes' mean within 4.5
// standard errors and their variance within 10 % of the quadrature's. The
// same for chains started at rows of kind a set to c (one sweep instead of
// 20 leaves them at a's sizes: mean 0.54 against c's 1.45). Then the
// refusals, each by name.
func TestSampleTableDrawsTheConditionalLaw(t *testing.T) {
	run := mixedRun(t)
	b := openBackend(t)
	m, err := OpenTableModel(b, run, "med")
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := m.Schema.Columns[0].Range[0], m.Schema.Columns[0].Range[1]
	for _, kind := range []string{"a", "c"} {
		mean, variance := conditionalSizeMoments(t, m, kind, lo, hi)
		r, err := SampleTable(TableSampleOptions{Run: run, Conditions: map[string]string{"kind": kind}, Rows: 2000, Sweeps: 20, Backend: testutil.BackendName()})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(run, "med", "samples-kind="+kind+".csv"); r.Out != want || r.Starts == 0 {
			t.Errorf("kind %s: written to %s from %d starts; want %s, from its training rows", kind, r.Out, r.Starts, want)
		}
		rows := testutil.ReadCSV(t, r.Out)
		if strings.Join(rows[0], ",") != "size,kind" || len(rows) != 2001 {
			t.Fatalf("kind %s: %d lines under %q", kind, len(rows), rows[0])
		}
		var sum, sq float64
		for _, row := range rows[1:] {
			size, _ := strconv.ParseFloat(row[0], 64)
			if row[1] != kind || size < lo || size > hi {
				t.Fatalf("kind %s: a row %q", kind, row)
			}
			sum, sq = sum+size, sq+size*size
		}
		gotMean, gotVar := sum/2000, sq/2000-(sum/2000)*(sum/2000)
		if math.Abs(gotMean-mean) > 4.5*math.Sqrt(variance/2000) || math.Abs(gotVar-variance) > 0.1*variance {
			t.Errorf("kind %s: sizes' mean %.4f, variance %.4f; the model's law given it %.4f, %.4f", kind, gotMean, gotVar, mean, variance)
		}
	}

	// Chains started at rows of kind a set to c must move their sizes to
	// c's law: the check above alone would pass for chains that stayed at
	// starts drawn from a well-fitted model's training rows.
	mean, variance := conditionalSizeMoments(t, m, "c", lo, hi)
	cfg, err := density.SavedConfig(methodFolder(run, "med").Checkpoints())
	if err != nil {
		t.Fatal(err)
	}
	width := m.Schema.Width()
	tab, err := table.Read(m.record.File, m.record.Read)
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := m.Encode(tab)
	if err != nil {
		t.Fatal(err)
	}
	aAt, _ := blockOf(m.Schema, "kind")
	toC, err := conditionBox(m.record, map[string]string{"kind": "c"})
	if err != nil {
		t.Fatal(err)
	}
	kindA := moveInto(inBox(rowsOf(encoded, width, m.record.Train), width, sampling.Box{Pinned: []int{aAt}}), m.Schema, toC)
	drawn, err := sampleRows(b, m.model, cfg, m.record, rowDraw{rows: 2000, sweeps: 20, seed: 3, starts: kindA, box: toC}, &TableResults{})
	if err != nil {
		t.Fatal(err)
	}
	var sum, sq float64
	for i := range 2000 {
		size := float64(drawn[i*width])*m.record.Standardizer.Std[0] + m.record.Standardizer.Mean[0]
		sum, sq = sum+size, sq+size*size
	}
	if gotMean, gotVar := sum/2000, sq/2000-(sum/2000)*(sum/2000); math.Abs(gotMean-mean) > 4.5*math.Sqrt(variance/2000) || math.Abs(gotVar-variance) > 0.1*variance {
		t.Errorf("chains from kind a's rows pinned to c: sizes' mean %.4f, variance %.4f; the model's law given c %.4f, %.4f", gotMean, gotVar, mean, variance)
	}

	checkSizeRange(t, run, m, 1, 2)

	writer, err := training.Folder{Dir: run}.Claim() // another writer: train-table, say
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SampleTable(TableSampleOptions{Run: run, Backend: testutil.BackendName()}); err == nil || !strings.Contains(err.Error(), "Options.Run: run folder") || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a run folder in use: %v", err)
	}
	writer.Release()

	for _, tc := range []struct {
		o    TableSampleOptions
		want string
	}{
		{TableSampleOptions{Run: run, Conditions: map[string]string{"size": "1"}}, `column "size": "1": want a range LO..HI`},
		{TableSampleOptions{Run: run, Conditions: map[string]string{"size": "2..1"}}, `"2..1": its low end is above its high end`},
		{TableSampleOptions{Run: run, Conditions: map[string]string{"size": "big.."}}, `"big..": "big" is not a number`},
		{TableSampleOptions{Run: run, Conditions: map[string]string{"size": "100.."}}, `column "size": 100.. lies outside the training rows' range`},
		{TableSampleOptions{Run: run, Conditions: map[string]string{"kind": "z"}}, `category "z" was not in the training rows`},
		{TableSampleOptions{Run: run, Conditions: map[string]string{"colour": "red"}}, `column "colour": not a column of [size kind]`},
		{TableSampleOptions{Run: t.TempDir()}, "not a train-table run folder"},
		{TableSampleOptions{Run: run, Rows: -1}, "Options.Rows -1"},
		{TableSampleOptions{Run: run, Method: "ed"}, "Options.Method ed: must be one of"},
	} {
		if _, err := SampleTable(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want an error containing %q", tc.o, err, tc.want)
		}
	}
}

// conditionalSizeMoments is the mean and variance of size given kind
// under m's law on [lo, hi], by the trapezoid rule over 2,001 sizes.
func conditionalSizeMoments(t *testing.T, m *TableModel, kind string, lo, hi float64) (mean, variance float64) {
	_, mean, variance = sizeLaw(t, m, kind, lo, hi)
	return mean, variance
}

// sizeLaw is log ∫ exp(−E(size, kind)) over [lo, hi] and the mean and
// variance of size under it, by the trapezoid rule over 2,001 sizes.
func sizeLaw(t *testing.T, m *TableModel, kind string, lo, hi float64) (logZ, mean, variance float64) {
	t.Helper()
	const n = 2001
	records := make([][]string, n)
	sizes := make([]float64, n)
	for i := range n {
		sizes[i] = lo + (hi-lo)*float64(i)/(n-1)
		records[i] = []string{strconv.FormatFloat(sizes[i], 'g', -1, 64), kind}
	}
	tab, err := m.Schema.ParseRows("the grid", []string{"size", "kind"}, records, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := m.Encode(tab)
	if err != nil {
		t.Fatal(err)
	}
	energies, _, err := m.Score(encoded)
	if err != nil {
		t.Fatal(err)
	}
	least := slices.Min(energies)
	var z, first, second float64
	for i, e := range energies {
		w := math.Exp(least - e)
		if i == 0 || i == n-1 {
			w /= 2
		}
		z, first, second = z+w, first+w*sizes[i], second+w*sizes[i]*sizes[i]
	}
	mean = first / z
	return -least + math.Log(z*(hi-lo)/(n-1)), mean, second/z - mean*mean
}

// TestInBoxAndMoveInto: of three encoded rows (a number, then blocks of
// 2 and 3 categories) those in a box (the number in [0, 1], both pinned
// categories) are picked by hand; moving rows into another box rewrites
// each row's pinned blocks and clamps its number, and nothing else.
func TestInBoxAndMoveInto(t *testing.T) {
	s := table.Schema{Columns: []table.Column{
		{Name: "x", Kind: table.Numeric},
		{Name: "p", Kind: table.Categorical, Categories: []string{"u", "v"}},
		{Name: "q", Kind: table.Categorical, Categories: []string{"a", "b", "c"}},
	}}
	rows := []float32{
		0.5, 1, 0, 0, 0, 1,
		-1, 1, 0, 0, 0, 1,
		5, 0, 1, 0, 0, 1,
		2, 1, 0, 0, 0, 1,
	}
	box := sampling.Box{Lo: []float64{0}, Hi: []float64{1}, FreeAt: []int{-1}, Pinned: []int{1, 5}} // p = u, q = c
	if got := inBox(rows, 6, box); !slices.Equal(got, rows[:6]) {
		t.Errorf("rows in x ∈ [0, 1], p = u, q = c: %v, want row 1 alone %v", got, rows[:6])
	}
	if free := (sampling.Box{Lo: []float64{0}, Hi: []float64{1}, FreeAt: []int{2}}); !slices.Equal(inBox(rows, 6, free), slices.Concat(rows[:6], rows[12:18])) {
		t.Errorf("x in [0, 1] or free where p = v: %v, want rows 1 and 3 (x = 5 there, free)", inBox(rows, 6, free))
	}
	moved := moveInto(rows, s, sampling.Box{Lo: []float64{0}, Hi: []float64{1}, FreeAt: []int{-1}, Pinned: []int{2, 3}}) // p = v, q = a
	want := []float32{
		0.5, 0, 1, 1, 0, 0,
		0, 0, 1, 1, 0, 0,
		1, 0, 1, 1, 0, 0,
		1, 0, 1, 1, 0, 0,
	}
	if !slices.Equal(moved, want) || rows[1] != 1 || rows[6] != -1 {
		t.Errorf("moved rows %v, want %v (and the rows given untouched)", moved, want)
	}
}

// TestFileSafe: a condition's words become a file name on any system, the
// unsafe bytes as %XX (an escaped % too, so names stay distinct).
func TestFileSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"income", "income"},
		{">50K", "%3E50K"},
		{"TCP/IP", "TCP%2FIP"},
		{"../up", "%2E.%2Fup"},
		{`a\b:c"d|e?f*g%h`, "a%5Cb%3Ac%22d%7Ce%3Ff%2Ag%25h"},
		{"ümlaut ok", "ümlaut ok"},
	} {
		if got := fileSafe(tc.in); got != tc.want {
			t.Errorf("fileSafe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// checkSizeRange draws 2,000 rows given size ∈ [a, b] and checks them
// against the model's law there, by quadrature over each kind: every size
// in range, each kind's share within 4.5 standard errors, the sizes' mean
// within 4.5 and their variance within 10 %.
func checkSizeRange(t *testing.T, run string, m *TableModel, a, b float64) {
	t.Helper()
	r, err := SampleTable(TableSampleOptions{Run: run, Conditions: map[string]string{"size": fmt.Sprintf("%g..%g", a, b)}, Rows: 2000, Sweeps: 20, Seed: 2, Backend: testutil.BackendName()})
	if err != nil {
		t.Fatal(err)
	}
	rng := m.Schema.Columns[0].Range
	lo, hi := max(a, rng[0]), min(b, rng[1])
	kinds := m.Schema.Columns[1].Categories
	logZ, means, vars := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	for k, kind := range kinds {
		logZ[k], means[k], vars[k] = sizeLaw(t, m, kind, lo, hi)
	}
	top := slices.Max(logZ)
	var total, mean, second float64
	shares := make([]float64, 3)
	for k := range kinds {
		shares[k] = math.Exp(logZ[k] - top)
		total += shares[k]
	}
	for k := range kinds {
		shares[k] /= total
		mean += shares[k] * means[k]
		second += shares[k] * (vars[k] + means[k]*means[k])
	}
	variance := second - mean*mean
	counts := map[string]float64{}
	var sum, sq float64
	for _, row := range testutil.ReadCSV(t, r.Out)[1:] {
		size, _ := strconv.ParseFloat(row[0], 64)
		if size < lo || size > hi {
			t.Fatalf("size in [%g, %g]: a row %q", a, b, row)
		}
		counts[row[1]]++
		sum, sq = sum+size, sq+size*size
	}
	for k, kind := range kinds {
		if got, se := counts[kind]/2000, math.Sqrt(shares[k]*(1-shares[k])/2000); math.Abs(got-shares[k]) > 4.5*se+1e-3 {
			t.Errorf("size in [%g, %g]: kind %s in %.4f of the rows, the model's law %.4f", a, b, kind, got, shares[k])
		}
	}
	if gotMean, gotVar := sum/2000, sq/2000-(sum/2000)*(sum/2000); math.Abs(gotMean-mean) > 4.5*math.Sqrt(variance/2000) || math.Abs(gotVar-variance) > 0.1*variance {
		t.Errorf("size in [%g, %g]: sizes' mean %.4f, variance %.4f; the model's law %.4f, %.4f", a, b, gotMean, gotVar, mean, variance)
	}
}

// TestConditionBox: on a table of a spiked number (balance: range −10…100,
// spike at 0, standardised as N(10, 5²)) and a category, the box of each
// condition read by hand — a range narrows the number's bounds in
// standard units; with the spike outside it the spike's "off" category is
// pinned and the number no longer free; with the spike inside, the spike
// stays free; a category pins its place.
func TestConditionBox(t *testing.T) {
	zero := 0.0
	rec := tableRecord{
		Schema: table.Schema{Columns: []table.Column{
			{Name: "balance", Kind: table.Numeric, Range: []float64{-10, 100}, Spike: &zero},
			{Name: "kind", Kind: table.Categorical, Categories: []string{"a", "b"}},
		}},
		Standardizer: vectors.Standardizer{Mean: []float64{10}, Std: []float64{5}},
	}
	// Encoded: balance at 0, kind's block at 1–2, the spike's block at 3–4 (off, at).
	for _, tc := range []struct {
		conditions map[string]string
		want       sampling.Box
	}{
		{nil, sampling.Box{Lo: []float64{-4}, Hi: []float64{18}, FreeAt: []int{4}}},
		{map[string]string{"balance": "5..15", "kind": "b"}, sampling.Box{Lo: []float64{-1}, Hi: []float64{1}, FreeAt: []int{-1}, Pinned: []int{3, 2}}},
		{map[string]string{"balance": "-5.."}, sampling.Box{Lo: []float64{-3}, Hi: []float64{18}, FreeAt: []int{4}}},
		{map[string]string{"balance": "..200"}, sampling.Box{Lo: []float64{-4}, Hi: []float64{18}, FreeAt: []int{4}}},
	} {
		got, err := conditionBox(rec, tc.conditions)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Lo, tc.want.Lo) || !slices.Equal(got.Hi, tc.want.Hi) || !slices.Equal(got.FreeAt, tc.want.FreeAt) || !slices.Equal(got.Pinned, tc.want.Pinned) {
			t.Errorf("%v: box %+v, want %+v", tc.conditions, got, tc.want)
		}
	}
}
