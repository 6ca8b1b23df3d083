package densityrun

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets/vectors"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/sampling"
	"github.com/edlebm/edlebm/training"
)

// Names of the files a run writes.
const (
	// ResultsFile, in each method's folder, holds its Results.
	ResultsFile = "results.json"
	// SummaryFile, in the run folder, is every method's held-out
	// log-likelihood with its interval, as CSV.
	SummaryFile = "loglik.csv"
	// PairsPlot draws data (below the diagonal) against samples (above).
	PairsPlot = "pairs.png"
)

// Results are what a method's model measured.
type Results struct {
	Method string `json:"method"`
	Step   int64  `json:"step"`
	// TestLogLikelihood is the mean log-likelihood of the held-out rows on
	// the data's scale, log p(x) = −E(u) − log Z + log|∂u/∂x| for the
	// standardised u; TestInterval its 95 % bootstrap interval over the
	// rows. TrainLogLikelihood is the same over the training rows.
	TestLogLikelihood  float64       `json:"test_loglik"`
	TestInterval       eval.Interval `json:"test_loglik_interval"`
	TrainLogLikelihood float64       `json:"train_loglik"`
	// LogZ is AIS's estimate on the standardised scale, with its 95 %
	// bootstrap interval over the chains and the acceptance of its
	// transitions; AIS holds them with their evidence of convergence (the
	// check run, the reverse run's upper estimate, warnings).
	LogZ          float64            `json:"log_z"`
	LogZInterval  eval.Interval      `json:"log_z_interval"`
	AISAcceptance float64            `json:"ais_acceptance"`
	AIS           sampling.AISResult `json:"ais"`
	// SampleStepSize and SampleAcceptance are those of the MALA chains
	// that drew the samples, after their tuned warm-up.
	SampleStepSize   float64 `json:"sample_step_size"`
	SampleAcceptance float64 `json:"sample_acceptance"`
	// ModelledColumns is the number of columns the model saw: the file's
	// but those set aside. SetAside are those (the data record's, each
	// holding one value in every training row), and LogLikelihoodOf says
	// in words whose log-likelihood the numbers are: with columns set
	// aside, log p(x_varying | x_constant), the set-aside columns a point
	// mass that has no density to add.
	ModelledColumns int              `json:"modelled_columns"`
	SetAside        []ConstantColumn `json:"set_aside_columns,omitempty"`
	LogLikelihoodOf string           `json:"loglik_of"`
	// TestRowsOffConstant counts the held-out rows that do not hold the
	// training value in some set-aside column: they are scored on their
	// modelled columns alone (RowModel refuses such rows: under the
	// point mass their density is 0).
	TestRowsOffConstant int `json:"test_rows_off_constant,omitempty"`
}

// measure estimates the model's log Z by AIS, the log-likelihoods of the
// held-out and training rows, and draws o.Samples MALA samples
// (standardised).
func measure(b backends.Backend, model *density.Model, cfg density.Config, data *runData, o Options) (Results, []float32, error) {
	d := data.dim
	r := Results{Method: cfg.Method, Step: model.Step(), ModelledColumns: d, SetAside: data.record.SetAside, LogLikelihoodOf: data.logLikelihoodOf()}
	for i := range data.test.N {
		if _, off := data.record.offSetAside(data.test.Row(i)); off {
			r.TestRowsOffConstant++
		}
	}
	aisCfg := o.AIS
	aisCfg.Stop, aisCfg.Progress = o.Stop, cfg.Method+": AIS temperatures"
	if o.AISBase == AISBaseData {
		aisCfg.BaseMean, aisCfg.BaseCov = dataGaussian(data.trainPoints, d)
	}
	ais, err := sampling.AIS(b, model.Context(), func(ctx *context.Context) losses.EnergyFn {
		energy := density.AveragedEnergy(ctx, cfg)
		return func(x *Node) *Node { // the chains are float64, the network float32
			return ConvertDType(energy(ConvertDType(x, dtypes.Float32)), x.DType())
		}
	}, d, aisCfg)
	if errors.Is(err, sampling.ErrStopped) {
		return r, nil, fmt.Errorf("%s: AIS: %w", cfg.Method, training.ErrStopped) // a rerun measures anew
	}
	if err != nil {
		return r, nil, err
	}
	r.LogZ, r.LogZInterval, r.AISAcceptance, r.AIS = ais.LogZ, ais.Interval, ais.Acceptance, ais
	reportAIS(cfg.Method, ais)
	logJ := data.record.Standardizer.LogJacobian()
	// One call for both sets: one graph to compile.
	logLik, err := model.Energies(slices.Concat(data.testPoints, data.trainPoints), d)
	if err != nil {
		return r, nil, err
	}
	for i, e := range logLik {
		logLik[i] = -e - r.LogZ + logJ
	}
	test, train := logLik[:data.test.N], logLik[data.test.N:]
	r.TestLogLikelihood, r.TrainLogLikelihood = stat.Mean(test, nil), stat.Mean(train, nil)
	if r.TestInterval, err = eval.MeanInterval(test, 1000, uint64(o.Seed)); err != nil {
		return r, nil, err
	}
	samples, err := drawSamples(b, model, cfg, d, o, &r)
	return r, samples, err
}

// logLikelihoodOf says whose log-likelihood the run measures (Results'
// LogLikelihoodOf).
func (data *runData) logLikelihoodOf() string {
	if k := len(data.record.SetAside); k > 0 {
		return fmt.Sprintf("the %d varying columns given the %d set aside (each one value in every training row: a point mass, with no density to add)", data.dim, k)
	}
	return fmt.Sprintf("all %d columns", data.dim)
}

// The bases of Options.AISBase.
const (
	AISBaseData      = "data"
	AISBaseIsotropic = "isotropic"
)

// dataRidge is added to the variances of the training rows' Gaussian, the
// AIS base: a constant column (variance 0), modelled (ConstantModel),
// keeps a base with a density.
const dataRidge = 1e-2

// dataGaussian is the mean (d) and covariance (d×d, ridge dataRidge) of
// the standardised points.
func dataGaussian(points []float32, d int) (mean, cov []float64) {
	n := len(points) / d
	mean, cov = make([]float64, d), make([]float64, d*d)
	for i, v := range points {
		mean[i%d] += float64(v) / float64(n)
	}
	for r := range n {
		row := points[r*d : (r+1)*d]
		for i := range d {
			for j := range d {
				cov[i*d+j] += (float64(row[i]) - mean[i]) * (float64(row[j]) - mean[j]) / float64(n)
			}
		}
	}
	for i := range d {
		cov[i*d+i] += dataRidge
	}
	return mean, cov
}

// reportAIS prints AIS's estimate with its evidence, and its warnings.
func reportAIS(method string, r sampling.AISResult) {
	fmt.Printf("%s: AIS log Z %.4f [%.4f, %.4f] at %d temperatures (acceptance %.3f, %.0f effective chains of %d); %.4f at %d; reverse %.4f: bracket %.3f nats; thermodynamic length %.1f (pilot: %d temperatures); %.0f s\n",
		method, r.LogZ, r.Interval.Lo, r.Interval.Hi, r.Temperatures, r.Acceptance, r.EffectiveChains, r.Chains, r.Check.LogZ, r.Check.Temperatures, r.Upper.LogZ, r.Bracket, r.Length, r.PilotTemperatures, r.Seconds)
	for _, w := range r.Warnings {
		fmt.Printf("%s: WARNING: AIS: %s\n", method, w)
	}
}

// drawSamples runs o.Samples MALA chains from N(0, I) for o.SampleSteps
// steps, the first half a warm-up that tunes the step size.
func drawSamples(b backends.Backend, model *density.Model, cfg density.Config, d int, o Options, r *Results) ([]float32, error) {
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x5a3))
	x0 := make([]float32, o.Samples*d)
	for i := range x0 {
		x0[i] = float32(rng.NormFloat64())
	}
	ctx := model.Context()
	energy := density.AveragedEnergy(ctx, cfg)
	warmup := o.SampleSteps / 2
	step, x, err := sampling.TuneMALA(b, ctx, energy, tensors.FromFlatDataAndDimensions(x0, o.Samples, d),
		sampling.TuneConfig{Target: 0.574, InitialStepSize: 0.1, WarmupSteps: warmup})
	if err != nil {
		return nil, fmt.Errorf("tuning the sampler: %w", err)
	}
	defer x.FinalizeAll()
	final, acceptance, err := sampling.RunMALA(b, ctx, energy, x, sampling.MALAConfig{StepSize: step, Steps: o.SampleSteps - warmup})
	if err != nil {
		return nil, fmt.Errorf("sampling: %w", err)
	}
	defer final.FinalizeAll()
	r.SampleStepSize, r.SampleAcceptance = step, acceptance
	return tensors.MustCopyFlatData[float32](final), nil
}

// writeOutputs writes a method's results, its samples in the input's
// format and scale (the set-aside columns' values put back, so that they
// have the input's columns), and the pictures of data against samples:
// energy and density heat maps and scatter pictures for d = 2 modelled
// columns, pairwise marginals for d > 2 (the first four modelled
// coordinates, standardised).
func writeOutputs(dir string, model *density.Model, data *runData, samples []float32, r Results) error {
	if err := atomicfile.WriteJSON(filepath.Join(dir, ResultsFile), r); err != nil {
		return err
	}
	d := data.dim
	n := len(samples) / d
	out := &vectors.Set{Name: "samples", N: n, D: data.all.D, Values: data.record.withSetAside(data.record.Standardizer.Invert(samples)), Columns: data.all.Columns}
	if err := vectors.Write(filepath.Join(dir, samplesName(data.record.File)), out); err != nil {
		return err
	}
	const extent = 4 // standardised
	switch {
	case d == 2:
		box := [4]float64{-extent, extent, -extent, extent}
		if err := plots.WriteScatterDensity(filepath.Join(dir, "samples.png"), samples, box, 100, 4); err != nil {
			return err
		}
		if err := plots.WriteScatterDensity(filepath.Join(dir, "data.png"), data.trainPoints, box, 100, 4); err != nil {
			return err
		}
		const side = 200
		energy, dens, err := model.EnergyAndDensity(density.Grid{Extent: box, Size: side})
		if err != nil {
			return err
		}
		if err := plots.WriteHeatmap(filepath.Join(dir, "energy.png"), energy, side, side, plots.HeatmapOptions{Scale: 2}); err != nil {
			return err
		}
		return plots.WriteHeatmap(filepath.Join(dir, "density.png"), dens, side, side, plots.HeatmapOptions{Scale: 2})
	case d > 2:
		return plots.WritePairs(filepath.Join(dir, PairsPlot), data.trainPoints, samples, d, min(d, 4), [2]float64{-extent, extent}, 60, 2)
	}
	return nil
}

// writeSummary writes every method's held-out log-likelihood, with AIS's
// check, upper estimate and verdict, as CSV and prints it.
func writeSummary(out string, all []Results) error {
	err := atomicfile.Write(filepath.Join(out, SummaryFile), func(w io.Writer) error {
		c := csv.NewWriter(w)
		c.Write([]string{"method", "test_loglik", "lo", "hi", "train_loglik", "log_z", "steps", "log_z_check", "log_z_upper", "ais_converged", "modelled_columns"})
		f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
		for _, r := range all {
			c.Write([]string{r.Method, f(r.TestLogLikelihood), f(r.TestInterval.Lo), f(r.TestInterval.Hi), f(r.TrainLogLikelihood), f(r.LogZ), strconv.FormatInt(r.Step, 10),
				f(r.AIS.Check.LogZ), f(r.AIS.Upper.LogZ), strconv.FormatBool(r.AIS.Converged), strconv.Itoa(r.ModelledColumns)})
		}
		c.Flush()
		return c.Error()
	})
	if err != nil {
		return err
	}
	fmt.Println("method  held-out log-likelihood per row (95 % interval)")
	for _, r := range all {
		unconverged := ""
		if !r.AIS.Converged {
			unconverged = "  (AIS not converged: see its warnings)"
		}
		fmt.Printf("%-6s  %.4f (%.4f to %.4f)%s\n", r.Method, r.TestLogLikelihood, r.TestInterval.Lo, r.TestInterval.Hi, unconverged)
	}
	if len(all) > 0 && len(all[0].SetAside) > 0 {
		r := all[0]
		fmt.Printf("the log-likelihoods are those of %s: %s\n", r.LogLikelihoodOf, describeSetAside(r.SetAside))
		if r.TestRowsOffConstant > 0 {
			fmt.Printf("%d held-out rows differ from the training value in a set-aside column: scored on their varying columns alone\n", r.TestRowsOffConstant)
		}
	}
	return nil
}

// describeSetAside lists set-aside columns with their values: `column
// "pixel_0" = 0, column 33 = 0`.
func describeSetAside(cols []ConstantColumn) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf("%s = %v", c, c.Value)
	}
	return strings.Join(parts, ", ")
}
