package densityrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// wine2 writes the first two columns of scikit-learn's wine data (alcohol
// and malic acid; Debian's python3-sklearn, which scripts/test.sh
// installs) as a CSV file with a header, as a user's file.
func wine2(t *testing.T) string {
	t.Helper()
	all, err := vectors.Read("/usr/lib/python3/dist-packages/sklearn/datasets/data/wine_data.csv", vectors.ReadOptions{SkipRows: 1, Label: "last"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("alcohol,malic_acid\n")
	for i := range all.N {
		fmt.Fprintf(&b, "%v,%v\n", all.Row(i)[0], all.Row(i)[1])
	}
	p := filepath.Join(t.TempDir(), "wine2.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// quick are options small enough for the test suite.
func quick(data, out string, steps int) Options {
	return Options{Data: data, Out: out, Backend: testutil.BackendName(), Methods: []string{"ed"},
		Model: func(c *density.Config) error { c.MLP.Hidden = []int{16}; return nil },
		Steps: steps, Batch: 32, CheckpointEvery: 10, Samples: 64, SampleSteps: 20,
		AIS: sampling.AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 128, Temperatures: 300}}}
}

// TestTrainMeasuresAndResumes trains ED on two columns of the wine data,
// stopped after its first step and resumed, and checks, against
// computations of its own: the logged losses against training steps on
// batches drawn here, log Z against a quadrature of exp(−E) over a grid,
// the held-out log-likelihood against −E − log Z plus the log-Jacobian of
// a standardisation recomputed here, and the samples written back on the
// data's scale.
func TestTrainMeasuresAndResumes(t *testing.T) {
	data := wine2(t)
	whole := t.TempDir()
	stop := make(chan os.Signal, 1)
	stop <- os.Interrupt
	o := quick(data, whole, 30)
	o.Stop = stop
	if _, err := Train(o); !errors.Is(err, training.ErrStopped) {
		t.Fatalf("a stopped run: error %v, want ErrStopped", err)
	}
	if n := len(readLoggedLosses(t, whole)); n != 1 {
		t.Fatalf("the stopped run logged %d steps, want 1", n)
	}
	results, err := Train(quick("", whole, 30)) // -data from the record
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]

	var rec dataRecord
	raw, _ := os.ReadFile(filepath.Join(whole, DataFile))
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	all, _ := vectors.Read(data, vectors.ReadOptions{})
	var mu, sd [2]float64
	for _, i := range rec.Train {
		for j := range 2 {
			mu[j] += all.Row(i)[j] / float64(len(rec.Train))
		}
	}
	for _, i := range rec.Train {
		for j := range 2 {
			sd[j] += math.Pow(all.Row(i)[j]-mu[j], 2) / float64(len(rec.Train))
		}
	}
	logJ := -0.5 * (math.Log(sd[0]) + math.Log(sd[1]))

	cfg := density.DefaultConfig("ed")
	cfg.MLP.Hidden = []int{16}
	model, err := density.New(testutil.Backend(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.SetGaussianBase(3); err != nil {
		t.Fatal(err)
	}
	if err := model.Restore(training.Folder{Dir: filepath.Join(whole, "ed")}.Checkpoints()); err != nil {
		t.Fatal(err)
	}
	const side, extent = 300, 15.0 // 5 σ of the base
	energies, _, err := model.EnergyAndDensity(density.Grid{Extent: [4]float64{-extent, extent, -extent, extent}, Size: side})
	if err != nil {
		t.Fatal(err)
	}
	cell := math.Pow(2*extent/side, 2) // the grid's points are its cells' centres
	var z float64
	for _, e := range energies {
		z += math.Exp(-e) * cell
	}
	// AIS of 128 chains: its 95 % interval is about ±0.1 here; the check
	// run, the reverse run and the verdict are in results.json.
	logZ := math.Log(z)
	if math.Abs(r.LogZ-logZ) > 0.1 || math.Abs(r.AIS.Upper.LogZ-logZ) > 0.1 || !r.AIS.Converged {
		t.Errorf("AIS log Z %.4f (interval %+v), reverse %.4f, converged %v; quadrature %.4f", r.LogZ, r.LogZInterval, r.AIS.Upper.LogZ, r.AIS.Converged, logZ)
	}
	var written Results
	raw, _ = os.ReadFile(filepath.Join(whole, "ed", ResultsFile))
	if err := json.Unmarshal(raw, &written); err != nil || written.AIS.Check.Temperatures != 150 || written.AIS.Upper.LogZ != r.AIS.Upper.LogZ || !written.AIS.Converged {
		t.Errorf("%s: AIS evidence %+v (%v), want the check at 150 temperatures and the reverse run's %v", ResultsFile, written.AIS, err, r.AIS.Upper.LogZ)
	}
	var test []float32
	for _, i := range rec.Test {
		for j := range 2 {
			test = append(test, float32((all.Row(i)[j]-mu[j])/math.Sqrt(sd[j])))
		}
	}
	e, err := model.Energies(test, 2)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for _, v := range e {
		want += (-v - r.LogZ + logJ) / float64(len(e))
	}
	if math.Abs(r.TestLogLikelihood-want) > 1e-4 || !(r.TestInterval.Lo < want && want < r.TestInterval.Hi) {
		t.Errorf("held-out log-likelihood %v in %+v, recomputed %v", r.TestLogLikelihood, r.TestInterval, want)
	}
	// OpenRowModel, loading the run without its flags, gives each held-out
	// row the log-density recomputed here, and names its column header.
	rows, err := OpenRowModel(testutil.Backend(), whole, "ed")
	if err != nil {
		t.Fatal(err)
	}
	heldOut := all.Subset(rec.Test)
	got, err := rows.LogDensities(heldOut.Values)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range e {
		if w := -v - r.LogZ + logJ; math.Abs(got[i]-w) > 1e-9*(1+math.Abs(w)) {
			t.Errorf("held-out row %d: RowModel's log-density %v, recomputed %v", i, got[i], w)
		}
	}
	if rows.Dim != 2 || !slices.Equal(rows.Columns, []string{"alcohol", "malic_acid"}) || rows.Step != 30 {
		t.Errorf("RowModel of %d columns %v at step %d, want alcohol and malic_acid at step 30", rows.Dim, rows.Columns, rows.Step)
	}
	if _, err := OpenRowModel(testutil.Backend(), whole, "cd"); err == nil || !strings.Contains(err.Error(), "method cd") {
		t.Errorf("a method the run did not train: %v, want an error naming it", err)
	}
	samples, err := vectors.Read(filepath.Join(whole, "ed", "samples.csv"), vectors.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"energy.png", "density.png", "samples.png", "data.png", ResultsFile} {
		if _, err := os.Stat(filepath.Join(whole, "ed", name)); err != nil {
			t.Error(err)
		}
	}
	if samples.N != 64 || samples.Columns[0] != "alcohol" || math.Abs(vectors.Fit(samples).Mean[0]-mu[0]) > 3*math.Sqrt(sd[0]) {
		t.Errorf("samples: %d rows, columns %v, mean alcohol %v (data %v)", samples.N, samples.Columns, vectors.Fit(samples).Mean[0], mu[0])
	}

	// The losses of steps on batches drawn here from a fresh model: each
	// epoch a PCG(seed 1, epoch) permutation of the standardised training
	// rows, whole batches of 32.
	fresh, err := density.New(testutil.Backend(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.SetGaussianBase(3); err != nil {
		t.Fatal(err)
	}
	var fromHere []float64
	for step := 0; len(fromHere) < 30; step++ {
		perEpoch := len(rec.Train) / 32
		epoch, b := step/perEpoch, step%perEpoch
		perm := rand.New(rand.NewPCG(1, uint64(epoch))).Perm(len(rec.Train))
		var batch []float32
		for _, k := range perm[b*32 : (b+1)*32] {
			for j := range 2 {
				batch = append(batch, float32((all.Row(rec.Train[k])[j]-mu[j])/math.Sqrt(sd[j])))
			}
		}
		loss, err := fresh.TrainStep(tensors.FromFlatDataAndDimensions(batch, 32, 2))
		if err != nil {
			t.Fatal(err)
		}
		fromHere = append(fromHere, loss)
	}
	if got := readLoggedLosses(t, whole); len(got) != 30 || testutil.MaxRelativeDiff(got, fromHere, 1e-3) > 1e-5 {
		t.Errorf("losses of the run stopped at step 1 and resumed:\n got %v\nwant %v", got, fromHere)
	}
}

// readLoggedLosses reads the ED method's logged losses.
func readLoggedLosses(t *testing.T, out string) []float64 {
	raw, err := os.ReadFile(training.Folder{Dir: filepath.Join(out, "ed")}.Metrics())
	if err != nil {
		t.Fatal(err)
	}
	var losses []float64
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		losses = append(losses, r.Loss)
	}
	return losses
}

// TestOptionsAreCheckedBeforeAnythingIsWritten checks that bad options and
// files are refused, naming the flag or the file, leaving no run folder.
func TestOptionsAreCheckedBeforeAnythingIsWritten(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("a,b\n1,2\n3\n"), 0o644)
	flat := filepath.Join(t.TempDir(), "flat.csv")
	os.WriteFile(flat, []byte("a,b\n1,2\n1,2\n1,2\n1,2\n1,2\n"), 0o644)
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"unknown method", func(o *Options) { o.Methods = []string{"mle"} }, `Options.Methods: "mle"`},
		{"ragged file", func(o *Options) { o.Data = bad }, bad + ", line 3: 1 fields, want 2"},
		{"no data", func(o *Options) { o.Data = "" }, "Options.Data: required"},
		{"batch over the rows", func(o *Options) { o.Batch = 1000 }, "batch 1000: want at most the"},
		{"bad setting", func(o *Options) { o.Set = "toy_ed_t=-1" }, "flag -set"},
		{"test fraction", func(o *Options) { o.TestFraction = 1 }, "test fraction 1"},
		{"constant columns", func(o *Options) { o.ConstantColumns = "drop" }, `Options.ConstantColumns "drop": want "set-aside" (the default) or "model"`},
		{"every column constant", func(o *Options) { o.Data, o.Batch = flat, 0 }, "Options.Data " + flat + ": each of its 2 columns holds one value in all 4 training rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			o := quick(wine2(t), out, 10)
			tc.edit(&o)
			_, err := Train(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}

// TestUnconvergedAISIsFlagged: a starved annealing (from N(0, 30²I), ten
// equally spaced temperatures, one untuned MALA step of 0.01 each) is
// marked in the
// method's results (ais.converged false, its warnings) and in the run's
// summary, and the run still ends with its numbers.
func TestUnconvergedAISIsFlagged(t *testing.T) {
	o := quick(wine2(t), t.TempDir(), 20)
	o.AIS = sampling.AISConfig{AnnealConfig: sampling.AnnealConfig{Chains: 64, Temperatures: 10, Spacing: sampling.SpacingLinear},
		BaseStd: 30, StepSize: 0.01, Metric: sampling.MetricIdentity, Transitions: 1}
	o.AISBase = AISBaseIsotropic
	results, err := Train(o)
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.AIS.Converged || len(r.AIS.Warnings) == 0 {
		t.Errorf("a starved AIS: converged %v, warnings %q", r.AIS.Converged, r.AIS.Warnings)
	}
	var written Results
	raw, _ := os.ReadFile(filepath.Join(o.Out, "ed", ResultsFile))
	if err := json.Unmarshal(raw, &written); err != nil || written.AIS.Converged || len(written.AIS.Warnings) == 0 {
		t.Errorf("%s: ais %+v (%v): want it unconverged, with warnings", ResultsFile, written.AIS, err)
	}
	rows := testutil.ReadCSV(t, filepath.Join(o.Out, SummaryFile))
	if got := rows[1][slices.Index(rows[0], "ais_converged")]; got != "false" {
		t.Errorf("%s: ais_converged %q, want false", SummaryFile, got)
	}
}

// TestFitBatch: the default batch is cut to a small table's training rows,
// with a note; one set above them is an error; otherwise the batch stays.
func TestFitBatch(t *testing.T) {
	for _, tc := range []struct {
		batch, rows, want int
		note, err         string
	}{
		{0, 120, 120, "all 120 training rows a step (fewer than the default 128)", ""},
		{0, 500, DefaultBatch, "", ""},
		{64, 120, 64, "", ""},
		{120, 120, 120, "", ""},
		{121, 120, 0, "", "batch 121: want at most the 120 training rows"},
	} {
		got, note, err := fitBatch(tc.batch, tc.rows)
		if got != tc.want || !strings.Contains(note, tc.note) || (tc.note == "") != (note == "") ||
			(tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("fitBatch(%d, %d) = %d, %q, %v; want %d, %q, %q", tc.batch, tc.rows, got, note, err, tc.want, tc.note, tc.err)
		}
	}
}

// TestIrisAtTheDefaults: scikit-learn's iris table (150 rows, 120 for
// training) trains at the default batch, which train-vectors used to
// refuse.
func TestIrisAtTheDefaults(t *testing.T) {
	o := quick("/usr/lib/python3/dist-packages/sklearn/datasets/data/iris.csv", t.TempDir(), 3)
	o.Read, o.Batch = vectors.ReadOptions{SkipRows: 1, Label: "last"}, 0
	results, err := Train(o)
	if err != nil || len(results) != 1 || results[0].Step != 3 {
		t.Fatalf("iris at the default batch: %v, %+v", err, results)
	}
}
