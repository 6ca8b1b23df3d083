// Package lebmrun trains a latent EBM prior model in a run folder, as
// cmd/train-lebm does: from the data set's files to checkpoints, metrics,
// pictures and the run's report, resuming a stopped run exactly.
package lebmrun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	gomlxplots "github.com/gomlx/gomlx/ui/plots"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/celeba"
	"github.com/edlebm/edlebm/datasets/download"
	"github.com/edlebm/edlebm/datasets/imagefolder"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// Record is one line of the run's metrics log (training.MetricsFile).
type Record struct {
	Step              int64   `json:"step"`
	Epoch             int64   `json:"epoch"`
	GeneratorLoss     float64 `json:"generator_loss"`
	PriorLoss         float64 `json:"prior_loss"`
	PosteriorEnergy   float64 `json:"posterior_energy"`
	PriorEnergy       float64 `json:"prior_energy,omitempty"`
	ReconstructionMSE float64 `json:"reconstruction_mse"`
	Seconds           float64 `json:"seconds"`
	// TestReconstructionMSE is set on the last step of an epoch: per-pixel
	// MSE of the reconstruction grid's test images (test-time posterior).
	TestReconstructionMSE float64 `json:"test_reconstruction_mse,omitempty"`
}

// Options are what Train does: the model (Config, whose Data names the
// data set) and the run around it.
type Options struct {
	// Config is the model's configuration; Config.Data names the data set
	// and Config.AnomalyHoldout, when ≥ 0, runs the anomaly protocol
	// (train and test pooled, that class held out).
	Config lebm.Config
	// DataDir is the data set's folder (byname.FolderContents says what it
	// holds); Download fetches the official files into it first. For
	// Config.Data lebm.FolderData it is the folder of the user's images
	// (package imagefolder), optional when resuming: the run's data split
	// names it.
	DataDir  string
	Download bool
	// TestFraction is the fraction of a folder of images held out for
	// testing when it has no train/ and test/ subfolders (0:
	// imagefolder.DefaultTestFraction); the split is recorded in the run.
	TestFraction float64
	// Enlarge accepts a folder's images smaller than the generator's,
	// enlarging them; without it they are an error (recorded in the run).
	Enlarge bool
	// StreamAbove is the size in bytes of a folder's training images (as
	// float32) above which they are decoded batch by batch as the run
	// needs them instead of held in memory (0: DefaultStreamAbove).
	StreamAbove int64
	// Out is the run folder (training.Folder): a new run starts there, a
	// stopped one resumes.
	Out string
	// Backend is the GoMLX backend to open (backend.Resolve's syntax).
	Backend string
	// Epochs is how many epochs the run trains in all, of Batch images;
	// TrainSize > 0 uses only the first TrainSize training images.
	Epochs, Batch, TrainSize int
	// Grid and Recon are the images in each sample and reconstruction grid
	// (0: 64 and 32).
	Grid, Recon int
	// KeepEpochs > 0 also snapshots the model at each epoch's end into the
	// run's epochs folder, keeping the last KeepEpochs.
	KeepEpochs int
	// CheckpointEvery and PicturesEvery are how often the run checkpoints
	// and draws its grids within an epoch (it also does both at its end;
	// 0: every 10 and 5 minutes).
	CheckpointEvery, PicturesEvery time.Duration
	// StopAfter > 0 ends this call after that many steps, checkpointed; a
	// later Train with the same Out goes on.
	StopAfter int64
	// Devices is the number of devices to train on, data-parallel (0:
	// every device on CUDA, one elsewhere).
	Devices int
	// Stop ends the run at the end of the current step, checkpointed,
	// when it receives (a signal, say); nil: never.
	Stop <-chan os.Signal
	// AfterWrite, when set, is called after each file a step writes, named
	// "metrics" or "checkpoint" (tests kill the run there).
	AfterWrite func(what string)
	// Resize, when set, is called once the backend is known and may change
	// Epochs, Batch and TrainSize (train-lebm sizes a run for the CPU so);
	// the line it returns, when not empty, is printed.
	Resize func(choice backend.Choice, o *Options) string
}

// withDefaults fills the zero fields that have a default and checks the
// others, naming the field at fault.
func (o Options) withDefaults() (Options, error) {
	o.Grid, o.Recon, o.StreamAbove = cmp.Or(o.Grid, 64), cmp.Or(o.Recon, 32), cmp.Or(o.StreamAbove, DefaultStreamAbove)
	o.CheckpointEvery, o.PicturesEvery = cmp.Or(o.CheckpointEvery, 10*time.Minute), cmp.Or(o.PicturesEvery, 5*time.Minute)
	trainImages, known := byname.TrainImages[o.Config.Data]
	if err := flagcheck.CheckOptions(
		flagcheck.Rule{Name: "Epochs", Value: o.Epochs, OK: o.Epochs >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "Batch", Value: o.Batch, OK: o.Batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "TrainSize", Value: o.TrainSize, OK: o.TrainSize >= 0, Want: "≥ 0 (0: every image)"},
		flagcheck.Rule{Name: "TrainSize", Value: o.TrainSize, OK: o.TrainSize == 0 || o.Batch <= o.TrainSize, Want: fmt.Sprintf("at least Options.Batch %d", o.Batch)},
		flagcheck.Rule{Name: "Batch", Value: o.Batch, OK: !known || o.Batch <= trainImages, Want: fmt.Sprintf("at most the %d training images of %s", trainImages, o.Config.Data)},
		flagcheck.Rule{Name: "Config.AnomalyHoldout", Value: o.Config.AnomalyHoldout, OK: o.Config.AnomalyHoldout >= -1, Want: "a class (≥ 0), or -1 for none"},
		flagcheck.Rule{Name: "Grid", Value: o.Grid, OK: o.Grid >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "Recon", Value: o.Recon, OK: o.Recon >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "KeepEpochs", Value: o.KeepEpochs, OK: o.KeepEpochs >= 0, Want: "≥ 0"},
		flagcheck.Rule{Name: "CheckpointEvery", Value: o.CheckpointEvery, OK: o.CheckpointEvery > 0, Want: "> 0"},
		flagcheck.Rule{Name: "PicturesEvery", Value: o.PicturesEvery, OK: o.PicturesEvery > 0, Want: "> 0"},
		flagcheck.Rule{Name: "StopAfter", Value: o.StopAfter, OK: o.StopAfter >= 0, Want: "≥ 0 (0: run to the end)"},
		flagcheck.Rule{Name: "Devices", Value: o.Devices, OK: o.Devices >= 0, Want: "≥ 0 (0: every GPU on CUDA, one device elsewhere)"},
		flagcheck.Rule{Name: "StreamAbove", Value: o.StreamAbove, OK: o.StreamAbove > 0, Want: "> 0"},
	); err != nil {
		return o, fmt.Errorf("lebmrun: %w", err)
	}
	if o.Out == "" {
		return o, fmt.Errorf("lebmrun: Options.Out: required (the run folder)")
	}
	return o, nil
}

// wrote reports a finished write to AfterWrite.
func (o Options) wrote(what string) {
	if o.AfterWrite != nil {
		o.AfterWrite(what)
	}
}

// Train trains a latent EBM as o says, in the run folder o.Out, until the
// run's last epoch, a receive on o.Stop or o.StopAfter steps. Everything a
// user can get wrong — the output folder, the checkpoint to resume, the
// batch size — is checked before the data set is loaded, and the output
// folder is created only once all is well. The folder has one writer at a
// time: a second Train on it fails, naming the first's process.
func Train(o Options) error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	if info, err := os.Stat(o.Out); err == nil && !info.IsDir() {
		return fmt.Errorf("Options.Out %s: a file, not a folder", o.Out)
	}
	if err := fetchData(o); err != nil {
		return err
	}
	b, devices, err := openBackend(&o)
	if err != nil {
		return err
	}
	defer b.Finalize()
	// A folder that exists is claimed before its checkpoint is read; a new
	// one is made (by the claim) only once the flags and the data are good.
	folder := training.Folder{Dir: o.Out}
	writer, err := folder.ClaimIfExists()
	if err != nil {
		return fmt.Errorf("Options.Out: %w", err)
	}
	defer func() { writer.Release() }()
	ckptDir := folder.Checkpoints()
	model, err := openModel(b, o.Config, ckptDir)
	if err != nil {
		return err
	}
	data, err := loadData(o, folder)
	if err != nil {
		return err
	}
	batches, trainN, test := data.batches, data.trainN, data.test
	defer batches.Close()
	if writer == nil {
		if writer, err = folder.Claim(); err != nil {
			return fmt.Errorf("Options.Out: %w", err)
		}
	}
	if data.newSplit != nil {
		if err := data.newSplit.Write(folder.DataSplit()); err != nil {
			return fmt.Errorf("recording the data split: %w", err)
		}
	}
	perEpoch := int64(batches.BatchesPerEpoch())
	step := model.Step()
	if err := batches.Seek(int(step/perEpoch), int(step%perEpoch)); err != nil {
		return err
	}
	total := int64(o.Epochs) * perEpoch
	fmt.Printf("training %s-LEBM on %s (%d images, %d batches of %d per epoch) from step %d to %d → %s\n",
		o.Config.Method, o.Config.Data, trainN, perEpoch, o.Batch, step, total, o.Out)
	if step >= total {
		fmt.Printf("done: %d steps; outputs in %s\n", step, o.Out)
		return nil
	}
	s := &session{o: o, model: model, test: test, perEpoch: perEpoch, first: step, total: total, devices: devices}
	fmt.Println("building the training graph (XLA also compiles it: the first step waits for that)…")
	finished, err := s.run(&endless{batches: batches, name: o.Config.Data})
	if err != nil || !finished {
		return err
	}
	fmt.Printf("\ndone: %d steps; outputs in %s\n", total, o.Out)
	return nil
}

// fetchData downloads the data set's official files when -download asks.
func fetchData(o Options) error {
	if !o.Download {
		return nil
	}
	if _, ok := download.Registry[o.Config.Data]; !ok {
		return fmt.Errorf("Options.Download: no official download for %s (CelebA must be fetched by hand)", o.Config.Data)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := download.FetchDataset(ctx, o.Config.Data, o.DataDir, download.WithProgress(os.Stdout)); err != nil {
		return fmt.Errorf("Options.Download: %w", err)
	}
	return nil
}

// openBackend opens the backend o.Backend asks for, with as many CPU
// devices as o.Devices needs, resizing the run for it (o.Resize) and
// saying what it changed from the paper's settings; it returns the number
// of devices to train on.
func openBackend(o *Options) (backends.Backend, int, error) {
	choice, err := backend.Resolve(o.Backend)
	if err != nil {
		return nil, 0, fmt.Errorf("Options.Backend: %w", err)
	}
	if o.Resize != nil {
		if note := o.Resize(choice, o); note != "" {
			fmt.Println(note)
		}
		if _, err := o.withDefaults(); err != nil {
			return nil, 0, fmt.Errorf("resized: %w", err)
		}
	}
	if paper, err := lebm.DefaultConfig(o.Config.Data); err == nil && o.Config.Data != lebm.FolderData {
		paper.Seed = o.Config.Seed // the paper has none; -seed is reported by the run
		if changes := o.Config.Changes(paper); len(changes) > 0 {
			fmt.Printf("settings changed from the paper's: %s\n", strings.Join(changes, ", "))
		}
	}
	request := o.Backend
	if cpuDevices := backend.CPUDevicesFor(o.Devices); choice.CPUDevices > 0 && cpuDevices > choice.CPUDevices {
		request += fmt.Sprintf(",devices=%d", cpuDevices)
	}
	b, err := backend.OpenForCommand(request)
	if err != nil {
		return nil, 0, err
	}
	devices, err := o.deviceCount(choice, b.NumDevices())
	if err != nil {
		b.Finalize()
		return nil, 0, err
	}
	return b, devices, nil
}

// deviceCount is the number of devices to train on: -devices, or by
// default every device on CUDA and one elsewhere; it must not exceed the
// backend's available devices and must divide the batch.
func (o Options) deviceCount(choice backend.Choice, available int) (int, error) {
	n := o.Devices
	if n == 0 {
		n = 1
		if choice.CUDA() {
			n = available
		}
	}
	if n > available {
		return 0, fmt.Errorf("Options.Devices %d: the backend (%s) has %d device(s)", n, choice.Config, available)
	}
	if o.Batch%n != 0 {
		return 0, fmt.Errorf("Options.Batch %d: does not split over %d devices (-devices); want a multiple of %d", o.Batch, n, n)
	}
	if n > 1 {
		fmt.Printf("data-parallel over %d devices: %d images of each batch of %d per device\n", n, o.Batch/n, o.Batch)
	}
	return n, nil
}

// batchSource is the training batches: datasets.Batches over images in
// memory, or a datasets.Stream decoding them as they are needed.
type batchSource interface {
	Yield() (spec any, inputs, labels []*tensors.Tensor, err error)
	Reset()
	Seek(epoch, batch int) error
	BatchesPerEpoch() int
	Close() error
}

// inMemory is datasets.Batches as a batchSource.
type inMemory struct{ *datasets.Batches }

func (inMemory) Close() error { return nil }

// runData are a run's images: the training batches and their number, the
// test images, and a new split of a folder of images, which the run
// records once its folder is claimed.
type runData struct {
	batches  batchSource
	trainN   int
	test     *datasets.Images
	newSplit *imagefolder.Split
}

// loadData opens the training batches — CelebA's streamed, since its
// training split would take 2 GB at 64² and 7.9 GB at 128² in memory, and
// a large folder of images too (loadFolder) — and reads the test images,
// checking that both fit the generator.
func loadData(o Options, folder training.Folder) (runData, error) {
	var train, test *datasets.Images
	var err error
	if o.Config.Data == lebm.FolderData {
		return loadFolder(o, folder)
	}
	trainLimit, testLimit := o.TrainSize, o.Recon
	if o.Config.AnomalyHoldout >= 0 {
		trainLimit, testLimit = 0, 0 // the protocol pools both whole splits
	}
	if !byname.IsCelebA(o.Config.Data) {
		if train, err = loadSplit(o, "train", trainLimit); err != nil {
			return runData{}, fmt.Errorf("Options.DataDir: %w", err)
		}
	}
	if test, err = loadSplit(o, "test", testLimit); err != nil {
		return runData{}, fmt.Errorf("Options.DataDir: %w", err)
	}
	if train, test, err = checkSets(o, train, test); err != nil {
		return runData{}, err
	}
	if train == nil {
		stream, err := celeba.NewStream(o.DataDir, byname.CelebAOptions(o.Config.Data, "train", o.TrainSize),
			datasets.StreamOptions{BatchSize: o.Batch, Seed: uint64(o.Config.Seed)})
		if err != nil {
			return runData{}, fmt.Errorf("Options.DataDir %s: %w", o.DataDir, err)
		}
		return runData{batches: stream, trainN: stream.Len(), test: test}, nil
	}
	return inMemoryBatches(o, train, test)
}

// inMemoryBatches serves the first o.TrainSize images of train (all when
// 0) in shuffled batches.
func inMemoryBatches(o Options, train, test *datasets.Images) (runData, error) {
	train = train.Head(o.TrainSize)
	b, err := datasets.NewBatches(train, o.Batch, datasets.WithSeed(uint64(o.Config.Seed)))
	if err != nil {
		return runData{}, fmt.Errorf("Options.Batch: %w", err)
	}
	return runData{batches: inMemory{b}, trainN: train.N, test: test}, nil
}

// checkSets applies the anomaly protocol when o asks for it and checks that
// the test images fit the generator and the reconstruction grid.
func checkSets(o Options, train, test *datasets.Images) (*datasets.Images, *datasets.Images, error) {
	if o.Config.AnomalyHoldout >= 0 {
		split, err := datasets.PaperAnomalySplit(train, test, o.Config.AnomalyHoldout)
		if err != nil {
			return nil, nil, fmt.Errorf("Options.Config.AnomalyHoldout: %w", err)
		}
		train, test = split.Train, split.Test
	}
	h, w, c := o.Config.Generator.OutputShape()
	if test.Height != h || test.Width != w || test.Channels != c {
		return nil, nil, fmt.Errorf("Options.DataDir %s: images are %d×%d×%d but the %s generator makes %d×%d×%d",
			o.DataDir, test.Height, test.Width, test.Channels, o.Config.Data, h, w, c)
	}
	if o.Recon > test.N && o.Config.Data != lebm.FolderData { // a folder's few test images make a smaller grid
		return nil, nil, fmt.Errorf("Options.Recon %d: the test split has only %d images", o.Recon, test.N)
	}
	return train, test, nil
}

// loadSplit reads one split of o.Config.Data; limit (if > 0) bounds how many
// images a loader that can stop early decodes.
func loadSplit(o Options, split string, limit int) (*datasets.Images, error) {
	return byname.Load(o.Config.Data, o.DataDir, split, limit)
}

// openModel resumes from the checkpoint in dir when there is one — refusing
// one whose configuration differs from cfg — or creates a new model.
func openModel(b backends.Backend, cfg lebm.Config, dir string) (*lebm.Model, error) {
	if _, err := lebm.LatestCheckpoint(dir); errors.Is(err, os.ErrNotExist) {
		return lebm.New(b, cfg) // nothing saved yet (or only a save cut short)
	}
	// A checkpoint written before checkpoints named their data set takes
	// the run's, and names it from its next save on.
	model, err := lebm.Load(b, dir, lebm.WithDataNamed(cfg.Data))
	if err != nil {
		return nil, fmt.Errorf("resuming from %s: %w (move it away to start afresh)", dir, err)
	}
	saved := model.Config()
	if asked := cfg.Changes(saved); len(asked) > 0 {
		return nil, fmt.Errorf("%s holds a checkpoint of a different model: this run asks for %s, the checkpoint has %s; use another Options.Out, or the settings that run used",
			dir, strings.Join(asked, ", "), strings.Join(saved.Changes(cfg), ", "))
	}
	fmt.Printf("resuming from %s at step %d\n", dir, model.Step())
	return model, nil
}

// writePictures writes a sample grid and a reconstruction grid, their
// names ending in tag (epoch001, step000000123), and returns the per-pixel
// MSE of the reconstructed test images.
func writePictures(model *lebm.Model, test *datasets.Images, o Options, tag string) (float64, error) {
	samples, err := model.Generate(o.Grid)
	if err != nil {
		return 0, err
	}
	defer samples.FinalizeAll()
	h, w, c := test.Height, test.Width, test.Channels
	cols := int(math.Ceil(math.Sqrt(float64(o.Grid))))
	folder := training.Folder{Dir: o.Out}
	err = plots.WriteImageGrid(folder.Samples(tag),
		tensors.MustCopyFlatData[float32](samples), o.Grid, h, w, c, cols)
	if err != nil {
		return 0, err
	}
	n := min(o.Recon, test.N)
	originals := test.Pixels[:n*test.ImageSize()]
	x := tensors.FromFlatDataAndDimensions(originals, n, h, w, c)
	defer x.FinalizeAll()
	recon, err := model.Reconstruct(x)
	if err != nil {
		return 0, err
	}
	defer recon.FinalizeAll()
	reconPixels := tensors.MustCopyFlatData[float32](recon)
	var mse float64
	for i, v := range reconPixels {
		d := float64(v - originals[i])
		mse += d * d / float64(len(reconPixels))
	}
	err = plots.WriteImagePairs(folder.Reconstructions(tag),
		originals, reconPixels, n, h, w, c, 8)
	return mse, err
}

// historySeries are the training curves of history, averaged over
// windows so that long runs stay readable (at most about 400 points), and
// the test reconstruction error of each epoch's end. neg is nil unless the
// method drew prior samples (CD).
type historySeries struct {
	recon, prior, post, neg, test *plots.Series
}

func seriesOf(history []Record) historySeries {
	s := historySeries{
		recon: &plots.Series{Name: "reconstruction MSE (train batch)"},
		prior: &plots.Series{Name: "prior loss"},
		post:  &plots.Series{Name: "mean f(z_post)"},
		test:  &plots.Series{Name: "reconstruction MSE (test images)"},
	}
	neg := &plots.Series{Name: "mean f(z_prior) (CD)"}
	window := max(1, len(history)/400)
	for start := 0; start < len(history); start += window {
		end := min(start+window, len(history))
		var r, p, e, n float64
		for _, rec := range history[start:end] {
			w := 1 / float64(end-start)
			r, p, e, n = r+rec.ReconstructionMSE*w, p+rec.PriorLoss*w, e+rec.PosteriorEnergy*w, n+rec.PriorEnergy*w
		}
		x := float64(history[end-1].Step)
		for _, point := range []struct {
			series *plots.Series
			y      float64
		}{{s.recon, r}, {s.prior, p}, {s.post, e}, {neg, n}} {
			point.series.X, point.series.Y = append(point.series.X, x), append(point.series.Y, point.y)
		}
	}
	for _, rec := range history {
		if rec.TestReconstructionMSE > 0 {
			s.test.X, s.test.Y = append(s.test.X, float64(rec.Step)), append(s.test.Y, rec.TestReconstructionMSE)
		}
	}
	if slices.ContainsFunc(history, func(r Record) bool { return r.PriorEnergy != 0 }) {
		s.neg = neg
	}
	return s
}

// plotHistory draws the losses (training.LossesPlot) and the mean energies of
// the posterior and, for CD, prior samples (training.EnergiesPlot) over
// training in the run folder.
func plotHistory(folder training.Folder, history []Record) error {
	s := seriesOf(history)
	err := plots.WriteLinePlot(folder.Path(training.LossesPlot), plots.LinePlot{Title: "Training losses", XLabel: "step", YLabel: "value",
		Series: []plots.Series{*s.recon, *s.prior}})
	if err != nil {
		return err
	}
	energies := []plots.Series{*s.post}
	if s.neg != nil {
		energies = append(energies, *s.neg)
	}
	return plots.WriteLinePlot(folder.Path(training.EnergiesPlot), plots.LinePlot{Title: "Prior energy f at the samples", XLabel: "step", YLabel: "mean f",
		Series: energies})
}

// writePlotPoints writes the curves of history as GoMLX training plot
// points (gomlxplots.TrainingPlotFileName, one JSON point per line) into
// the GoMLX checkpoint folder dir, where GoMLX's plotting tools
// (gomlxplots.LoadPointsFromCheckpoint, the notebook plotters) read them.
func writePlotPoints(dir string, history []Record) error {
	s := seriesOf(history)
	curves := []struct {
		series            *plots.Series
		name, short, kind string
	}{
		{s.recon, "Train: reconstruction MSE", "T/MSE", "MSE"},
		{s.test, "Test: reconstruction MSE", "E/MSE", "MSE"},
		{s.prior, "Train: prior loss", "T/prior", "loss"},
		{s.post, "Train: mean f(z_post)", "T/f(post)", "energy"},
		{s.neg, "Train: mean f(z_prior)", "T/f(prior)", "energy"},
	}
	return atomicfile.Write(filepath.Join(dir, gomlxplots.TrainingPlotFileName), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, c := range curves {
			if c.series == nil {
				continue
			}
			for i, x := range c.series.X {
				if err := enc.Encode(gomlxplots.Point{MetricName: c.name, Short: c.short, MetricType: c.kind, Step: x, Value: c.series.Y[i]}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func finalize(ts []*tensors.Tensor) {
	for _, t := range ts {
		t.FinalizeAll()
	}
}
