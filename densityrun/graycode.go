package densityrun

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets/graycode"
	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// GrayCodeOptions say what GrayCode trains: the paper's discrete
// density-estimation experiment, as cmd/train-graycode runs it.
type GrayCodeOptions struct {
	// Data are the toy sets (toy2d.Names), each Gray-coded to
	// graycode.Bits bits.
	Data []string
	// Configs are the models to train, one per method
	// (density.BinaryMethods), each in its own folder Out/SET/METHOD.
	Configs []density.Config
	// Out is the output folder; Backend the GoMLX backend
	// (backend.Resolve's syntax; "" for auto).
	Out, Backend string
	// Steps and Batch are each model's training steps and fresh samples
	// per step; Seed seeds everything.
	Steps, Batch int
	Seed         int64
	// Grid is the heat maps' cells per axis (the model's samples are drawn
	// from these cells); MMDN the samples on each side of an MMD.
	Grid, MMDN int
	// CheckpointEvery is the time between checkpoints.
	CheckpointEvery time.Duration
	// Command is the command line written at the top of results.md.
	Command string
	// Stop ends the run at the end of the step it receives in, saved, with
	// training.ErrStopped; nil: never.
	Stop <-chan os.Signal
}

// GrayCode trains every configuration of o on every set of o.Data, and
// writes, for each, the learned distribution decoded back to the plane as
// a heat map (density.png, the paper's figure) beside the data's
// (data.png), its metrics log and losses.png, and a checkpoint a run
// started again resumes from; and, in Out, results.md: the MMD²
// (exponential Hamming kernel, as Dai et al.) between fresh data and
// samples of each model, with the values of a second data sample (the
// floor) and of uniform noise over the plotted square (the ceiling).
//
// The model's samples are drawn from its distribution restricted to the
// heat map's cells — exactly, by enumeration, not by MCMC — each then
// uniformly within its cell: the model at the heat map's resolution, where
// the data live (the codes outside the square are not drawn).
func GrayCode(o GrayCodeOptions) error {
	var sets []*toy2d.Set
	for _, name := range o.Data {
		set, err := toy2d.New(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("Options.Data: %w", err)
		}
		sets = append(sets, set)
	}
	b, done, err := openRun(o.Backend, o.Out)
	if err != nil {
		return err
	}
	defer done()
	var rows []grayCodeResult
	for _, set := range sets {
		for _, cfg := range o.Configs {
			r, err := trainGrayCode(b, set, cfg, o)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", set.Name(), cfg.Method, err)
			}
			rows = append(rows, r)
		}
	}
	return writeGrayCodeResults(filepath.Join(o.Out, "results.md"), o, rows)
}

// grayCodeResult is the MMD² values of one set and method.
type grayCodeResult struct {
	set, method string
	// model, gridded, floor and uniform are the MMD² of the model's
	// samples, of data redrawn within their cells (the best samples drawn
	// from the cells can do), of a second data sample and of uniform noise
	// over the square.
	model, gridded, floor, uniform float64
}

// trainGrayCode trains (or resumes) the model on set, draws its pictures
// and returns its MMDs.
func trainGrayCode(b backends.Backend, set *toy2d.Set, cfg density.Config, o GrayCodeOptions) (grayCodeResult, error) {
	folder := training.Folder{Dir: filepath.Join(o.Out, set.Name(), cfg.Method)}
	if err := os.MkdirAll(folder.Dir, 0o755); err != nil {
		return grayCodeResult{}, err
	}
	enc := graycode.For(set)
	model, err := density.New(b, cfg, o.Seed)
	if err != nil {
		return grayCodeResult{}, err
	}
	points, err := toy2d.NewDataset(set, o.Batch, uint64(o.Seed))
	if err != nil {
		return grayCodeResult{}, err
	}
	if err := resumeRun(model, folder, runSettings{set.Name(), o.Seed, o.Batch}); err != nil {
		return grayCodeResult{}, err
	}
	if err := points.Seek(int(model.Step())); err != nil {
		return grayCodeResult{}, err
	}
	fmt.Printf("training %s on Gray-coded %s (extent %.2f, %d bits) from step %d to %d → %s\n", cfg.Method, set.Name(), enc.Extent, graycode.Bits, model.Step(), o.Steps, folder.Dir)
	history, err := Fit(model, encoded{points, enc}, FitOptions{Folder: folder, To: int64(o.Steps), Interval: o.CheckpointEvery, Stop: o.Stop})
	if err != nil {
		return grayCodeResult{}, err
	}
	if err := plotLoss(folder, cfg.Method+" training loss", history); err != nil {
		return grayCodeResult{}, err
	}
	return measureGrayCode(model, set, enc, cfg, o, folder)
}

// measureGrayCode draws the model's distribution over the heat map's cells
// beside the data's, and measures the MMDs.
func measureGrayCode(model *density.Model, set *toy2d.Set, enc graycode.Encoding, cfg density.Config, o GrayCodeOptions, folder training.Folder) (grayCodeResult, error) {
	grid := density.Grid{Extent: [4]float64{-enc.Extent, enc.Extent, -enc.Extent, enc.Extent}, Size: o.Grid}
	bits, err := enc.EncodeAll(grid.Points())
	if err != nil {
		return grayCodeResult{}, err
	}
	energies, err := model.Energies(bits, graycode.Bits)
	if err != nil {
		return grayCodeResult{}, err
	}
	probs := softmaxNeg(energies)
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x6d6d64))
	data := func() []float32 { return set.Sample(rng, o.MMDN) }
	histogram := make([]float64, len(probs))
	fresh := data()
	for i := 0; i < len(fresh); i += 2 {
		if c, ok := cellOf(grid, fresh[i], fresh[i+1]); ok {
			histogram[c] += 1 / float64(o.MMDN)
		}
	}
	opts := plots.HeatmapOptions{Scale: max(1, 400/o.Grid)}
	if err := plots.WriteHeatmap(folder.Path("density.png"), probs, o.Grid, o.Grid, opts); err != nil {
		return grayCodeResult{}, err
	}
	if err := plots.WriteHeatmap(folder.Path("data.png"), histogram, o.Grid, o.Grid, opts); err != nil {
		return grayCodeResult{}, err
	}

	r := grayCodeResult{set: set.Name(), method: cfg.Method}
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
		{&r.model, drawCells(rng, grid, probs, o.MMDN)},
		{&r.gridded, regridded(rng, grid, data())},
		{&r.floor, data()},
		{&r.uniform, drawCells(rng, grid, uniform, o.MMDN)},
	} {
		if *c.value, err = eval.HammingMMD(encode(c.sample), reference, graycode.Bits); err != nil {
			return grayCodeResult{}, err
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

// writeGrayCodeResults writes the MMD table.
func writeGrayCodeResults(path string, o GrayCodeOptions, rows []grayCodeResult) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		fmt.Fprintf(w, "Command: `%s`\n\n", o.Command)
		fmt.Fprintf(w, "| set | method | MMD² model (samples of the cells) | MMD² data redrawn within its cells (the cells' floor) | MMD² second data sample | MMD² uniform on the square (ceiling) |\n|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %.5f | %.5f | %.5f | %.5f |\n", r.set, r.method, r.model, r.gridded, r.floor, r.uniform)
		}
		return nil
	})
}
