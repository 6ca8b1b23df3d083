// Package densityrun trains energy-based density models of a user's table
// of vectors (package vectors: CSV, .npy, .npz) in a run folder, as
// cmd/train-vectors does: one model per method (ED, SM, CD, DSM) on the
// standardised training rows, each resumable from its checkpoint, then
// the held-out log-likelihood by annealed importance sampling with its
// interval, exact (MALA) samples written back in the input's format and
// scale, and pictures of data against samples.
package densityrun

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// Options say what Train trains and how it measures it. Zero fields take
// the defaults their comments give.
type Options struct {
	// Data is the CSV, .npy or .npz file of vectors (optional when
	// resuming: the run records it), read with Read.
	Data string
	Read vectors.ReadOptions
	// Methods are the density methods to train, each in its own folder
	// (default: density.Methods, ED, SM, CD and DSM).
	Methods []string
	// Model, when set, edits every method's configuration, which starts as
	// density.DefaultConfig(method) (the paper's toy MLP, 4 × 128, and its
	// losses' settings): train-vectors applies the short flags of
	// density's settings table there (density.DeclareFlags).
	Model func(*density.Config) error
	// Set is GoMLX context settings applied to every method's
	// configuration after Model (density.Config.WithSettings).
	Set string
	// Out is the run folder.
	Out string
	// Backend is the GoMLX backend (backend.Resolve's syntax; "" for auto).
	Backend string
	// Steps and Batch are each method's training steps (default 5000) and
	// rows per step (default DefaultBatch, or all the training rows when
	// they are fewer; a Batch set above them is an error).
	Steps, Batch int
	// TestFraction is the fraction of the rows held out (default 0.2);
	// Seed chooses them and seeds everything else (default 1).
	TestFraction float64
	Seed         int64
	// BaseStd is σ of the models' Gaussian base N(0, σ²I) on the
	// standardised scale (default 3; density.Model.SetGaussianBase).
	BaseStd float64
	// CheckpointEvery is how often, in steps, a method checkpoints
	// (default 500); it always does at its end.
	CheckpointEvery int
	// AIS estimates each model's log Z (sampling.AIS's defaults, seed
	// Seed) from the base AISBase.
	AIS sampling.AISConfig
	// AISBase is AIS's base: AISBaseData (the default, ""), the Gaussian
	// of the standardised training rows, or AISBaseIsotropic, the models'
	// own base N(0, BaseStd²I).
	AISBase string
	// ConstantColumns says what becomes of a column that holds one value
	// in every training row: ConstantSetAside (the default, "") sets it
	// aside, ConstantModel models it as the others. A resumed run keeps
	// the choice its data record holds; a run recorded before this option
	// existed models every column.
	ConstantColumns string
	// Samples is the number of samples written back (default 1000), drawn
	// by MALA after SampleSteps steps (default 500) from the base, with
	// its step size tuned during the first half to an acceptance of 0.574.
	Samples, SampleSteps int
	// Stop ends the run at the end of the current step, checkpointed, when
	// it receives; nil: never.
	Stop <-chan os.Signal
}

// DefaultBatch is the rows per training step when Options.Batch is 0 and
// the training rows are at least as many.
const DefaultBatch = 128

// withDefaults fills in the defaults and checks the options, naming the
// field at fault.
// checkMethods reports the first of methods that is not one of allowed.
func checkMethods(methods, allowed []string) error {
	for _, m := range methods {
		if !slices.Contains(allowed, m) {
			return fmt.Errorf("Options.Methods: %q, want some of %v", m, allowed)
		}
	}
	return nil
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Methods) == 0 {
		o.Methods = density.Methods
	}
	o.Steps, o.TestFraction, o.Seed = cmp.Or(o.Steps, 5000), cmp.Or(o.TestFraction, 0.2), cmp.Or(o.Seed, 1)
	o.BaseStd, o.CheckpointEvery = cmp.Or(o.BaseStd, 3), cmp.Or(o.CheckpointEvery, 500)
	o.Samples, o.SampleSteps = cmp.Or(o.Samples, 1000), cmp.Or(o.SampleSteps, 500)
	o.AIS.BaseStd, o.AIS.Seed, o.AISBase = cmp.Or(o.AIS.BaseStd, o.BaseStd), cmp.Or(o.AIS.Seed, o.Seed), cmp.Or(o.AISBase, AISBaseData)
	o.ConstantColumns = cmp.Or(o.ConstantColumns, ConstantSetAside)
	if err := checkMethods(o.Methods, density.Methods); err != nil {
		return o, err
	}
	switch {
	case o.Out == "":
		return o, errors.New("Options.Out: the run folder is required")
	case o.Steps < 1 || o.Batch < 0 || o.CheckpointEvery < 1 || o.Samples < 1 || o.SampleSteps < 2:
		return o, fmt.Errorf("densityrun: steps %d, batch %d, checkpoint-every %d, samples %d and sample steps %d: want ≥ 1 (sample steps ≥ 2)", o.Steps, o.Batch, o.CheckpointEvery, o.Samples, o.SampleSteps)
	case !(o.BaseStd > 0):
		return o, fmt.Errorf("Options.BaseStd %v: want a number > 0", o.BaseStd)
	case o.AISBase != AISBaseData && o.AISBase != AISBaseIsotropic:
		return o, fmt.Errorf("Options.AISBase %q: want %q or %q", o.AISBase, AISBaseData, AISBaseIsotropic)
	case o.ConstantColumns != ConstantSetAside && o.ConstantColumns != ConstantModel:
		return o, fmt.Errorf("Options.ConstantColumns %q: want %q (the default) or %q", o.ConstantColumns, ConstantSetAside, ConstantModel)
	}
	return o, o.AIS.Validate()
}

// fitBatch is the rows per step for a batch setting (0: the default) and
// the training rows: the default is cut to the rows, with a note saying
// so; a batch set above them is an error.
func fitBatch(batch, rows int) (int, string, error) {
	switch {
	case batch > rows:
		return 0, "", fmt.Errorf("batch %d: want at most the %d training rows", batch, rows)
	case batch == 0 && rows < DefaultBatch:
		return rows, fmt.Sprintf("batch: all %d training rows a step (fewer than the default %d)", rows, DefaultBatch), nil
	case batch == 0:
		return DefaultBatch, "", nil
	}
	return batch, "", nil
}

// configs returns each method's validated configuration, a resumed
// method's from its checkpoint's settings.
func (o Options) configs() ([]density.Config, error) {
	return density.ResumedConfigs(o.Methods, o.Set, checkpointsIn(o.Out), o.Model)
}

// isFresh reports whether a method's folder holds no checkpoint yet: a
// new run, not one to resume.
func isFresh(folder training.Folder) bool {
	_, err := checkpoint.Latest(folder.Checkpoints())
	return errors.Is(err, os.ErrNotExist)
}

// methodFolder is a method's folder in the run folder out.
func methodFolder(out, method string) training.Folder {
	return training.Folder{Dir: filepath.Join(out, method)}
}

// checkpointsIn names each method's checkpoint folder in the run folder out.
func checkpointsIn(out string) func(method string) string {
	return func(method string) string { return methodFolder(out, method).Checkpoints() }
}

// Train trains and measures every method of o in the run folder o.Out,
// one writer at a time; a stopped run resumes each method from its
// checkpoint. It returns each method's results, also written as
// ResultsFile in its folder and, all methods together, as SummaryFile.
func Train(o Options) ([]Results, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	configs, err := o.configs()
	if err != nil {
		return nil, err
	}
	data, isNew, err := openData(o)
	if err != nil {
		return nil, err
	}
	var note string
	if o.Batch, note, err = fitBatch(o.Batch, data.train.N); err != nil {
		return nil, err
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
		if err := data.record.write(o.Out); err != nil {
			return nil, err
		}
	}
	fmt.Printf("%s: %d rows of %d values, %d for training and %d held out (seed %d), standardised\n",
		data.all.Name, data.all.N, data.all.D, data.train.N, data.test.N, data.record.Seed)
	if note := data.columnsNote(o.ConstantColumns); note != "" {
		fmt.Println(note)
	}
	var all []Results
	for _, cfg := range configs {
		r, err := runMethod(b, cfg, data, o)
		if err != nil {
			return nil, fmt.Errorf("method %s: %w", cfg.Method, err)
		}
		all = append(all, r)
	}
	return all, writeSummary(o.Out, all)
}

// runMethod trains one method (resuming its checkpoint), then measures it
// and draws its pictures.
func runMethod(b backends.Backend, cfg density.Config, data *runData, o Options) (Results, error) {
	folder := methodFolder(o.Out, cfg.Method)
	if err := os.MkdirAll(folder.Dir, 0o755); err != nil {
		return Results{}, err
	}
	model, err := openModel(b, cfg, folder, o.Seed, o.BaseStd)
	if err != nil {
		return Results{}, err
	}
	if _, err := train1(model, cfg.Method, data.trainPoints, data.dim, schedule{o.Steps, o.Batch, o.CheckpointEvery, o.Seed, o.Stop}, folder); err != nil {
		return Results{}, err
	}
	fmt.Printf("%s: measuring: held-out log-likelihood by AIS, %d MALA samples\n", cfg.Method, o.Samples)
	r, samples, err := measure(b, model, cfg, data, o)
	if err != nil {
		return r, err
	}
	if err := writeOutputs(folder.Dir, model, data, samples, r); err != nil {
		return r, err
	}
	fmt.Printf("%s: held-out log-likelihood %.4f (95 %% interval %.4f to %.4f) per row\n", cfg.Method, r.TestLogLikelihood, r.TestInterval.Lo, r.TestInterval.Hi)
	return r, nil
}

// openModel makes the method's model with its Gaussian base N(0, σ²I),
// σ = baseStd, and restores its checkpoint, when there is one.
func openModel(b backends.Backend, cfg density.Config, folder training.Folder, seed int64, baseStd float64) (*density.Model, error) {
	model, err := density.New(b, cfg, seed)
	if err != nil {
		return nil, err
	}
	if err := model.SetGaussianBase(baseStd); err != nil {
		return nil, err
	}
	if isFresh(folder) {
		return model, nil
	}
	if err := model.Restore(folder.Checkpoints()); err != nil {
		return nil, fmt.Errorf("resuming: %w; use another -out or the same flags", err)
	}
	fmt.Printf("%s: resuming from %s at step %d\n", cfg.Method, folder.Checkpoints(), model.Step())
	return model, nil
}

// schedule is how a method's model trains: to Steps steps of Batch rows
// (batches seeded by Seed), checkpointing every Every steps, stopping early
// on Stop.
type schedule struct {
	Steps, Batch, Every int
	Seed                int64
	Stop                <-chan os.Signal
}

// train1 trains the method's model on the points (rows of dim values) to
// s.Steps (Fit), from the batch its step is at, and draws its loss; it
// returns the training steps' time, summed over the metrics log (each
// step once, however many invocations trained them).
func train1(model *density.Model, method string, points []float32, dim int, s schedule, folder training.Folder) (seconds float64, err error) {
	batches, err := newPointBatches(points, dim, s.Batch, uint64(s.Seed))
	if err != nil {
		return 0, err
	}
	if step := model.Step(); step < int64(s.Steps) {
		batches.seek(int(step))
		fmt.Printf("%s: training from step %d to %d → %s\n", method, step, s.Steps, folder.Dir)
	}
	history, err := Fit(model, batches, FitOptions{Folder: folder, To: int64(s.Steps), Every: int64(s.Every), Stop: s.Stop})
	if err != nil {
		return 0, err
	}
	for _, r := range history {
		seconds += r.Seconds
	}
	return seconds, plotLoss(folder, "Training loss", history)
}

// samplesName is the samples file of an input file, in its format.
func samplesName(input string) string {
	for _, f := range []string{".npy", ".npz"} {
		if strings.HasSuffix(strings.ToLower(input), f) {
			return "samples" + f
		}
	}
	return "samples.csv"
}
