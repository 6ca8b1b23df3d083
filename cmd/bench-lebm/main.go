// Command bench-lebm measures the latent EBM's cost per training iteration
// for each prior update (ED, CD, SM) at the paper's data-set shapes, with
// random images of the right shape, and the cost of the prior update alone
// (prior loss and its gradient at given posterior samples), whose ED/CD
// ratio is the paper's efficiency claim. It writes a Markdown table.
//
//	go run ./cmd/bench-lebm -batch 128 -out docs/results/lebm-speed.md
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
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
	shapes := flag.String("shapes", "svhn,cifar10,celeba64", "data-set shapes (generator presets)")
	methods := flag.String("methods", "ed,cd,sm", "prior updates")
	batch := flag.Int("batch", 128, "batch size")
	iters := flag.Int("iters", 3, "timed iterations per row (after one warm-up)")
	priorIters := flag.Int("prior-iters", 20, "timed prior-update-only iterations per row (0: skip that measurement)")
	priorBatch := flag.Int("prior-batch", 0, "batch size of the prior-update-only measurement (0: -batch)")
	out := flag.String("out", "", "Markdown file to write (default: print only)")
	backendFlag := flag.String("backend", "auto", "GoMLX backend: auto, go, cuda or xla:PLUGIN")
	computeDType := flag.String("compute-dtype", "", fmt.Sprintf("generator layers' dtype %q (\"\": float32, the model's)", lebm.ComputeDTypes))
	flag.Parse()

	b, choice, err := backend.Open(*backendFlag)
	if err != nil {
		log.Fatalf("bench-lebm: flag -backend: %v", err)
	}
	defer b.Finalize()
	var table strings.Builder
	fmt.Fprintf(&table, "Command: `bench-lebm %s` — backend %s (%s), %s.\n\n", strings.Join(os.Args[1:], " "), b.Name(), choice.Reason, time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&table, "| shape | method | s / training iteration (batch -batch) | s / prior update alone (batch -prior-batch) | prior update ÷ CD's |\n|---|---|---|---|---|\n")
	fmt.Print(table.String())
	if *priorBatch == 0 {
		*priorBatch = *batch
	}
	for _, shape := range strings.Split(*shapes, ",") {
		priorCD := 0.0
		rows := map[string][2]float64{}
		for _, method := range strings.Split(*methods, ",") {
			full, prior, err := measure(b, shape, method, *computeDType, *batch, *priorBatch, *iters, *priorIters)
			if err != nil {
				log.Fatalf("bench-lebm: %s/%s: %v", shape, method, err)
			}
			rows[method] = [2]float64{full, prior}
			if method == lebm.MethodCD {
				priorCD = prior
			}
		}
		for _, method := range strings.Split(*methods, ",") {
			r := rows[method]
			ratio := "–"
			if priorCD > 0 {
				ratio = fmt.Sprintf("%.3f", r[1]/priorCD)
			}
			line := fmt.Sprintf("| %s | %s | %.3f | %.5f | %s |\n", shape, method, r[0], r[1], ratio)
			table.WriteString(line)
			fmt.Print(line)
		}
	}
	if *out != "" {
		if err := atomicfile.Write(*out, func(w io.Writer) error { _, err := w.Write([]byte(table.String())); return err }); err != nil {
			log.Fatalf("bench-lebm: %v", err)
		}
	}
}

// measure returns seconds per full training iteration and per prior update
// alone for one shape and method, the generator's layers in computeDType.
func measure(b backends.Backend, shape, method, computeDType string, batch, priorBatch, iters, priorIters int) (full, prior float64, err error) {
	cfg, err := lebm.DefaultConfig(shape)
	if err != nil {
		return 0, 0, err
	}
	cfg.Method, cfg.ComputeDType, cfg.Seed = method, computeDType, 1
	model, err := lebm.New(b, cfg)
	if err != nil {
		return 0, 0, err
	}
	images := randomImages(cfg, batch)
	var start time.Time
	for i := range iters + 1 { // the first iteration compiles
		if i == 1 {
			start = time.Now()
		}
		if _, err := model.TrainStep(images); err != nil {
			return 0, 0, err
		}
	}
	full = time.Since(start).Seconds() / float64(iters)
	if priorIters == 0 {
		return full, 0, nil
	}
	prior, err = measurePrior(b, model.Context(), cfg, randomImages(cfg, priorBatch), priorIters)
	return full, prior, err
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
		var params []*Node
		ctx.InAbsPath("/" + lebm.PriorScope).EnumerateVariablesInScope(func(v *context.Variable) {
			params = append(params, v.ValueGraph(x.Graph()))
		})
		total := loss
		for _, grad := range Gradient(loss, params...) {
			total = Add(total, ConvertDType(ReduceAllSum(grad), loss.DType()))
		}
		return total
	})
	if err != nil {
		return 0, err
	}
	defer exec.Finalize()
	var start time.Time
	for i := range iters + 1 {
		if i == 1 {
			start = time.Now()
		}
		if _, err := exec.Exec(images); err != nil {
			return 0, err
		}
	}
	return time.Since(start).Seconds() / float64(iters), nil
}
