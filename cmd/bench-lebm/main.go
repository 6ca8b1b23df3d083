// Command bench-lebm measures the latent EBM's cost per training iteration
// for each prior update (ED, CD, SM) at the paper's data-set shapes, with
// random images of the right shape, and the cost of the prior update alone
// (prior loss and its gradient at given posterior samples), whose ED/CD
// ratio is the paper's efficiency claim; then the samplers: generation (the
// prior chains and the generator) and the test-time posterior chains. Beside
// each time it puts the work done (lebm.Config.TrainingFLOPs and friends:
// the convolutions' and matrix products' FLOPs) and the rate achieved, and
// with -peak-tflops the fraction of the device's peak: a roofline check. It
// writes Markdown tables.
//
//	go run ./cmd/bench-lebm -batch 128 -out docs/results/lebm-speed.md
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/lebm"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		log.Fatalf("bench-lebm: %v", err)
	}
}

// run parses the command line args, measures, prints the tables to w and
// writes them to -out.
func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("bench-lebm", flag.ContinueOnError)
	shapes := fs.String("shapes", "svhn,cifar10,celeba64", "data-set shapes (generator presets)")
	methods := fs.String("methods", "ed,cd,sm", "prior updates (measured, and their rows printed as they come, with cd first when listed: the other rows' prior-update ratio needs its time)")
	batch := fs.Int("batch", 128, "batch size")
	iters := fs.Int("iters", 3, "timed iterations per row (after one warm-up)")
	priorIters := fs.Int("prior-iters", 20, "timed prior-update-only iterations per row (0: skip that measurement)")
	priorBatch := fs.Int("prior-batch", 0, "batch size of the prior-update-only measurement (0: -batch)")
	out := fs.String("out", "", "Markdown file to write (default: print only)")
	backendFlag := fs.String("backend", "auto", backend.FlagUsage)
	help, _ := lebm.DefaultConfig("svhn")    // what -h shows
	configure := lebm.DeclareFlags(fs, help) // -compute-dtype, -convt-impl, -set, …
	genBatch := fs.Int("gen-batch", 0, "images per generation call in the sampler table (0: -batch)")
	sampling := fs.Bool("sampling", true, "also time generation and the test-time posterior")
	training := fs.Bool("training", true, "time the training step and the prior update (false: the samplers alone, which compile in seconds where a training step takes up to a minute on a GPU)")
	flopsOnly := fs.Bool("flops-only", false, "print the FLOPs of each measurement, from the architectures alone, and time nothing")
	devices := fs.Int("devices", 1, "split each training batch over this many devices (data-parallel, lebm.Model.TrainStepSharded); on XLA CPU the plugin is asked for backend.CPUDevicesFor(N) devices")
	peak := fs.Float64("peak-tflops", 0, "the device's peak TFLOP/s at the precision used (H100 SXM: 67 float32, 495 TF32, 989 bfloat16, dense): adds a % of peak column; 0: none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkCounts(*devices, *batch, *iters, *priorIters, *priorBatch, *genBatch); err != nil {
		return err
	}
	if !*training && !*sampling && !*flopsOnly {
		return errors.New("flags -training=false, -sampling=false: nothing to time")
	}
	settings := benchSettings(configure)
	*genBatch, *priorBatch = cmp.Or(*genBatch, *batch), cmp.Or(*priorBatch, *batch)
	rate := newRateFormat(*peak)
	table := &tee{w: w}
	emit := table.emit
	if *flopsOnly {
		text, err := flopsTable(strings.Split(*shapes, ","), strings.Split(*methods, ","), settings, *batch, *priorBatch, *genBatch)
		if err != nil {
			return err
		}
		emit("Command: `bench-lebm %s` — FLOPs from the architectures (lebm.Config.TrainingFLOPs and friends).\n\n%s", strings.Join(args, " "), text)
		return writeTable(*out, table.kept.String())
	}

	b, choice, err := openBackend(*backendFlag, *devices)
	if err != nil {
		return err
	}
	defer b.Finalize()
	emit("Command: `bench-lebm %s` — backend %s (%s), %s.\n\n", strings.Join(args, " "), b.Name(), choice.Reason, time.Now().UTC().Format("2006-01-02"))
	if *training {
		emit("%s", trainingHeader(*batch, *priorBatch, rate))
	}
	var samplers strings.Builder
	for _, shape := range strings.Split(*shapes, ",") {
		if *training {
			if err := trainingRows(emit, b, shape, cdFirst(strings.Split(*methods, ",")), settings, *batch, *priorBatch, *iters, *priorIters, *devices, rate); err != nil {
				return err
			}
		}
		if *sampling {
			line, err := measureSamplers(b, shape, settings, *batch, *genBatch, *iters, rate)
			if err != nil {
				return fmt.Errorf("%s samplers: %w", shape, err)
			}
			samplers.WriteString(line)
		}
	}
	if *sampling {
		// The chains' settings, which the shapes share.
		cfg, err := settings.config(strings.Split(*shapes, ",")[0], lebm.MethodED)
		if err != nil {
			return err
		}
		if *training {
			emit("\n")
		}
		emit("%s%s", samplerHeader(cfg, *batch, *genBatch, rate), samplers.String())
	}
	return writeTable(*out, table.kept.String())
}

// tee prints the tables to w as they come and keeps them for -out.
type tee struct {
	w    io.Writer
	kept strings.Builder
}

func (t *tee) emit(format string, a ...any) {
	text := fmt.Sprintf(format, a...)
	t.kept.WriteString(text)
	fmt.Fprint(t.w, text)
}

// trainingHeader is the head of the training table.
func trainingHeader(batch, priorBatch int, rate rateFormat) string {
	return fmt.Sprintf("| shape | method | s / training iteration (batch %d) | s first iteration (compiles) | GFLOP / iteration | %s | s / prior update alone (batch %d) | prior update ÷ CD's |\n|---|---|---|---|---|%s---|---|\n",
		batch, rate.header, priorBatch, rate.rule)
}

// trainingRows measures and emits the training table's row of each method
// at shape, CD's first when listed (the others' prior-update ratio needs
// its time).
func trainingRows(emit func(string, ...any), b backends.Backend, shape string, methods []string, settings benchSettings, batch, priorBatch, iters, priorIters, devices int, rate rateFormat) error {
	priorCD := 0.0
	for _, method := range methods {
		full, first, prior, flops, err := measure(b, shape, method, settings, batch, priorBatch, iters, priorIters, devices)
		if err != nil {
			return fmt.Errorf("%s/%s: %w", shape, method, err)
		}
		if method == lebm.MethodCD {
			priorCD = prior
		}
		emit("| %s | %s | %.3f | %.1f | %s | %s | %.5f | %s |\n", shape, method, full, first, gflop(flops), rate.cells(flops, full), prior, priorRatio(prior, priorCD))
	}
	return nil
}

// priorRatio is the cell of a prior update's time over CD's, "–" before
// CD's is known.
func priorRatio(prior, priorCD float64) string {
	if priorCD <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", prior/priorCD)
}

// samplerHeader is the head of the sampler table, naming cfg's chains.
func samplerHeader(cfg lebm.Config, batch, genBatch int, rate rateFormat) string {
	gen, post := cfg.GenerationLangevin, cfg.TestPosteriorLangevin
	return fmt.Sprintf("| shape | s / generation (%d prior %s steps of %g + G, batch %d) | s first generation (compiles) | %s | s / test posterior (%d Langevin steps of %g, batch %d) | s first posterior (compiles) | %s |\n|---|---|---|%s---|---|%s\n",
		gen.Steps, cfg.GenerationSampler, gen.StepSize, genBatch, rate.header, post.Steps, post.StepSize, batch, rate.header, rate.rule, rate.rule)
}

// checkCounts checks the flags that count devices, images and iterations.
func checkCounts(devices, batch, iters, priorIters, priorBatch, genBatch int) error {
	if devices < 1 || batch%devices != 0 {
		return fmt.Errorf("flags -devices %d, -batch %d: want at least one device, and a batch that is a multiple of the device count", devices, batch)
	}
	if batch < 1 || iters < 1 || priorIters < 0 || priorBatch < 0 || genBatch < 0 {
		return fmt.Errorf("flags -batch %d, -iters %d, -prior-iters %d, -prior-batch %d, -gen-batch %d: batch and iters must be at least 1, the others at least 0",
			batch, iters, priorIters, priorBatch, genBatch)
	}
	return nil
}

// openBackend opens the backend named by -backend, asking XLA CPU for as
// many devices as -devices needs.
func openBackend(request string, devices int) (backends.Backend, backend.Choice, error) {
	if choice, err := backend.Resolve(request); err == nil && choice.CPUDevices > 0 && backend.CPUDevicesFor(devices) > choice.CPUDevices {
		request += fmt.Sprintf(",devices=%d", backend.CPUDevicesFor(devices))
	}
	b, choice, err := backend.Open(request)
	if err != nil {
		return nil, choice, fmt.Errorf("flag -backend: %w", err)
	}
	if devices > b.NumDevices() {
		b.Finalize()
		return nil, choice, fmt.Errorf("flag -devices %d: the backend has %d device(s)", devices, b.NumDevices())
	}
	return b, choice, nil
}

// cdFirst is methods with CD, when listed, moved to the front.
func cdFirst(methods []string) []string {
	out := slices.DeleteFunc(slices.Clone(methods), func(m string) bool { return m == lebm.MethodCD })
	if len(out) < len(methods) {
		out = append([]string{lebm.MethodCD}, out...)
	}
	return out
}

// writeTable writes text to path atomically; an empty path writes nothing.
func writeTable(path, text string) error {
	if path == "" {
		return nil
	}
	return atomicfile.Write(path, func(f io.Writer) error { _, err := io.WriteString(f, text); return err })
}

// flopsTable is the work of each measurement, from the architectures alone.
func flopsTable(shapes, methods []string, settings benchSettings, batch, priorBatch, genBatch int) (string, error) {
	var t strings.Builder
	fmt.Fprintf(&t, "| shape | method | GFLOP / training iteration (batch %d) | GFLOP / prior update alone (batch %d) | GFLOP / generation (batch %d) | GFLOP / test posterior (batch %d) |\n|---|---|---|---|---|---|\n",
		batch, priorBatch, genBatch, batch)
	for _, shape := range shapes {
		for _, method := range methods {
			cfg, err := settings.config(shape, method)
			if err != nil {
				return "", err
			}
			training, err := cfg.TrainingFLOPs(batch)
			if err != nil {
				return "", err
			}
			prior, err := cfg.PriorUpdateFLOPs(priorBatch)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&t, "| %s | %s | %s | %s | %s | %s |\n", shape, method, gflop(training), gflop(prior),
				gflop(cfg.GenerationFLOPs(genBatch, cfg.GenerationLangevin)), gflop(cfg.PosteriorFLOPs(batch, cfg.TestPosteriorLangevin)))
		}
	}
	return t.String(), nil
}

// measure returns seconds per full training iteration (split over devices
// devices), of the first iteration (which compiles the step) and per prior
// update alone for one shape and method, the generator's layers in
// the model settings given, and the FLOPs of a training iteration.
func measure(b backends.Backend, shape, method string, settings benchSettings, batch, priorBatch, iters, priorIters, devices int) (full, first, prior, flops float64, err error) {
	model, cfg, err := newModel(b, settings, shape, method)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if flops, err = cfg.TrainingFLOPs(batch); err != nil {
		return 0, 0, 0, 0, err
	}
	images := randomImages(cfg, batch)
	step := func() error { _, err := model.TrainStep(images); return err }
	if devices > 1 {
		step = func() error { _, err := model.TrainStepSharded(images, devices); return err }
	}
	if full, first, err = timedWithFirst(iters, step); err != nil {
		return 0, 0, 0, 0, err
	}
	if priorIters > 0 {
		prior, err = measurePrior(b, model.Context(), cfg, randomImages(cfg, priorBatch), priorIters)
	}
	return full, first, prior, flops, err
}

// measureSamplers times generation of genBatch images and the test-time
// posterior of batch images for one shape and returns the table row.
func measureSamplers(b backends.Backend, shape string, settings benchSettings, batch, genBatch, iters int, rate rateFormat) (string, error) {
	model, cfg, err := newModel(b, settings, shape, lebm.MethodED)
	if err != nil {
		return "", err
	}
	gen, genFirst, err := timedWithFirst(iters, func() error { _, err := model.Generate(genBatch); return err })
	if err != nil {
		return "", err
	}
	images := randomImages(cfg, batch)
	post, postFirst, err := timedWithFirst(iters, func() error { _, err := model.PosteriorSample(images); return err })
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("| %s | %.4f | %.1f | %s | %.4f | %.1f | %s |\n", shape,
		gen, genFirst, rate.cells(cfg.GenerationFLOPs(genBatch, cfg.GenerationLangevin), gen),
		post, postFirst, rate.cells(cfg.PosteriorFLOPs(batch, cfg.TestPosteriorLangevin), post)), nil
}

// benchSettings applies the model settings of the command line (the short
// flags of lebm's settings table and -set) to a Config.
type benchSettings func(*lebm.Config) error

// config is the shape's default configuration, seed 1, with the method
// measured and the command line's model settings.
func (apply benchSettings) config(shape, method string) (lebm.Config, error) {
	cfg, err := lebm.DefaultConfig(shape)
	if err != nil {
		return cfg, err
	}
	cfg.Method, cfg.Seed = method, 1
	if err := apply(&cfg); err != nil {
		return cfg, err
	}
	if cfg.Method != method {
		return cfg, fmt.Errorf("flags -method and -set: the method is %s, but bench-lebm measures each of -methods in turn: name the methods there", cfg.Method)
	}
	return cfg, nil
}

// newModel is a fresh model of settings.config.
func newModel(b backends.Backend, settings benchSettings, shape, method string) (*lebm.Model, lebm.Config, error) {
	cfg, err := settings.config(shape, method)
	if err != nil {
		return nil, cfg, err
	}
	model, err := lebm.New(b, cfg)
	return model, cfg, err
}

// timed returns the mean seconds of iters calls of run after one untimed
// call, which compiles.
func timed(iters int, run func() error) (float64, error) {
	mean, _, err := timedWithFirst(iters, run)
	return mean, err
}

// timedWithFirst is timed that also returns the seconds of the first call:
// compilation plus one run.
func timedWithFirst(iters int, run func() error) (mean, first float64, err error) {
	start := time.Now()
	if err := run(); err != nil {
		return 0, 0, err
	}
	first = time.Since(start).Seconds()
	start = time.Now()
	for range iters {
		if err := run(); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(start).Seconds() / float64(iters), first, nil
}

// gflop formats flops in GFLOP with four significant digits, or as an
// integer from 1,000 on (as baselines/lebm_bench.py does).
func gflop(flops float64) string {
	g := flops / 1e9
	if g < 1000 {
		return fmt.Sprintf("%.4g", g)
	}
	return fmt.Sprintf("%.0f", g)
}

// rateFormat writes the achieved-rate cells: TFLOP/s and, with a peak, the
// percentage of it.
type rateFormat struct {
	peak         float64
	header, rule string
}

func newRateFormat(peak float64) rateFormat {
	if peak > 0 {
		return rateFormat{peak, fmt.Sprintf("TFLOP/s | %% of %g TFLOP/s", peak), "---|---|"}
	}
	return rateFormat{0, "TFLOP/s", "---|"}
}

// cells is the rate of flops done in seconds.
func (r rateFormat) cells(flops, seconds float64) string {
	tflops := flops / seconds / 1e12
	if r.peak > 0 {
		return fmt.Sprintf("%.3g | %.1f", tflops, 100*tflops/r.peak)
	}
	return fmt.Sprintf("%.3g", tflops)
}

// randomImages is a batch of uniform noise images of the generator's shape.
func randomImages(cfg lebm.Config, n int) *tensors.Tensor {
	h, w, c := cfg.Generator.OutputShape()
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*h*w*c)
	for i := range x {
		x[i] = float32(2*rng.Float64() - 1)
	}
	return tensors.FromFlatDataAndDimensions(x, n, h, w, c)
}

// measurePrior times the prior loss and its gradient with respect to the
// prior's variables at posterior-like samples z ~ N(0, I).
func measurePrior(b backends.Backend, ctx *context.Context, cfg lebm.Config, images *tensors.Tensor, iters int) (float64, error) {
	exec, err := context.NewExec(b, ctx.Reuse(), func(ctx *context.Context, x *Node) *Node {
		z := lebm.BaseSample(ctx, cfg, x.Graph(), x.Shape().Dimensions[0])
		loss, _ := lebm.PriorLoss(ctx, cfg, x, z)
		total := loss
		for _, grad := range Gradient(loss, lebm.ScopeValues(ctx, lebm.PriorScope, x.Graph())...) {
			total = Add(total, ConvertDType(ReduceAllSum(grad), loss.DType()))
		}
		return total
	})
	if err != nil {
		return 0, err
	}
	defer exec.Finalize()
	return timed(iters, func() error { _, err := exec.Exec(images); return err })
}
