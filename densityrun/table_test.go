package densityrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// The mixed table's truth: a kind (a, b, c with probabilities 0.6, 0.3,
// 0.1) and a size | kind ~ N(μ_kind, 0.5²), μ = −1, 0, 1.5.
var mixedPrior, mixedMu = []float64{0.6, 0.3, 0.1}, []float64{-1, 0, 1.5}

// drawMixed draws a row of the mixed table's truth: its size, and its kind
// as the file writes it.
func drawMixed(rng *rand.Rand) (size float64, kind string) {
	u, c := rng.Float64(), 0
	for c < 2 && u >= mixedPrior[c] {
		u -= mixedPrior[c]
		c++
	}
	return mixedMu[c] + 0.5*rng.NormFloat64(), string(rune('a' + c))
}

// mixedPosterior is the truth's p(kind | size), kinds a, b, c.
func mixedPosterior(size float64) []float64 {
	post := make([]float64, 3)
	var z float64
	for k := range 3 {
		post[k] = mixedPrior[k] * math.Exp(-(size-mixedMu[k])*(size-mixedMu[k])/0.5)
		z += post[k]
	}
	for k := range post {
		post[k] /= z
	}
	return post
}

// mixedCSV writes 2,000 rows of the mixed table's truth as a user's CSV;
// it returns the file and the truth's posterior of the kind given the
// size.
func mixedCSV(t *testing.T) (string, func(size float64) []float64) {
	rng := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	b.WriteString("size,kind\n")
	for range 2000 {
		size, kind := drawMixed(rng)
		fmt.Fprintf(&b, "%.4f,%s\n", size, kind)
	}
	p := filepath.Join(t.TempDir(), "mixed.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, mixedPosterior
}

// mixedModel is the mixed table's model in the tests: small, fast to train.
func mixedModel(c *density.Config) error {
	c.MLP = nets.MLPConfig{Hidden: []int{32, 32}, Activation: "softplus"}
	c.LearningRate, c.EMADecay, c.ED = 1e-2, 0.9, losses.EDConfig{T: 0.05, M: 16, W: 1}
	c.Mixed.T = 0.5
	return nil
}

// TestTrainTableClassifiesSamplesAndResumes trains med on the mixed table,
// stopped after its first step and resumed, and checks: the energy's
// classification of the held-out kinds against Bayes' accuracy on the same
// rows (computed here from the truth), the synthetic rows read back as the
// input's columns with the kinds' shares and the sizes' mean near the
// data's, and the held-out rows ranked by energy.
func TestTrainTableClassifiesSamplesAndResumes(t *testing.T) {
	data, posterior := mixedCSV(t)
	out := t.TempDir()
	o := TableOptions{Data: data, Out: out, Backend: testutil.BackendName(), Methods: []string{"med"}, Target: "kind",
		AIS:   sampling.MixedAISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 64, Temperatures: 300}},
		Model: mixedModel, Steps: 300, Batch: 128, CheckpointEvery: 100, Samples: 400, Sweeps: 30}
	stop := make(chan os.Signal, 1)
	stop <- os.Interrupt
	stopped := o
	stopped.Stop = stop
	if _, err := TrainTable(stopped); !errors.Is(err, training.ErrStopped) {
		t.Fatalf("a stopped run: %v, want ErrStopped", err)
	}
	o.Data = "" // from the record
	results, err := TrainTable(o)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]

	var rec tableRecord
	if err := readJSON(filepath.Join(out, TableFile), &rec); err != nil {
		t.Fatal(err)
	}
	tab, err := table.Read(data, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var bayes float64
	for _, i := range rec.Test {
		post := posterior(tab.Numbers[i])
		best := 0
		for k := range post {
			if post[k] > post[best] {
				best = k
			}
		}
		if best == tab.Codes[i] {
			bayes++
		}
	}
	bayes /= float64(len(rec.Test))
	// The truth's log-likelihood of the same held-out rows, log π_kind +
	// log N(size; μ_kind, 0.5²), against the model's through AIS's log Z.
	var truth float64
	for _, i := range rec.Test {
		k, size := tab.Codes[i], tab.Numbers[i]
		truth += (math.Log(mixedPrior[k]) - (size-mixedMu[k])*(size-mixedMu[k])/0.5 - math.Log(0.5*math.Sqrt(2*math.Pi))) / float64(len(rec.Test))
	}
	t.Logf("held-out log-likelihood %.4f [%.4f, %.4f], the truth's %.4f; log Z %.4f (converged %v)", r.TestLogLikelihood, r.TestInterval.Lo, r.TestInterval.Hi, truth, r.LogZ, r.AIS.Converged)
	if math.Abs(r.TestLogLikelihood-truth) > 0.05 || !r.AIS.Converged {
		t.Errorf("held-out log-likelihood %.4f, the truth's %.4f on the same rows; want within 0.05 nats", r.TestLogLikelihood, truth)
	}
	// The served model's log-densities of the held-out rows (scores.csv's
	// energies) average to the run's held-out log-likelihood.
	b, _, err := backend.Open(testutil.BackendName())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	served, err := OpenTableModel(b, out, "med")
	if err != nil {
		t.Fatal(err)
	}
	energies, err := readRankedEnergies(filepath.Join(out, "med", ScoresFile))
	if err != nil {
		t.Fatal(err)
	}
	var mean float64
	for _, e := range energies {
		// The mixed table has no spike: every row's LogJacobian is the
		// standardisation's, the centre's.
		mean += served.LogDensity(served.Center(), e) / float64(len(energies))
	}
	if !served.HasLogZ || math.Abs(mean-r.TestLogLikelihood) > 1e-6 {
		t.Errorf("the table model's mean held-out log-density %.8f (log Z known: %v), the run's %.8f", mean, served.HasLogZ, r.TestLogLikelihood)
	}
	// The training time of both invocations, each step once, as the
	// metrics log has it; the measuring and sampling of the second.
	metrics, err := os.ReadFile(filepath.Join(out, "med", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var logged float64
	for _, row := range strings.Split(strings.TrimSpace(string(metrics)), "\n") {
		var step struct{ Seconds float64 }
		if err := json.Unmarshal([]byte(row), &step); err != nil {
			t.Fatal(err)
		}
		logged += step.Seconds
	}
	if math.Abs(r.TrainSeconds-logged) > 1e-9*logged || r.TrainSeconds <= 0 || r.MeasureSeconds <= 0 {
		t.Errorf("train seconds %v (metrics log: %v), measure seconds %v", r.TrainSeconds, logged, r.MeasureSeconds)
	}
	if math.Abs(r.HeldOutAbove-0.5) > 0.06 || r.Overfitting() != "" {
		t.Errorf("held-out rows above training rows in %.3f of pairs (z %.2f), want about half: %s", r.HeldOutAbove, r.HeldOutAboveZ, r.Overfitting())
	}
	if r.Step != 300 || r.TargetAccuracy < bayes-0.05 || r.TargetECE > 0.1 || r.MajorityShare < 0.5 {
		t.Errorf("step %d, accuracy %.3f (Bayes %.3f on the same rows), ECE %.3f, majority %.3f", r.Step, r.TargetAccuracy, bayes, r.TargetECE, r.MajorityShare)
	}

	samples, err := table.Read(filepath.Join(out, "med", SamplesFile), table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	shares := make([]float64, 3)
	var size float64
	for i := range samples.N {
		shares[samples.Codes[i]] += 1 / float64(samples.N)
		size += samples.Numbers[i] / float64(samples.N)
	}
	if samples.N != 400 || samples.Schema.Columns[1].Name != "kind" || math.Abs(shares[0]-0.6) > 0.1 || math.Abs(shares[2]-0.1) > 0.08 || math.Abs(size-(-0.45)) > 0.3 {
		t.Errorf("samples: %d rows, columns %v, kind shares %.3f, mean size %.3f (data: 0.6/0.3/0.1, −0.45)", samples.N, samples.Schema.Header(), shares, size)
	}
	// The kind's shape score against a count over samples.csv and the
	// file's training rows; every chart on the report, and on disk.
	trainShares, sampleShares := make([]float64, 3), make([]float64, 3)
	for _, i := range rec.Train {
		trainShares[tab.Codes[i]] += 1 / float64(len(rec.Train))
	}
	for i := range samples.N {
		sampleShares[samples.Codes[i]] += 1 / float64(samples.N)
	}
	var tv float64
	for k := range 3 {
		tv += math.Abs(trainShares[k]-sampleShares[k]) / 2
	}
	if len(r.Columns) != 2 || r.Columns[1].Column != "kind" || math.Abs(r.Columns[1].Score-(1-tv)) > 1e-9 ||
		math.Abs(r.ColumnShapes-(r.Columns[0].Score+r.Columns[1].Score)/2) > 1e-12 || r.Columns[0].Score < 0.8 {
		t.Errorf("column shapes %v: %+v; want kind's 1 − TV = %v by hand, the size's near 1", r.ColumnShapes, r.Columns, 1-tv)
	}
	report := testutil.ReadText(t, filepath.Join(out, "report.html"))
	for _, c := range r.Columns {
		if !strings.Contains(report, `src="med/`+c.Chart+`"`) {
			t.Errorf("report.html lacks the chart of %s (%s)", c.Column, c.Chart)
		}
		if _, err := os.Stat(filepath.Join(out, "med", c.Chart)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(report, "kind classified by the energy") || !strings.Contains(report, `src="med/losses.png"`) || !strings.Contains(report, fmt.Sprintf("%.4f", r.TestLogLikelihood)) {
		t.Errorf("report.html lacks the classification, the loss curve or the held-out log-likelihood")
	}
	rows := testutil.ReadCSV(t, filepath.Join(out, "med", ScoresFile))
	if len(rows) != len(rec.Test)+1 || strings.Join(rows[0], ",") != "rank,line,energy,size,kind" {
		t.Fatalf("scores: %d rows, header %v", len(rows), rows[0])
	}
	file := testutil.ReadCSV(t, data) // file[k] is line k+1
	heldOut := map[int]bool{}
	for _, i := range rec.Test {
		heldOut[i+2] = true // no row dropped: data row i is on line i+2
	}
	for _, row := range rows[1:] {
		line, _ := strconv.Atoi(row[1])
		size, _ := strconv.ParseFloat(row[3], 64)
		read, _ := strconv.ParseFloat(file[line-1][0], 64) // the value as read, not through float32
		if !heldOut[line] || size != read || row[4] != file[line-1][1] {
			t.Fatalf("scores row %q: line %d held out %v, the file's line %q", row, line, heldOut[line], file[min(max(line-1, 0), len(file)-1)])
		}
		delete(heldOut, line)
	}
	for i := 2; i < len(rows); i++ {
		prev, _ := strconv.ParseFloat(rows[i-1][2], 64)
		cur, _ := strconv.ParseFloat(rows[i][2], 64)
		if cur > prev {
			t.Errorf("scores rank %d energy %v above rank %d's %v", i, cur, i-1, prev)
		}
	}

	// The finished run measured again: a stop ends its AIS, and without
	// AIS its sampling.
	stop <- os.Interrupt
	if _, err := TrainTable(stopped); !errors.Is(err, training.ErrStopped) || !strings.Contains(err.Error(), "AIS") {
		t.Errorf("a stop while log Z is estimated: %v, want ErrStopped from AIS", err)
	}
	stop <- os.Interrupt
	stopped.NoAIS = true
	if _, err := TrainTable(stopped); !errors.Is(err, training.ErrStopped) || !strings.Contains(err.Error(), "sampling rows") {
		t.Errorf("a stop while the rows are sampled: %v, want ErrStopped from the sampling", err)
	}
}

// TestTrainTableRefusesBadOptions: bad options and tables are refused
// before the run folder is written.
func TestTrainTableRefusesBadOptions(t *testing.T) {
	data, _ := mixedCSV(t)
	for _, tc := range []struct {
		o    TableOptions
		want string
	}{
		{TableOptions{Data: data, Methods: []string{"ed"}}, `Options.Methods: "ed"`},
		{TableOptions{Data: data, Target: "size"}, `Options.Target "size"`},
		{TableOptions{Data: data, Target: "colour"}, `Options.Target "colour"`},
		{TableOptions{}, "Options.Data: required"},
		{TableOptions{Data: data, Read: table.Options{SpikeShare: 2}}, "table: Options.SpikeShare 2: want a share"},
		{TableOptions{Data: data, Read: table.Options{Drop: []string{"kind"}}, Methods: []string{"med"}}, "no categorical columns"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		tc.o.Out, tc.o.Backend = out, testutil.BackendName()
		if _, err := TrainTable(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(tc.want, "table:") && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.o, err, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%+v: the run folder was written", tc.o)
		}
	}
}

// TestTableNoiseFollowsTheRowsGap: a fresh med run's variance of the
// numbers' noise is (NoiseGaps·gap)², gap the lattice's step in standard
// deviations (each value five times, so that held-out rows leave no hole),
// and 1 when that is more; -set chooses another, and a resumed run keeps
// its checkpoint's.
func TestTableNoiseFollowsTheRowsGap(t *testing.T) {
	lattice := func(values int) string {
		var b strings.Builder
		b.WriteString("x,kind\n")
		for i := range 5 * values {
			fmt.Fprintf(&b, "%g,%c\n", float64(i/5)*0.5, 'a'+rune(i%3))
		}
		p := filepath.Join(t.TempDir(), "lattice.csv")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data := lattice(200)
	small := func(c *density.Config) error {
		c.MLP = nets.MLPConfig{Hidden: []int{8}, Activation: "softplus"}
		return nil
	}
	savedT := func(out string) float64 {
		cfg, err := density.SavedConfig(methodFolder(out, "med").Checkpoints())
		if err != nil {
			t.Fatal(err)
		}
		return cfg.ED.T
	}
	run := func(data, out, set string, steps int) {
		o := TableOptions{NoAIS: true, Data: data, Out: out, Backend: testutil.BackendName(), Methods: []string{"med"}, Model: small, Set: set,
			Steps: steps, Batch: 16, Samples: 4, Sweeps: 1}
		if _, err := TrainTable(o); err != nil {
			t.Fatal(err)
		}
	}

	fresh := t.TempDir()
	run(data, fresh, "", 1)
	var rec tableRecord
	if err := readJSON(filepath.Join(fresh, TableFile), &rec); err != nil {
		t.Fatal(err)
	}
	want := math.Pow(NoiseGaps*0.5/rec.Standardizer.Std[0], 2)
	if got := savedT(fresh); math.Abs(got-want) > 1e-9*want {
		t.Errorf("fresh run: toy_ed_t %v, want (%d × 0.5 / σ %.4f)² = %v", got, NoiseGaps, rec.Standardizer.Std[0], want)
	}

	chosen := t.TempDir()
	run(data, chosen, "toy_ed_t=0.2", 1)
	run(data, chosen, "", 2)
	if got := savedT(chosen); got != 0.2 {
		t.Errorf("-set toy_ed_t=0.2, then resumed: toy_ed_t %v, want 0.2", got)
	}

	// Ten values: a gap of 0.5 / σ ≈ 0.35, five of them more than the
	// columns' spread.
	sparse := t.TempDir()
	run(lattice(10), sparse, "", 1)
	if got := savedT(sparse); got != 1 {
		t.Errorf("ten values: toy_ed_t %v, want the cap 1", got)
	}
}

// spikeCSV writes 2,000 rows of a kind (a or b, even odds) and a balance
// that is 0 with probability 0.9 for a, 0.3 for b, else 1000·N(0, 1): a
// spike inside the column's range, where clamping makes no zeros.
func spikeCSV(t *testing.T) string {
	rng := rand.New(rand.NewPCG(13, 14))
	var b strings.Builder
	b.WriteString("balance,kind\n")
	for range 2000 {
		kind, atZero := "a", 0.9
		if rng.IntN(2) == 1 {
			kind, atZero = "b", 0.3
		}
		balance := 0.0
		if rng.Float64() >= atZero {
			balance = math.Round(1000 * rng.NormFloat64())
		}
		fmt.Fprintf(&b, "%g,%s\n", balance, kind)
	}
	p := filepath.Join(t.TempDir(), "spike.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTrainTableSamplesASpike: med's synthetic rows put the balance at
// exactly 0 in the data's share for each kind (0.9 and 0.3, as spikeCSV
// draws them), through the spike's block; a run recorded before spikes
// (its table.json without SpikeShare, so that the table read again has
// one) resumes in its recorded encoding.
func TestTrainTableSamplesASpike(t *testing.T) {
	data := spikeCSV(t)
	model := func(c *density.Config) error {
		c.MLP = nets.MLPConfig{Hidden: []int{32, 32}, Activation: "softplus"}
		c.LearningRate, c.EMADecay, c.ED, c.Mixed.T = 1e-2, 0.9, losses.EDConfig{T: 0.05, M: 16, W: 1}, 0.5
		return nil
	}
	out := t.TempDir()
	o := TableOptions{Data: data, Out: out, Backend: testutil.BackendName(), Methods: []string{"med"}, Model: model,
		AIS:   sampling.MixedAISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 64, Temperatures: 300}},
		Steps: 300, Batch: 128, Samples: 600, Sweeps: 30}
	results, err := TrainTable(o)
	if err != nil {
		t.Fatal(err)
	}
	// The held-out log-likelihood against the truth's on the same rows:
	// a balance at 0 is held with a probability, log ½ + log P(0 | kind);
	// one off it has a density, log ½ + log P(off | kind) + log N(b; 0, 1000²).
	var rec tableRecord
	if err := readJSON(filepath.Join(out, TableFile), &rec); err != nil {
		t.Fatal(err)
	}
	tab, err := table.Read(data, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var truth float64
	for _, i := range rec.Test {
		atZero, b := []float64{0.9, 0.3}[tab.Codes[i]], tab.Numbers[i]
		ll := math.Log(0.5) + math.Log(atZero)
		if b != 0 {
			ll = math.Log(0.5) + math.Log(1-atZero) - b*b/2e6 - math.Log(1000*math.Sqrt(2*math.Pi))
		}
		truth += ll / float64(len(rec.Test))
	}
	r := results[0]
	t.Logf("held-out log-likelihood %.4f [%.4f, %.4f], the truth's %.4f", r.TestLogLikelihood, r.TestInterval.Lo, r.TestInterval.Hi, truth)
	if math.Abs(r.TestLogLikelihood-truth) > 0.1 {
		t.Errorf("held-out log-likelihood %.4f, the truth's %.4f on the same rows; want within 0.1 nats (a balance at 0 is a probability)", r.TestLogLikelihood, truth)
	}
	samples, err := table.Read(filepath.Join(out, "med", SamplesFile), table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zeros, rows := make([]float64, 2), make([]float64, 2)
	for i := range samples.N {
		rows[samples.Codes[i]]++
		if samples.Numbers[i] == 0 {
			zeros[samples.Codes[i]]++
		}
	}
	a, b := zeros[0]/rows[0], zeros[1]/rows[1]
	t.Logf("at 0: %.3f, %.3f; out of range %v", a, b, results[0].SamplesOutOfRange)
	// The chains stay in the rows' range (the sampler is confined to it).
	if share, ok := results[0].SamplesOutOfRange["balance"]; !ok || share != 0 {
		t.Errorf("synthetic balances outside the rows' range: %v, want none", results[0].SamplesOutOfRange)
	}
	// Past OutOfRangeWarn, a warning names the column and its range.
	warnings := outOfRangeWarnings("med", rec.Schema, map[string]float64{"balance": OutOfRangeWarn + 0.01})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "26 % of the synthetic rows' balance fell outside the training rows' range [") {
		t.Errorf("warnings %q", warnings)
	}
	if w := outOfRangeWarnings("med", rec.Schema, map[string]float64{"balance": OutOfRangeWarn}); len(w) != 0 {
		t.Errorf("at OutOfRangeWarn itself: %q", w)
	}
	if math.Abs(a-0.9) > 0.1 || math.Abs(b-0.3) > 0.1 {
		t.Errorf("synthetic balances at 0: %.3f of kind a, %.3f of b; want 0.9, 0.3", a, b)
	}

	// A run recorded before spikes: trained without one, its record's
	// read options then emptied as an old record's are.
	old := t.TempDir()
	o.Out, o.Read.SpikeShare, o.Steps, o.Samples, o.Sweeps, o.NoAIS = old, 1, 2, 4, 1, true
	if _, err := TrainTable(o); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(old, TableFile)
	rec = tableRecord{}
	if err := readJSON(path, &rec); err != nil {
		t.Fatal(err)
	}
	rec.Read = table.Options{}
	if err := atomicfile.WriteJSON(path, rec); err != nil {
		t.Fatal(err)
	}
	o.Data, o.Read, o.Steps = "", table.Options{}, 4
	results, err = TrainTable(o)
	if err != nil || results[0].Step != 4 {
		t.Fatalf("the old run resumed: %+v, %v; want step 4", results, err)
	}
	if samples, err := table.Read(filepath.Join(old, "med", SamplesFile), table.Options{SpikeShare: 1}); err != nil || samples.N != 4 {
		t.Errorf("the old run's samples: %v", err)
	}
}

// TestTrainTableWithoutNumbers trains med on a table of two categorical
// columns and no number (as UCI's mushroom table): the synthetic rows' joint
// shares of the six (colour, size) cells match the truth's, and the
// results record no MALA step or acceptance, as no MALA step ran.
func TestTrainTableWithoutNumbers(t *testing.T) {
	cells := []struct {
		colour, size string
		p            float64
	}{{"r", "s", 0.3}, {"r", "l", 0.1}, {"g", "s", 0.05}, {"g", "l", 0.25}, {"b", "s", 0.15}, {"b", "l", 0.15}}
	rng := rand.New(rand.NewPCG(15, 16))
	var b strings.Builder
	b.WriteString("colour,size\n")
	for range 2000 {
		u, c := rng.Float64(), 0
		for c < len(cells)-1 && u >= cells[c].p {
			u -= cells[c].p
			c++
		}
		fmt.Fprintf(&b, "%s,%s\n", cells[c].colour, cells[c].size)
	}
	data := filepath.Join(t.TempDir(), "cells.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	model := func(c *density.Config) error {
		c.MLP = nets.MLPConfig{Hidden: []int{32, 32}, Activation: "softplus"}
		c.LearningRate, c.EMADecay, c.Mixed.T = 1e-2, 0.9, 0.5
		return nil
	}
	out := t.TempDir()
	o := TableOptions{NoAIS: true, Data: data, Out: out, Backend: testutil.BackendName(), Methods: []string{"med"}, Model: model,
		Steps: 250, Batch: 128, Samples: 1000, Sweeps: 20}
	results, err := TrainTable(o)
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.SampleAcceptance != nil || r.SampleStepSize != 0 {
		t.Errorf("results record a MALA step (%g) or acceptance for rows without numbers", r.SampleStepSize)
	}
	samples, err := table.Read(filepath.Join(out, "med", SamplesFile), table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[[2]string]float64{}
	for i := range samples.N {
		row := samples.Fields(i)
		count[[2]string{row[0], row[1]}]++
	}
	for _, c := range cells {
		got := count[[2]string{c.colour, c.size}] / float64(samples.N)
		t.Logf("(%s, %s): %.3f, truth %.2f", c.colour, c.size, got, c.p)
		// 4 standard errors of 1,000 rows' share, and 0.02 for the model
		if tol := 4*math.Sqrt(c.p*(1-c.p)/1000) + 0.02; math.Abs(got-c.p) > tol {
			t.Errorf("synthetic share of (%s, %s): %.3f; want %.2f ± %.3f", c.colour, c.size, got, c.p, tol)
		}
	}
}

// TestOverfittingWarnsPastBothBars: the warning needs a share of at least
// 0.55 and 3 standard errors; the shares are those measured on real runs
// (docs/tables.md: penguins at σ 0.1, 0.72–0.82; churn, 0.49–0.51).
func TestOverfittingWarnsPastBothBars(t *testing.T) {
	for _, tc := range []struct {
		share, z float64
		warning  bool
	}{
		{0.754, 6.43, true},
		{0.643, 3.63, true},
		{0.610, 2.79, false}, // few held-out rows: not yet beyond chance
		{0.510, 5.20, false}, // a large table: beyond chance, but slight
		{0.497, -0.84, false},
	} {
		r := TableResults{HeldOutAbove: tc.share, HeldOutAboveZ: tc.z}
		if got := r.Overfitting(); (got != "") != tc.warning || tc.warning && !strings.Contains(got, fmt.Sprintf("%.0f %% of pairs", 100*tc.share)) {
			t.Errorf("share %.3f, z %.2f: %q; want a warning: %v", tc.share, tc.z, got, tc.warning)
		}
	}
}

// TestCategoryShares: the AIS base's category probabilities are the
// training rows' shares, counted here by hand on four rows of a number and
// columns of 2 and 3 categories (one category in no row): each column
// sums to 1, as MixedAIS's floor of 10⁻³ assumes.
func TestCategoryShares(t *testing.T) {
	layout := sampling.MixedLayout{Numeric: 1, Categories: []int{2, 3}}
	rows := []float32{
		0.5, 1, 0, 0, 0, 1,
		-1, 0, 1, 1, 0, 0,
		2, 1, 0, 0, 0, 1,
		0, 1, 0, 0, 0, 1,
	}
	want := [][]float64{{0.75, 0.25}, {0.25, 0, 0.75}}
	got := categoryShares(layout, rows)
	for j := range want {
		for c := range want[j] {
			if len(got) != 2 || math.Abs(got[j][c]-want[j][c]) > 1e-12 {
				t.Fatalf("shares %v, want %v", got, want)
			}
		}
	}
}

// TestWriteScoresGivesTheFilesLines: held-out rows of a file with a row
// dropped for a missing value are written with their lines in the file
// (lines 4 and 5, not their places among the rows kept) and their values
// as read, highest energy first.
func TestWriteScoresGivesTheFilesLines(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(data, []byte("size,kind\n1.5,a\nNA,b\n2.25,c\n0.1,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := table.Read(data, table.Options{Missing: table.MissingDrop})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ScoresFile)
	if err := writeScores(path, tab.Rows([]int{2, 1}), []float64{1, 2}); err != nil {
		t.Fatal(err)
	}
	got := testutil.ReadCSV(t, path)
	want := [][]string{{"rank", "line", "energy", "size", "kind"}, {"1", "4", "2", "2.25", "c"}, {"2", "5", "1", "0.1", "a"}}
	for i := range want {
		if i >= len(got) || strings.Join(got[i], ",") != strings.Join(want[i], ",") {
			t.Fatalf("%s: %q, want %q", ScoresFile, got, want)
		}
	}
}
