// Command train-graycode is the paper's discrete density-estimation
// experiment (appendix, after Dai et al. 2020): the 2-D toy sets mapped to
// {0,1}³² by Gray codes (datasets/graycode), an MLP energy on the bits
// trained with energy discrepancy under Bernoulli bit flips (density
// method "bed") and, as the baseline, with contrastive divergence on
// persistent Gibbs chains ("bcd"). For each set and method it writes the learned distribution decoded
// back to the plane as a heat map (density.png, the paper's figure) beside
// the data's (data.png), and the MMD² (exponential Hamming kernel, as Dai
// et al.) between fresh data and samples of the model, with the values of
// a second data sample (the floor) and of uniform noise over the plotted
// square (the ceiling), in results.md.
//
// The model's samples are drawn from its distribution restricted to the
// heat map's cells — exactly, by enumeration, not by MCMC — each then
// uniformly within its cell: the model at the heat map's resolution, where
// the data live (the 32-bit codes outside the square are not drawn).
//
//	go run ./cmd/train-graycode -data pinwheel,8gaussians -steps 20000
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/ui/commandline"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/cmd/internal/binaryflags"
	"github.com/edlebm/edlebm/cmd/internal/flagcheck"
	"github.com/edlebm/edlebm/datasets/graycode"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

type options struct {
	binaryflags.Flags
	data, out, backend       string
	steps, batch, grid, mmdN int
	seed                     int64
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("train-graycode", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "pinwheel", "comma-separated 2-D sets: "+strings.Join(toy2d.Names(), ", "))
	fs.StringVar(&o.Methods, "methods", "bed,bcd", "comma-separated methods: bed (energy discrepancy, Bernoulli flips), bcd (contrastive divergence, persistent Gibbs chains)")
	fs.StringVar(&o.out, "out", "out/graycode", "output folder (a folder per set and method is made in it)")
	fs.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.steps, "steps", 20000, "training steps")
	fs.IntVar(&o.batch, "batch", 128, "fresh data samples per step")
	fs.Int64Var(&o.seed, "seed", 1, "random seed (initialisation, data and noise)")
	fs.Float64Var(&o.LearningRate, "lr", 2e-3, "Adam learning rate (the authors')")
	fs.Float64Var(&o.EMADecay, "ema", 0.999, "decay of the parameter average the pictures and the MMD use")
	fs.StringVar(&o.Hidden, "hidden", "256,256,256", "hidden layer widths of the energy MLP (swish)")
	fs.StringVar(&o.Set, "set", "", "GoMLX context settings of the model, after the flags: \"toy_bed_epsilon=0.05;toy_bed_m=16\"; the settings: "+
		strings.Join(density.SettingNames(), ", "))
	fs.IntVar(&o.grid, "grid", 100, "heat-map cells per axis (the model's samples are drawn from these cells)")
	fs.IntVar(&o.mmdN, "mmd-n", 2000, "samples on each side of an MMD")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if _, err := o.Configs(nil); err != nil {
		return o, err
	}
	return o, flagcheck.Check(
		flagcheck.Rule{Flag: "steps", Value: o.steps, OK: o.steps >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "batch", Value: o.batch, OK: o.batch >= 1, Want: "≥ 1"},
		flagcheck.Rule{Flag: "grid", Value: o.grid, OK: o.grid >= 2, Want: "≥ 2"},
		flagcheck.Rule{Flag: "mmd-n", Value: o.mmdN, OK: o.mmdN >= 2, Want: "≥ 2"},
	)
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Fatalf("train-graycode: %v", err)
	}
	if err := run(o); err != nil {
		log.Fatalf("train-graycode: %v", err)
	}
}

func run(o options) error {
	var sets []*toy2d.Set
	for _, name := range strings.Split(o.data, ",") {
		set, err := toy2d.New(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("flag -data: %w", err)
		}
		sets = append(sets, set)
	}
	configs, err := o.Configs(nil)
	if err != nil {
		return err
	}
	b, err := backend.OpenForCommand(o.backend)
	if err != nil {
		return err
	}
	defer b.Finalize()
	writer, err := training.Folder{Dir: o.out}.Claim()
	if err != nil {
		return fmt.Errorf("flag -out: %w", err)
	}
	defer writer.Release()
	var rows []result
	for _, set := range sets {
		for _, cfg := range configs {
			r, err := trainOne(b, set, cfg, o)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", set.Name(), cfg.Method, err)
			}
			rows = append(rows, r)
		}
	}
	return writeResults(filepath.Join(o.out, "results.md"), o, rows)
}

// result is the MMD² values of one set and method.
type result struct {
	set, method string
	// model, gridded, floor and uniform are the MMD² of the model's
	// samples, of data redrawn within their cells (the best samples drawn
	// from the cells can do), of a second data sample and of uniform noise
	// over the square.
	model, gridded, floor, uniform float64
}

// trainOne trains the model on set, draws its pictures and returns its MMDs.
func trainOne(b backends.Backend, set *toy2d.Set, cfg density.Config, o options) (result, error) {
	dir := filepath.Join(o.out, set.Name(), cfg.Method)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return result{}, err
	}
	enc := graycode.For(set)
	model, err := density.New(b, cfg, o.seed)
	if err != nil {
		return result{}, err
	}
	points, err := toy2d.NewDataset(set, o.batch, uint64(o.seed))
	if err != nil {
		return result{}, err
	}
	fmt.Printf("training %s on Gray-coded %s (extent %.2f, %d bits) for %d steps → %s\n", cfg.Method, set.Name(), enc.Extent, graycode.Bits, o.steps, dir)
	loop := model.NewLoop()
	commandline.AttachProgressBar(loop)
	if _, err := loop.RunToGlobalStep(encoded{points, enc}, o.steps); err != nil {
		return result{}, err
	}

	grid := density.Grid{Extent: [4]float64{-enc.Extent, enc.Extent, -enc.Extent, enc.Extent}, Size: o.grid}
	cells := grid.Points()
	bits, err := enc.EncodeAll(cells)
	if err != nil {
		return result{}, err
	}
	energies, err := model.Energies(bits, graycode.Bits)
	if err != nil {
		return result{}, err
	}
	probs := softmaxNeg(energies)
	rng := rand.New(rand.NewPCG(uint64(o.seed), 0x6d6d64))
	data := func() []float32 { return set.Sample(rng, o.mmdN) }
	histogram := make([]float64, len(probs))
	fresh := data()
	for i := 0; i < len(fresh); i += 2 {
		if c, ok := cellOf(grid, fresh[i], fresh[i+1]); ok {
			histogram[c] += 1 / float64(o.mmdN)
		}
	}
	opts := plots.HeatmapOptions{Scale: max(1, 400/o.grid)}
	if err := plots.WriteHeatmap(filepath.Join(dir, "density.png"), probs, o.grid, o.grid, opts); err != nil {
		return result{}, err
	}
	if err := plots.WriteHeatmap(filepath.Join(dir, "data.png"), histogram, o.grid, o.grid, opts); err != nil {
		return result{}, err
	}

	r := result{set: set.Name(), method: cfg.Method}
	encode := func(pts []float32) []float32 {
		out, _ := enc.EncodeAll(pts)
		return out
	}
	reference := encode(fresh)
	uniform := make([]float64, len(probs))
	for i := range uniform {
		uniform[i] = 1 / float64(len(uniform))
	}
	for _, c := range []struct {
		value  *float64
		sample []float32
	}{
		{&r.model, drawCells(rng, grid, probs, o.mmdN)},
		{&r.gridded, regridded(rng, grid, data())},
		{&r.floor, data()},
		{&r.uniform, drawCells(rng, grid, uniform, o.mmdN)},
	} {
		if *c.value, err = eval.HammingMMD(encode(c.sample), reference, graycode.Bits); err != nil {
			return result{}, err
		}
	}
	fmt.Printf("%s, %s: MMD² model %.5f, data on the cells %.5f, data %.5f, uniform %.5f\n", set.Name(), cfg.Method, r.model, r.gridded, r.floor, r.uniform)
	return r, nil
}

// encoded is a toy set's point batches as Gray-coded bits.
type encoded struct {
	points *toy2d.Dataset
	enc    graycode.Encoding
}

func (e encoded) Name() string { return e.points.Name() + "/graycode" }
func (e encoded) Reset()       { e.points.Reset() }
func (e encoded) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	spec, inputs, labels, err = e.points.Yield()
	if err != nil {
		return nil, nil, nil, err
	}
	defer inputs[0].FinalizeAll()
	bits, err := e.enc.EncodeAll(tensors.MustCopyFlatData[float32](inputs[0]))
	if err != nil {
		return nil, nil, nil, err
	}
	return spec, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(bits, len(bits)/graycode.Bits, graycode.Bits)}, labels, nil
}

// softmaxNeg is softmax(−e).
func softmaxNeg(e []float64) []float64 {
	lo := math.Inf(1)
	for _, v := range e {
		lo = math.Min(lo, v)
	}
	out := make([]float64, len(e))
	var z float64
	for i, v := range e {
		out[i] = math.Exp(lo - v)
		z += out[i]
	}
	for i := range out {
		out[i] /= z
	}
	return out
}

// drawCells draws n points of grid: a cell with probabilities probs (in
// Grid.Points order), then a point uniformly within it, so that a sample's
// low bits vary as the data's do.
func drawCells(rng *rand.Rand, grid density.Grid, probs []float64, n int) []float32 {
	cells := grid.Points()
	cdf := make([]float64, len(probs))
	var sum float64
	for i, p := range probs {
		sum += p
		cdf[i] = sum
	}
	out := make([]float32, 0, 2*n)
	for range n {
		i := min(len(cdf)-1, searchCDF(cdf, rng.Float64()*sum))
		out = append(out, jitter(rng, grid, cells[2*i], cells[2*i+1])...)
	}
	return out
}

// jitter is a point drawn uniformly in the grid cell centred at (x, y).
func jitter(rng *rand.Rand, g density.Grid, x, y float32) []float32 {
	w := (g.Extent[1] - g.Extent[0]) / float64(g.Size)
	h := (g.Extent[3] - g.Extent[2]) / float64(g.Size)
	return []float32{x + float32((rng.Float64()-0.5)*w), y + float32((rng.Float64()-0.5)*h)}
}

func searchCDF(cdf []float64, u float64) int {
	lo, hi := 0, len(cdf)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if cdf[mid] < u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// regridded redraws each of the flat points uniformly within its grid
// cell (points outside the square stay): data at the resolution the
// model's samples have.
func regridded(rng *rand.Rand, g density.Grid, points []float32) []float32 {
	cells := g.Points()
	out := append([]float32(nil), points...)
	for i := 0; i < len(out); i += 2 {
		if c, ok := cellOf(g, out[i], out[i+1]); ok {
			copy(out[i:i+2], jitter(rng, g, cells[2*c], cells[2*c+1]))
		}
	}
	return out
}

// cellOf is the index, in Grid.Points order, of the cell holding (x, y).
func cellOf(g density.Grid, x, y float32) (int, bool) {
	col := int(math.Floor((float64(x) - g.Extent[0]) / (g.Extent[1] - g.Extent[0]) * float64(g.Size)))
	row := int(math.Floor((float64(y) - g.Extent[2]) / (g.Extent[3] - g.Extent[2]) * float64(g.Size)))
	if col < 0 || col >= g.Size || row < 0 || row >= g.Size {
		return 0, false
	}
	return row*g.Size + col, true
}

// writeResults writes the MMD table.
func writeResults(path string, o options, rows []result) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		fmt.Fprintf(w, "Command: `train-graycode -data %s -methods %s -steps %d -batch %d -seed %d -hidden %s -grid %d -mmd-n %d`\n\n",
			o.data, o.Methods, o.steps, o.batch, o.seed, o.Hidden, o.grid, o.mmdN)
		fmt.Fprintf(w, "| set | method | MMD² model (samples of the cells) | MMD² data redrawn within its cells (the cells' floor) | MMD² second data sample | MMD² uniform on the square (ceiling) |\n|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %.5f | %.5f | %.5f | %.5f |\n", r.set, r.method, r.model, r.gridded, r.floor, r.uniform)
		}
		return nil
	})
}
