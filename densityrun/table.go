package densityrun

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"gonum.org/v1/gonum/stat"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/internal/progress"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// TableFile records, in a run folder of TrainTable, the table read, its
// schema, the split and the numbers' standardisation.
const TableFile = "table.json"

// Names of the files TrainTable writes in each method's folder.
const (
	// SamplesFile holds synthetic rows in the input's columns.
	SamplesFile = "samples.csv"
	// ScoresFile holds the held-out rows ranked by energy, least typical
	// first.
	ScoresFile = "scores.csv"
)

// DefaultTableSteps is TrainTable's training steps of each method, as the
// authors' tabular runs: on IBM's churn table, med's SDMetrics quality
// went from 0.926 at 5,000 steps to 0.966 (docs/tables.md).
const DefaultTableSteps = 20000

// DefaultTableSamples and DefaultTableSweeps are TrainTable's synthetic
// rows and their sampler's sweeps: 200 sweeps from training rows reach
// the model's own law; 20 give rows as good on a large table in a fifth
// of the time, but nearer their training rows on a small one
// (docs/tables.md).
const (
	DefaultTableSamples = 1000
	DefaultTableSweeps  = 200
)

// tableBaseStd is σ of the mixed models' Gaussian base N(0, σ²I), which
// keeps the numbers' density integrable (Options.BaseStd's default).
const tableBaseStd = 3

// TableOptions say what TrainTable trains on a user's mixed table.
// Zero fields take the defaults their comments give.
type TableOptions struct {
	// Data is the CSV file (optional when resuming: the run records it),
	// read with Read.
	Data string
	Read table.Options
	// Methods are density.MixedMethods to train (default both).
	Methods []string
	// Model and Set edit every method's configuration, as Options'.
	Model func(*density.Config) error
	Set   string
	// Out is the run folder; Backend the GoMLX backend.
	Out, Backend string
	// Steps, Batch, TestFraction, Seed and CheckpointEvery: as Options'
	// (defaults DefaultTableSteps, DefaultBatch or all the training rows,
	// 0.2, 1, 500).
	Steps, Batch    int
	TestFraction    float64
	Seed            int64
	CheckpointEvery int
	// Target, when set, is a categorical column the energy classifies:
	// p(y | rest) ∝ exp(−E), its accuracy and calibration on the held-out
	// rows.
	Target string
	// AIS estimates each model's log Z over mixed rows
	// (sampling.MixedAIS's defaults, its base the training rows' category
	// shares, seed Seed), for the held-out log-likelihood; NoAIS skips it.
	AIS   sampling.MixedAISConfig
	NoAIS bool
	// Samples synthetic rows (default DefaultTableSamples) are drawn by
	// Sweeps sweeps (default DefaultTableSweeps) of sampling.MixedSweeps
	// from training rows.
	Samples, Sweeps int
	// Stop: as Options.Stop.
	Stop <-chan os.Signal
}

// TableResults are what a method's model of a table measured.
type TableResults struct {
	Method string `json:"method"`
	Step   int64  `json:"step"`
	// TestEnergy and TrainEnergy are the mean energies of the held-out and
	// the training rows (no log Z: an energy, not a likelihood).
	TestEnergy  float64 `json:"test_energy"`
	TrainEnergy float64 `json:"train_energy"`
	// TestLogLikelihood is the mean log-likelihood of the held-out rows,
	// log p(x) = −E(u) − log Z + log|∂u/∂x|: the numbers' density on the
	// data's scale (u standardised) times the probability of the
	// categories (and of being at each spike); TestInterval its 95 %
	// bootstrap interval over the rows; TrainLogLikelihood the same of the
	// training rows. LogZ is MixedAIS's estimate, AIS it with its
	// evidence of convergence. All absent when the run skipped AIS.
	TestLogLikelihood  float64             `json:"test_loglik,omitempty"`
	TestInterval       *eval.Interval      `json:"test_loglik_interval,omitempty"`
	TrainLogLikelihood float64             `json:"train_loglik,omitempty"`
	LogZ               float64             `json:"log_z,omitempty"`
	AIS                *sampling.AISResult `json:"ais,omitempty"`
	// HeldOutAbove is the share of (held-out, training) pairs of rows in
	// which the held-out row has the higher energy (eval.RankShare): 0.5
	// when the model scores rows it never saw as it scores its training
	// rows, more when it has learned its training rows themselves;
	// HeldOutAboveZ is its distance from 0.5 in standard errors.
	HeldOutAbove  float64 `json:"heldout_above_training"`
	HeldOutAboveZ float64 `json:"heldout_above_training_z"`
	// Target's classification of the held-out rows by the energy, with the
	// share of its most frequent training category for comparison.
	Target         string  `json:"target,omitempty"`
	TargetAccuracy float64 `json:"target_accuracy,omitempty"`
	TargetECE      float64 `json:"target_ece,omitempty"`
	MajorityShare  float64 `json:"majority_share,omitempty"`
	// SampleStepSize and SampleAcceptance are the MALA step the samples'
	// chains tuned in their warm-up and their acceptance after it; absent
	// where no MALA step moved the rows (a table without numbers).
	SampleStepSize   float64  `json:"sample_step_size,omitempty"`
	SampleAcceptance *float64 `json:"sample_acceptance,omitempty"`
	// SamplesOutOfRange is, for each numeric column, the share of the
	// synthetic rows whose number the chains left outside the training
	// rows' range, written at its edge (table.Schema.OutOfRange): a few
	// hundredths near an edge that holds rows; more says the model's law
	// reaches past the rows, and train-table warns past OutOfRangeWarn.
	SamplesOutOfRange map[string]float64 `json:"samples_out_of_range,omitempty"`
	// ColumnShapes is the mean of Columns' scores: how the synthetic rows
	// match the training rows column by column (SDMetrics' Column Shapes).
	ColumnShapes float64       `json:"column_shapes"`
	Columns      []ColumnShape `json:"columns,omitempty"`
	// TrainSeconds is the training steps' time, summed over the metrics
	// log (each step once: a stopped and resumed run's too);
	// MeasureSeconds the time to measure the model and sample its rows,
	// in the invocation that wrote these results.
	TrainSeconds   float64 `json:"train_seconds"`
	MeasureSeconds float64 `json:"measure_seconds"`
}

// tableRecord is TableFile's content.
type tableRecord struct {
	Version      int                  `json:"version"`
	File         string               `json:"file"`
	Read         table.Options        `json:"read"`
	Schema       table.Schema         `json:"schema"`
	N            int                  `json:"rows"`
	Train        []int                `json:"train_rows"`
	Test         []int                `json:"test_rows"`
	Standardizer vectors.Standardizer `json:"standardizer"`
}

func (o TableOptions) withDefaults() (TableOptions, error) {
	if len(o.Methods) == 0 {
		o.Methods = density.MixedMethods
	}
	o.Steps, o.TestFraction, o.Seed = cmp.Or(o.Steps, DefaultTableSteps), cmp.Or(o.TestFraction, 0.2), cmp.Or(o.Seed, 1)
	o.CheckpointEvery, o.Samples, o.Sweeps = cmp.Or(o.CheckpointEvery, 500), cmp.Or(o.Samples, DefaultTableSamples), cmp.Or(o.Sweeps, DefaultTableSweeps)
	if err := checkMethods(o.Methods, density.MixedMethods); err != nil {
		return o, err
	}
	switch {
	case o.Out == "":
		return o, errors.New("Options.Out: the run folder is required")
	case o.Steps < 1 || o.Batch < 0 || o.CheckpointEvery < 1 || o.Samples < 1 || o.Sweeps < 1:
		return o, fmt.Errorf("densityrun: steps %d, batch %d, checkpoint-every %d, samples %d and sweeps %d: want ≥ 1", o.Steps, o.Batch, o.CheckpointEvery, o.Samples, o.Sweeps)
	}
	if err := o.AIS.Validate(); err != nil {
		return o, fmt.Errorf("Options.AIS: %w", err)
	}
	return o, o.Read.Check() // before the file is read, so not named as Options.Data's
}

// TrainTable trains and measures every mixed method of o on a user's table
// in the run folder o.Out, one writer at a time; a stopped run resumes.
// The table is read and checked, and the options too, before the folder is
// claimed. Each method's folder gets its checkpoint, ResultsFile,
// SamplesFile (synthetic rows in the input's columns) and ScoresFile.
func TrainTable(o TableOptions) ([]TableResults, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	rec, tab, isNew, err := openTable(o)
	if err != nil {
		return nil, err
	}
	if o.Target != "" && !isCategorical(rec.Schema, o.Target) {
		return nil, fmt.Errorf("Options.Target %q: want a categorical column of %v", o.Target, rec.Schema.Header())
	}
	columns := mixedColumns(rec.Schema)
	noise := numbersNoise(tab, rec)
	configs, err := density.ResumedConfigs(o.Methods, o.Set, checkpointsIn(o.Out), func(c *density.Config) error {
		c.Mixed.Columns = columns
		if c.Method == "med" && noise.T > 0 && isFresh(methodFolder(o.Out, c.Method)) {
			c.ED.T = noise.T
		}
		return nil
	}, o.Model)
	if err != nil {
		return nil, err
	}
	for _, c := range configs {
		if c.Method == "med" && noise.T > 0 && c.ED.T == noise.T {
			fmt.Println(noise)
		}
	}
	encoded, err := tab.Encode(rec.Standardizer)
	if err != nil {
		return nil, err
	}
	width := rec.Schema.Width()
	if len(encoded) != tab.N*width {
		return nil, fmt.Errorf("%s: rows of %d values encoded for a record of %d", o.Out, len(encoded)/max(tab.N, 1), width)
	}
	split := tableSplit{trainRows: tab.Rows(rec.Train), testRows: tab.Rows(rec.Test), train: rowsOf(encoded, width, rec.Train), test: rowsOf(encoded, width, rec.Test)}
	var note string
	if o.Batch, note, err = fitBatch(o.Batch, len(rec.Train)); err != nil {
		return nil, fmt.Errorf("Options.Batch: %w", err)
	}
	if note != "" {
		fmt.Println(note)
	}
	b, done, err := openRun(o.Backend, o.Out)
	if err != nil {
		return nil, err
	}
	defer done()
	if isNew {
		if err := atomicfile.WriteJSON(filepath.Join(o.Out, TableFile), rec); err != nil {
			return nil, err
		}
	}
	summary := tab.Summary()
	fmt.Print(summary)
	var all []TableResults
	for _, cfg := range configs {
		r, err := runTableMethod(b, cfg, rec, split, o)
		if err != nil {
			return nil, fmt.Errorf("method %s: %w", cfg.Method, err)
		}
		all = append(all, r)
	}
	return all, writeTableReport(o.Out, rec, summary, all)
}

// openTable reads the table and its split: the one recorded in the run
// folder, or a new one (isNew) to record once the folder is claimed.
func openTable(o TableOptions) (rec tableRecord, tab *table.Table, isNew bool, err error) {
	path := filepath.Join(o.Out, TableFile)
	switch err := readJSON(path, &rec); {
	case err == nil:
		if rec.Version != 1 {
			return rec, nil, false, fmt.Errorf("%s: version %d, want 1", path, rec.Version)
		}
		if rec.File, err = resumedFile(o.Data, rec.File, o.Out); err != nil {
			return rec, nil, false, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if o.Data == "" {
			return rec, nil, false, errors.New("Options.Data: required: the CSV file of the table")
		}
		abs, err := filepath.Abs(o.Data)
		if err != nil {
			return rec, nil, false, err
		}
		rec, isNew = tableRecord{Version: 1, File: abs, Read: o.Read}, true
	default:
		return rec, nil, false, err
	}
	if tab, err = table.Read(rec.File, rec.Read); err != nil {
		return rec, nil, false, fmt.Errorf("Options.Data: %w", err)
	}
	if !isNew {
		if tab.N != rec.N || !slices.EqualFunc(tab.Schema.Columns, rec.Schema.Columns, sameColumn) {
			return rec, nil, false, fmt.Errorf("%s: the run read %d rows of %v; %s now has %d rows of %v", path, rec.N, rec.Schema.Header(), rec.File, tab.N, tab.Schema.Header())
		}
		tab.Schema = rec.Schema // the run's encoding (its spikes, say), as recorded
		return rec, tab, false, nil
	}
	rec.Schema, rec.N = tab.Schema, tab.N
	numbers := tab.NumericSet()
	if rec.Train, rec.Test, err = numbers.Split(o.TestFraction, uint64(o.Seed)); err != nil {
		return rec, nil, false, fmt.Errorf("Options.TestFraction: %w", err)
	}
	if numbers.D > 0 {
		rec.Standardizer = vectors.Fit(numbers.Subset(rec.Train))
	} else {
		rec.Standardizer = vectors.Standardizer{Mean: []float64{}, Std: []float64{}}
	}
	return rec, tab, true, nil
}

func sameColumn(a, b table.Column) bool {
	return a.Name == b.Name && a.Kind == b.Kind && a.Structure == b.Structure && slices.Equal(a.Categories, b.Categories)
}

func isCategorical(s table.Schema, name string) bool {
	return slices.ContainsFunc(s.Columns, func(c table.Column) bool { return c.Name == name && c.Kind == table.Categorical })
}

// mixedColumns is the schema's categorical blocks (its categorical
// columns' and its spikes') as density's settings.
func mixedColumns(s table.Schema) density.MixedColumns {
	var out density.MixedColumns
	for _, b := range s.Blocks() {
		out = append(out, density.MixedColumn{Categories: b.Categories, Structure: losses.CategoryGraph(b.Structure)})
	}
	return out
}

// NoiseGaps is how many median gaps between neighbouring training rows
// the standard deviation of med's Gaussian steps on the numbers spans by
// default, up to one (the standardised columns' own spread, past which
// the noise blurs the table into its mean): the steps then reach past a
// row's neighbours, so that the model cannot single out training rows.
// Five keeps churn's chosen variance (σ 0.1 at a gap of 0.02); the
// penguins' gap of 0.33 gives σ 1 (docs/tables.md).
const NoiseGaps = 5

// numbersNoiseQueries are the training rows whose nearest neighbour
// measures the gap: enough for its median within a few per cent.
const numbersNoiseQueries = 2000

// tableNoise is med's default variance of the numbers' Gaussian steps on a
// table, with the gap it was found from.
type tableNoise struct {
	T, Gap float64
}

// numbersNoise returns the variance min((NoiseGaps·gap)², 1), gap the
// median distance between neighbouring training rows' standardised
// numbers; T is 0 (keep density.DefaultMixedED's) for a table without two
// distinct rows of numbers.
func numbersNoise(tab *table.Table, rec tableRecord) tableNoise {
	numbers := tab.NumericSet().Subset(rec.Train)
	if numbers.D == 0 {
		return tableNoise{}
	}
	for i, v := range numbers.Values {
		j := i % numbers.D
		numbers.Values[i] = (v - rec.Standardizer.Mean[j]) / rec.Standardizer.Std[j]
	}
	gap := numbers.MedianNeighbourDistance(numbersNoiseQueries, 1)
	return tableNoise{T: min(math.Pow(NoiseGaps*gap, 2), 1), Gap: gap}
}

func (n tableNoise) String() string {
	capped := ""
	if NoiseGaps*n.Gap > 1 {
		capped = ", cut to the columns' spread, 1"
	}
	return fmt.Sprintf("med: the numbers' noise variance toy_ed_t = %.4g: σ = %d × %.4g, the median distance between neighbouring training rows%s (-set toy_ed_t=… to choose)", n.T, NoiseGaps, n.Gap, capped)
}

// tableSplit is a run's rows as its methods use them: the training and
// held-out rows as read (their lines and values) and as encoded.
type tableSplit struct {
	trainRows, testRows *table.Table
	train, test         []float32
}

// rowsOf is the encoded rows of indices.
func rowsOf(encoded []float32, width int, indices []int) []float32 {
	out := make([]float32, 0, len(indices)*width)
	for _, i := range indices {
		out = append(out, encoded[i*width:(i+1)*width]...)
	}
	return out
}

// runTableMethod trains one method (resuming its checkpoint), then
// measures it and writes its rows.
func runTableMethod(b backends.Backend, cfg density.Config, rec tableRecord, split tableSplit, o TableOptions) (TableResults, error) {
	folder := methodFolder(o.Out, cfg.Method)
	if err := os.MkdirAll(folder.Dir, 0o755); err != nil {
		return TableResults{}, err
	}
	model, err := openModel(b, cfg, folder, o.Seed, tableBaseStd)
	if err != nil {
		return TableResults{}, err
	}
	spread := slices.Clone(split.train)
	rec.Schema.SpreadSpikes(spread, uint64(o.Seed))
	trained, err := train1(model, cfg.Method, spread, rec.Schema.Width(), schedule{o.Steps, o.Batch, o.CheckpointEvery, o.Seed, o.Stop}, folder)
	if err != nil {
		return TableResults{}, err
	}
	start := time.Now()
	r, err := measureTable(b, model, cfg, rec, split, o)
	if err != nil {
		return r, err
	}
	r.TrainSeconds, r.MeasureSeconds = trained, time.Since(start).Seconds()
	fmt.Printf("%s: held-out energy %.4f (training %.4f)", cfg.Method, r.TestEnergy, r.TrainEnergy)
	if r.AIS != nil {
		fmt.Printf("; held-out log-likelihood %.4f [%.4f, %.4f] nats a row (training %.4f)", r.TestLogLikelihood, r.TestInterval.Lo, r.TestInterval.Hi, r.TrainLogLikelihood)
	}
	if r.Target != "" {
		fmt.Printf("; %s classified with accuracy %.4f (majority %.4f), ECE %.4f", r.Target, r.TargetAccuracy, r.MajorityShare, r.TargetECE)
	}
	fmt.Println()
	if w := r.Overfitting(); w != "" {
		fmt.Printf("%s: warning: %s\n", cfg.Method, w)
	}
	return r, atomicfile.WriteJSON(filepath.Join(folder.Dir, ResultsFile), r)
}

// Overfitting says, when the held-out rows' energies sit above the
// training rows' in at least 55 % of pairs and 3 standard errors from
// half, that the model has learned its training rows, and what to try;
// else it is empty. On the penguins (333 rows) at σ 0.1 med's shares were
// 0.72–0.82 and CD's 0.80–0.99; churn's, adult's and bank's 0.49–0.51
// (docs/tables.md).
func (r TableResults) Overfitting() string {
	if r.HeldOutAbove < 0.55 || r.HeldOutAboveZ < 3 {
		return ""
	}
	return fmt.Sprintf("held-out rows have the higher energy in %.0f %% of pairs with training rows (%.1f standard errors from half): the model has learned its training rows; its synthetic rows may copy them (more noise: -set toy_ed_t=…; fewer -steps)", 100*r.HeldOutAbove, r.HeldOutAboveZ)
}

// measureTable computes the energies, the target's classification, the
// synthetic rows (compared with the training rows, trainRows, column by
// column) and the ranked held-out rows.
func measureTable(b backends.Backend, model *density.Model, cfg density.Config, rec tableRecord, split tableSplit, o TableOptions) (TableResults, error) {
	train, test := split.train, split.test
	width := rec.Schema.Width()
	r := TableResults{Method: cfg.Method, Step: model.Step()}
	energies, err := model.Energies(slices.Concat(test, train), width)
	if err != nil {
		return r, err
	}
	nTest := len(test) / width
	testE, trainE := energies[:nTest], energies[nTest:]
	r.TestEnergy, r.TrainEnergy = stat.Mean(testE, nil), stat.Mean(trainE, nil)
	if r.HeldOutAbove, r.HeldOutAboveZ, err = eval.RankShare(testE, trainE); err != nil {
		return r, fmt.Errorf("the held-out rows' energies against the training rows': %w", err)
	}
	if o.Target != "" {
		if err := classify(model, rec, train, test, o.Target, &r); err != nil {
			return r, err
		}
	}
	if !o.NoAIS {
		if err := tableLogLikelihood(b, model, cfg, rec, train, test, testE, trainE, o, &r); err != nil {
			return r, fmt.Errorf("the log-likelihood: %w", err)
		}
	}
	folder := filepath.Join(o.Out, cfg.Method)
	if err := writeScores(filepath.Join(folder, ScoresFile), split.testRows, testE); err != nil {
		return r, err
	}
	samples, err := sampleRows(b, model, cfg, rec, rowDraw{rows: o.Samples, sweeps: o.Sweeps, seed: o.Seed, starts: train, box: rangeBox(rec), stop: o.Stop}, &r)
	if err != nil {
		return r, err
	}
	r.SamplesOutOfRange = rec.Schema.OutOfRange(samples, rec.Standardizer)
	for _, w := range outOfRangeWarnings(cfg.Method, rec.Schema, r.SamplesOutOfRange) {
		fmt.Println(w)
	}
	path := filepath.Join(folder, SamplesFile)
	if err := writeRows(path, rec, samples); err != nil {
		return r, err
	}
	synthetic, err := table.ReadRows(path, rec.Schema, table.Options{}) // the rows as the user gets them
	if err != nil {
		// A sampler gone astray (a NaN): the model's results stand, the
		// rows are not compared.
		fmt.Printf("%s: warning: the synthetic rows are not compared with the training rows: %v\n", cfg.Method, err)
		return r, nil
	}
	if r.Columns, err = columnShapes(split.trainRows, synthetic, folder); err != nil {
		return r, err
	}
	for _, c := range r.Columns {
		r.ColumnShapes += c.Score / float64(len(r.Columns))
	}
	return r, nil
}

// OutOfRangeWarn is the share of synthetic rows with a number outside the
// training rows' range past which train-table warns: its benchmark's
// good runs left at most 0.11 there (a smooth law spilling past an edge
// that holds rows), one whose chains found a basin of the energy beyond
// the rows 0.80 (docs/tables.md).
const OutOfRangeWarn = 0.25

// outOfRangeWarnings are the warnings for each column whose share of
// synthetic numbers outside the training rows' range passes
// OutOfRangeWarn, in the schema's order.
func outOfRangeWarnings(method string, s table.Schema, shares map[string]float64) []string {
	var out []string
	for _, c := range s.Columns {
		if share, ok := shares[c.Name]; ok && share > OutOfRangeWarn {
			out = append(out, fmt.Sprintf("%s: warning: %.0f %% of the synthetic rows' %s fell outside the training rows' range [%g, %g] and are written at its edge: the model's law reaches past the rows (fewer -sweeps keep the chains nearer them; docs/tables.md)",
				method, 100*share, c.Name, c.Range[0], c.Range[1]))
		}
	}
	return out
}

// tableLogLikelihood estimates the model's log Z by MixedAIS, from a base
// of standard normal numbers and the training rows' category shares, and
// sets r's log-likelihoods of the held-out and training rows (test and
// train, encoded, of energies testE and trainE).
func tableLogLikelihood(b backends.Backend, model *density.Model, cfg density.Config, rec tableRecord, train, test []float32, testE, trainE []float64, o TableOptions, r *TableResults) error {
	layout := mixedLayout(rec.Schema)
	width := layout.Width()
	aisCfg := o.AIS
	aisCfg.Seed, aisCfg.Stop, aisCfg.Progress = cmp.Or(aisCfg.Seed, o.Seed), o.Stop, cfg.Method+": AIS temperatures"
	if aisCfg.Categories == nil {
		aisCfg.Categories = categoryShares(layout, train)
	}
	fmt.Printf("%s: measuring: held-out log-likelihood by AIS over mixed rows\n", cfg.Method)
	ais, err := sampling.MixedAIS(b, model.Context(), func(ctx *context.Context) losses.EnergyFn { return density.AveragedEnergy(ctx, cfg) }, layout, aisCfg)
	if errors.Is(err, sampling.ErrStopped) {
		return fmt.Errorf("%s: AIS: %w", cfg.Method, training.ErrStopped) // a rerun measures anew
	}
	if err != nil {
		return err
	}
	reportAIS(cfg.Method, ais)
	r.LogZ, r.AIS = ais.LogZ, &ais
	logLik := func(rows []float32, energies []float64) []float64 {
		out := make([]float64, len(energies))
		for i, e := range energies {
			out[i] = rec.logLikelihood(rows[i*width:(i+1)*width], e, ais.LogZ)
		}
		return out
	}
	testLL := logLik(test, testE)
	r.TestLogLikelihood, r.TrainLogLikelihood = stat.Mean(testLL, nil), stat.Mean(logLik(train, trainE), nil)
	interval, err := eval.MeanInterval(testLL, 1000, uint64(o.Seed))
	r.TestInterval = &interval
	return err
}

// logLikelihood is the log-likelihood on the data's scale of an encoded
// row of energy e under a model of log normaliser logZ: −e − log Z plus
// the row's Schema.LogJacobian (a number at its spike a probability, the
// others densities).
func (rec tableRecord) logLikelihood(row []float32, e, logZ float64) float64 {
	return -e - logZ + rec.Schema.LogJacobian(row, rec.Standardizer)
}

// categoryShares is each categorical column's category shares among the
// encoded rows: probabilities, as MixedAIS's base takes them (it floors
// each at 10⁻³, so a category no training row has keeps a little mass).
func categoryShares(layout sampling.MixedLayout, rows []float32) [][]float64 {
	width := layout.Width()
	at, n := layout.Numeric, len(rows)/width
	var out [][]float64
	for _, k := range layout.Categories {
		shares := make([]float64, k)
		for i := range n {
			shares[slices.Index(rows[i*width+at:i*width+at+k], 1)] += 1 / float64(n)
		}
		out = append(out, shares)
		at += k
	}
	return out
}

// mixedLayout is the schema's encoded rows as the mixed samplers see
// them: the numbers, then each categorical block.
func mixedLayout(s table.Schema) sampling.MixedLayout {
	layout := sampling.MixedLayout{Numeric: s.Width(), Categories: mixedColumns(s).Categories()}
	for _, k := range layout.Categories {
		layout.Numeric -= k
	}
	return layout
}

// classify sets the target column's classification of the held-out rows:
// each row's energies with the target set to every category in turn.
func classify(model *density.Model, rec tableRecord, train, test []float32, target string, r *TableResults) error {
	width := rec.Schema.Width()
	at, k := blockOf(rec.Schema, target)
	n := len(test) / width
	labels := make([]int, n)
	for i := range n {
		labels[i] = slices.Index(test[i*width+at:i*width+at+k], 1)
	}
	energies, err := model.Energies(targetVariants(test, width, at, k), width)
	if err != nil {
		return err
	}
	counts := make([]float64, k)
	for i := range len(train) / width {
		counts[slices.Index(train[i*width+at:i*width+at+k], 1)]++
	}
	r.Target, r.MajorityShare = target, slices.Max(counts)/float64(len(train)/width)
	r.TargetECE, r.TargetAccuracy, err = eval.ExpectedCalibrationError(softmaxOfNegatives(energies, k), k, labels, 10)
	return err
}

// targetVariants is each encoded row (width values) with the categorical
// block of k categories at at set to every category in turn: k rows a row.
func targetVariants(encoded []float32, width, at, k int) []float32 {
	n := len(encoded) / width
	variants := make([]float32, 0, n*k*width)
	for i := range n {
		row := encoded[i*width : (i+1)*width]
		for c := range k {
			v := slices.Clone(row)
			clear(v[at : at+k])
			v[at+c] = 1
			variants = append(variants, v...)
		}
	}
	return variants
}

// softmaxOfNegatives turns the energies of k variants a row into
// p(c) ∝ exp(−E_c), k probabilities a row.
func softmaxOfNegatives(energies []float64, k int) []float64 {
	probs := make([]float64, len(energies))
	for i := range len(energies) / k {
		e := energies[i*k : (i+1)*k]
		lo := slices.Min(e)
		var z float64
		for _, v := range e {
			z += math.Exp(lo - v)
		}
		for c, v := range e {
			probs[i*k+c] = math.Exp(lo-v) / z
		}
	}
	return probs
}

// blockOf is where the categorical column name's one-hot block starts in
// an encoded row, and its width.
func blockOf(s table.Schema, name string) (at, k int) {
	for _, b := range s.Blocks() {
		if c := s.Columns[b.Column]; c.Name == name && c.Kind == table.Categorical {
			return b.At, b.Categories
		}
	}
	panic(fmt.Errorf("densityrun: no categorical column %q", name))
}

// rowDraw says which rows sampleRows draws: rows chains started at rows
// of starts (encoded rows in box, drawn with replacement by seed), sweeps
// sweeps, kept in box (the training rows' range, table.Schema.NumberBox,
// and any condition's: the law given it); a stop between blocks ends it.
type rowDraw struct {
	rows, sweeps int
	seed         int64
	starts       []float32
	box          sampling.Box
	stop         <-chan os.Signal
}

// rangeBox is the training rows' range of each number (a number at its
// spike free): the box train-table's chains stay in, so that what Decode
// writes needs no clamping and a basin of the energy past the rows
// cannot draw them away.
func rangeBox(rec tableRecord) sampling.Box {
	var box sampling.Box
	box.Lo, box.Hi, box.FreeAt = rec.Schema.NumberBox(rec.Standardizer)
	return box
}

// sampleRows draws d.rows synthetic rows: chains started at d.starts'
// rows, d.sweeps sweeps of sampling.MixedSweeps (cfg.Mixed.MALASteps MALA
// steps each), the first quarter of them a warm-up that tunes MALA's step
// toward an acceptance of 0.574 from cfg.Mixed.StepSize
// (sampling.TuneMixed; a sharp energy accepted 3 % of a fixed step of
// 0.1), the rest at the tuned step in compiled blocks of 10; a stop
// (d.stop) between blocks ends it with training.ErrStopped. The chains
// stay in d.box (sampling.Confine). It sets r's sample step size and
// acceptance.
func sampleRows(b backends.Backend, model *density.Model, cfg density.Config, rec tableRecord, d rowDraw, r *TableResults) ([]float32, error) {
	width := rec.Schema.Width()
	layout := mixedLayout(rec.Schema)
	rng := rand.New(rand.NewPCG(uint64(d.seed), 0x73616d70))
	start := make([]float32, 0, d.rows*width)
	for range d.rows {
		i := rng.IntN(len(d.starts) / width)
		start = append(start, d.starts[i*width:(i+1)*width]...)
	}
	x := tensors.FromFlatDataAndDimensions(start, d.rows, width)
	ctx := model.Context()
	energy := func(ctx *context.Context) losses.EnergyFn {
		return sampling.Confine(density.AveragedEnergy(ctx, cfg), d.box)
	}
	step, sweeps := cfg.Mixed.StepSize, d.sweeps
	mala := layout.Numeric > 0 && cfg.Mixed.MALASteps > 0
	if warmup := d.sweeps / 4; warmup > 0 && mala {
		fmt.Printf("%s: tuning MALA's step over %d sweeps of %d synthetic rows\n", cfg.Method, warmup, d.rows)
		tuned, after, err := sampling.TuneMixed(b, ctx, energy(ctx), x, layout, cfg.Mixed.MALASteps,
			sampling.TuneConfig{Target: 0.574, InitialStepSize: step, WarmupSteps: warmup})
		if err != nil {
			return nil, err
		}
		x.FinalizeAll()
		x, step, sweeps = after, tuned, d.sweeps-warmup
	}
	const block = 10
	exec, err := context.NewExec(b, ctx, func(ctx *context.Context, x *Node) []*Node {
		y, acc := sampling.MixedSweeps(ctx, energy(ctx), x, layout, Scalar(x.Graph(), x.DType(), step), block, cfg.Mixed.MALASteps)
		return []*Node{y, acc}
	})
	if err != nil {
		return nil, err
	}
	var acceptance float64
	blocks := (sweeps + block - 1) / block
	bar := progress.New(fmt.Sprintf("%s: sweeps of %d synthetic rows", cfg.Method, d.rows), blocks*block)
	for range blocks {
		select { // the rows can take minutes: a stop ends them (a rerun samples anew)
		case <-d.stop:
			return nil, fmt.Errorf("%s: sampling rows: %w", cfg.Method, training.ErrStopped)
		default:
		}
		outs, err := exec.Exec(x)
		if err != nil {
			return nil, err
		}
		x.FinalizeAll()
		x = outs[0]
		for _, v := range tensors.MustCopyFlatData[float32](outs[1]) {
			acceptance += float64(v) / float64(blocks*d.rows)
		}
		outs[1].FinalizeAll()
		bar.Add(block)
	}
	if mala {
		r.SampleStepSize, r.SampleAcceptance = step, &acceptance
	}
	return tensors.MustCopyFlatData[float32](x), nil
}

// writeRows writes encoded rows as a CSV of the input's columns.
func writeRows(path string, rec tableRecord, encoded []float32) error {
	rows, err := rec.Schema.Decode(encoded, rec.Standardizer)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(rec.Schema.Header())
		cw.WriteAll(rows)
		return cw.Error()
	})
}

// writeScores writes the held-out rows ranked by energy, highest (least
// typical) first: rank, the row's line in the file, energy, then the row
// as read (score-table's layout).
func writeScores(path string, heldOut *table.Table, energies []float64) error {
	rows := make([][]string, heldOut.N)
	for i := range rows {
		rows[i] = append([]string{strconv.Itoa(heldOut.Lines[i])}, heldOut.Fields(i)...)
	}
	return writeRanked(path, append([]string{"rank", "line", "energy"}, heldOut.Schema.Header()...), rows, energies)
}
