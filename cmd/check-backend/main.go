// Command check-backend checks a backend's numerics (XLA on a GPU, say)
// against reference values computed on another (SimpleGo on the CPU) for
// the same LEBM variables and inputs, at each data-set shape and prior
// update.
//
//	go run ./cmd/check-backend -backend go -write ref            # reference, here
//	check-backend -backend cuda -check ref -out ref/report.md    # on the GPU machine
//
// -write saves, for each shape and method, a freshly initialised model's
// checkpoint and reference.json: host-drawn inputs (images, latents, the
// ED noise, CD's negatives), the probes computed from them — G(z),
// U_post(x, z) and its gradient in z, the prior loss with that noise, and
// the norms of the prior's and the generator's loss gradients per variable
// — and the metrics of one training step. -check loads each checkpoint,
// computes the probes on its own backend and reports, per probe, the
// largest difference over the reference's root mean square; probes above
// -rtol fail (exit status 1). The training step is then repeated and its
// metrics shown beside the reference's: the backends' random streams
// differ, so those agree only statistically.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/training"
)

// referenceFile is the file of each shape-method folder.
const referenceFile = "reference.json"

// reference is what -write stores for one shape and method.
type reference struct {
	Shape     string               `json:"shape"`
	Method    string               `json:"method"`
	Batch     int                  `json:"batch"`
	Backend   string               `json:"backend"`
	Inputs    inputs               `json:"inputs"`
	Probes    map[string][]float64 `json:"probes"`
	TrainStep map[string]float64   `json:"train_step"`
}

// defaultRTol is -rtol's default: TF32 products alone (-backend go-tf32
// against go, every shape and method at batch 4) give up to 0.022, on
// ∇z U_post at the cifar10 shape.
const defaultRTol = 0.05

type options struct {
	backend, write, check, out string
	shapes, methods            []string
	batch                      int
	seed                       uint64
	rtol                       float64
}

func main() {
	var o options
	var shapes, methods string
	flag.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	flag.StringVar(&o.write, "write", "", "write references into this folder")
	flag.StringVar(&o.check, "check", "", "check this backend against the references in this folder")
	flag.StringVar(&o.out, "out", "", "with -check: also write the report (Markdown) here")
	flag.StringVar(&shapes, "shapes", "svhn,cifar10,celeba64", "with -write: data-set shapes (generator presets)")
	flag.StringVar(&methods, "methods", strings.Join(lebm.Methods, ","), "with -write: prior updates")
	flag.IntVar(&o.batch, "batch", 4, "with -write: examples per probe and training step")
	flag.Uint64Var(&o.seed, "seed", 1, "with -write: seed of the models and the inputs")
	flag.Float64Var(&o.rtol, "rtol", defaultRTol, "with -check: largest accepted max |difference| / rms(reference) per probe (TF32 products alone give up to 0.022: -backend go-tf32)")
	flag.Parse()
	o.shapes, o.methods = strings.Split(shapes, ","), strings.Split(methods, ",")
	if err := run(o, os.Stdout); err != nil {
		log.Fatalf("check-backend: %v", err)
	}
}

func run(o options, w io.Writer) error {
	if (o.write == "") == (o.check == "") {
		return errors.New("give exactly one of -write DIR and -check DIR")
	}
	b, choice, err := backend.Open(o.backend)
	if err != nil {
		return fmt.Errorf("flag -backend: %w", err)
	}
	defer b.Finalize()
	fmt.Fprintf(w, "backend: %s (%s)\n", b.Name(), choice.Reason)
	if o.write != "" {
		return writeReferences(b, o, w)
	}
	failed, err := checkReferences(b, o, w)
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d probes differ from the reference by more than -rtol %g", failed, o.rtol)
	}
	return nil
}

// writeReferences writes one folder per shape and method into o.write.
func writeReferences(b backends.Backend, o options, w io.Writer) error {
	if o.batch < 1 {
		return fmt.Errorf("flag -batch %d: must be at least 1", o.batch)
	}
	for _, shape := range o.shapes {
		for _, method := range o.methods {
			cfg, err := lebm.DefaultConfig(shape)
			if err != nil {
				return fmt.Errorf("flag -shapes: %w", err)
			}
			if !slices.Contains(lebm.Methods, method) {
				return fmt.Errorf("flag -methods: %q is not one of %v", method, lebm.Methods)
			}
			cfg.Method, cfg.Seed = method, int64(o.seed)
			model, err := lebm.New(b, cfg)
			if err != nil {
				return err
			}
			dir := filepath.Join(o.write, shape+"-"+method)
			if err := model.Save(training.Folder{Dir: dir}.Checkpoints()); err != nil {
				return err
			}
			ref := reference{Shape: shape, Method: method, Batch: o.batch, Backend: b.Name(), Inputs: drawInputs(cfg, o.batch, o.seed)}
			if ref.Probes, err = computeProbes(b, model, ref.Inputs, o.batch); err != nil {
				return fmt.Errorf("%s/%s: %w", shape, method, err)
			}
			if ref.TrainStep, err = trainStep(model, ref.Inputs, o.batch); err != nil {
				return fmt.Errorf("%s/%s: %w", shape, method, err)
			}
			data, err := json.Marshal(ref)
			if err != nil {
				return err
			}
			path := filepath.Join(dir, referenceFile)
			if err := atomicfile.Write(path, func(f io.Writer) error { _, err := f.Write(data); return err }); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s\n", path)
		}
	}
	return nil
}

// checkReferences checks every reference under o.check and returns how
// many probes failed.
func checkReferences(b backends.Backend, o options, w io.Writer) (failed int, err error) {
	paths, err := filepath.Glob(filepath.Join(o.check, "*", referenceFile))
	if err != nil || len(paths) == 0 {
		return 0, fmt.Errorf("flag -check: no %s in the subfolders of %s (write them with -write)", referenceFile, o.check)
	}
	var report strings.Builder
	fmt.Fprintf(&report, "Probes on %s against the reference (max |difference| / rms(reference); -rtol %g):\n\n", b.Name(), o.rtol)
	fmt.Fprintf(&report, "| shape | method | reference backend | %s |\n|---|---|---|%s\n", strings.Join(probeNames, " | "), strings.Repeat("---|", len(probeNames)))
	var steps strings.Builder
	fmt.Fprintf(&steps, "\nOne training step from the same variables (random streams differ: compare statistically):\n\n| shape | method | metric | reference | %s | relative difference |\n|---|---|---|---|---|---|\n", b.Name())
	for _, path := range paths {
		ref, err := readReference(path)
		if err != nil {
			return failed, err
		}
		model, err := lebm.Load(b, training.Folder{Dir: filepath.Dir(path)}.Checkpoints())
		if err != nil {
			return failed, err
		}
		if dtype := model.Config().DType; dtype != "float32" {
			return failed, fmt.Errorf("%s: the model is %s; references are float32", path, dtype)
		}
		if err := ref.Inputs.validate(model.Config(), ref.Batch); err != nil {
			return failed, fmt.Errorf("%s: %w", path, err)
		}
		probes, err := computeProbes(b, model, ref.Inputs, ref.Batch)
		if err != nil {
			return failed, fmt.Errorf("%s: %w", path, err)
		}
		fmt.Fprintf(&report, "| %s | %s | %s |", ref.Shape, ref.Method, ref.Backend)
		for _, name := range probeNames {
			e, err := relativeError(probes[name], ref.Probes[name])
			if err != nil {
				return failed, fmt.Errorf("%s: probe %s: %w", path, name, err)
			}
			mark := ""
			if !(e <= o.rtol) {
				failed++
				mark = " **FAIL**"
			}
			fmt.Fprintf(&report, " %.2g%s |", e, mark)
		}
		report.WriteString("\n")
		metrics, err := trainStep(model, ref.Inputs, ref.Batch)
		if err != nil {
			return failed, fmt.Errorf("%s: %w", path, err)
		}
		for _, name := range metricNames {
			want, got := ref.TrainStep[name], metrics[name]
			fmt.Fprintf(&steps, "| %s | %s | %s | %.6g | %.6g | %.2g |\n", ref.Shape, ref.Method, name, want, got, (got-want)/max(math.Abs(want), 1e-12))
		}
	}
	text := report.String() + steps.String()
	fmt.Fprint(w, text)
	if o.out != "" {
		if err := atomicfile.Write(o.out, func(f io.Writer) error { _, err := io.WriteString(f, text); return err }); err != nil {
			return failed, err
		}
	}
	return failed, nil
}

// readReference reads one reference.json and checks that it is complete.
func readReference(path string) (reference, error) {
	var ref reference
	data, err := os.ReadFile(path)
	if err != nil {
		return ref, err
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		return ref, fmt.Errorf("%s: %w", path, err)
	}
	for _, name := range probeNames {
		if len(ref.Probes[name]) == 0 {
			return ref, fmt.Errorf("%s: no probe %q (written by another version of check-backend?)", path, name)
		}
	}
	return ref, nil
}

// metricNames are the training-step metrics compared.
var metricNames = []string{"generator loss", "prior loss", "mean f(z_post)", "reconstruction MSE"}

// trainStep runs one training step on the stored images and returns its
// metrics by name.
func trainStep(model *lebm.Model, in inputs, batch int) (map[string]float64, error) {
	h, w, c := model.Config().Generator.OutputShape()
	m, err := model.TrainStep(tensorOf(in.Images, batch, h, w, c))
	if err != nil {
		return nil, err
	}
	return map[string]float64{"generator loss": m.GeneratorLoss, "prior loss": m.PriorLoss,
		"mean f(z_post)": m.PosteriorEnergy, "reconstruction MSE": m.ReconstructionMSE}, nil
}
