package toystudies

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/edlebm/edlebm/datasets/toy2d"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/plots"
)

// MixtureOptions are the settings of [Study.Mixture] (cmd/toy-studies'
// flags in brackets).
type MixtureOptions struct {
	// Points are the data points of the loss curves (-n).
	Points int
	// CurveT are the values of t of ED's loss curves, each with M 32 and
	// w 1 (-curve-t).
	CurveT []float64
	// EstimationT and EstimationM are the values of t and M whose
	// estimates of ρ are measured (-est-t, -est-m).
	EstimationT []float64
	EstimationM []int
	// Repetitions of the estimation, each on EstimationPoints fresh data
	// points and fresh noise (-reps, -est-n).
	Repetitions, EstimationPoints int
}

// DefaultMixtureOptions are the paper's settings.
func DefaultMixtureOptions() MixtureOptions {
	return MixtureOptions{
		Points: 10000, CurveT: []float64{2, 4, 8, 32},
		EstimationT: []float64{1, 2, 8, 32}, EstimationM: []int{4, 32},
		Repetitions: 50, EstimationPoints: 1000,
	}
}

// Mixture writes ED's losses for each of o.CurveT, the negative
// log-likelihood and score matching as functions of the mixture weight ρ
// of 0.2·N(−5,1) + 0.8·N(5,1) data (mixture_losses.csv and .png, each
// curve shifted to minimum 0 in the picture), reports where each is
// minimised, then estimates ρ by minimising ED (and the NLL, as a
// reference) o.Repetitions times for each t and M
// (mixture_estimates.csv: mean, standard deviation and RMSE of ρ̂).
func (s Study) Mixture(o MixtureOptions) error {
	if err := s.makeDir(); err != nil {
		return err
	}
	family := toy2d.MixtureWeightStudy()
	rng := rand.New(rand.NewPCG(s.Seed, 1))
	var eds []losses.EDConfig
	header := []string{"rho"}
	for _, t := range o.CurveT {
		eds = append(eds, losses.EDConfig{T: t, M: 32, W: 1})
		header = append(header, fmt.Sprintf("ed_t%g", t))
	}
	header = append(header, "nll", "sm")
	eval, err := density.NewMixtureEvaluator(s.Backend, family, eds, family.Sample(rng, o.Points), rng)
	if err != nil {
		return err
	}
	defer eval.Close()
	var rows [][]float64
	for i := 1; i < 100; i++ {
		rho := float64(i) / 100
		l, err := eval.At(rho)
		if err != nil {
			return err
		}
		rows = append(rows, append(append([]float64{rho}, l.ED...), l.NLL, l.SM))
	}
	if err := plots.WriteCSV(filepath.Join(s.Dir, "mixture_losses.csv"), header, rows); err != nil {
		return err
	}
	if err := writeMixtureLosses(filepath.Join(s.Dir, "mixture_losses.png"), header, rows); err != nil {
		return err
	}
	for c := 1; c < len(header); c++ {
		best := rows[0]
		for _, r := range rows {
			if r[c] < best[c] {
				best = r
			}
		}
		s.logf("%-8s minimised at ρ = %.2f", header[c], best[0])
	}
	return s.mixtureEstimates(o)
}

// writeMixtureLosses draws each column of rows after the first against
// the first, shifted to minimum 0 so that all fit one axis.
func writeMixtureLosses(path string, header []string, rows [][]float64) error {
	var series []plots.Series
	for c := 1; c < len(header); c++ {
		s := plots.Series{Name: header[c]}
		lowest := math.Inf(1)
		for _, r := range rows {
			lowest = math.Min(lowest, r[c])
		}
		for _, r := range rows {
			s.X, s.Y = append(s.X, r[0]), append(s.Y, r[c]-lowest)
		}
		series = append(series, s)
	}
	return plots.WriteLinePlot(path, plots.LinePlot{
		Title: "Losses against the mixture weight ρ (data ρ = 0.2; each minus its minimum)", XLabel: "ρ", YLabel: "loss − min", Series: series,
	})
}

// mixtureEstimates estimates ρ by minimising ED (and the NLL, for
// reference) on fresh data and noise, o.Repetitions times per (t, M).
func (s Study) mixtureEstimates(o MixtureOptions) error {
	family := toy2d.MixtureWeightStudy()
	const truth = 0.2
	var rows [][]float64
	s.logf("%6s %5s %10s %10s %10s   (%d repetitions of %d points)", "t", "M", "mean ρ̂", "std ρ̂", "RMSE", o.Repetitions, o.EstimationPoints)
	for _, t := range append(o.EstimationT, 0) { // t = 0 marks the maximum-likelihood reference
		for _, m := range o.EstimationM {
			if t == 0 && m != o.EstimationM[0] {
				continue
			}
			var sum, sumSq, sqErr float64
			for r := range o.Repetitions {
				rng := rand.New(rand.NewPCG(s.Seed+uint64(r), uint64(m)))
				cfg := losses.EDConfig{T: math.Max(t, 1), M: m, W: 1}
				eval, err := density.NewMixtureEvaluator(s.Backend, family, []losses.EDConfig{cfg}, family.Sample(rng, o.EstimationPoints), rng)
				if err != nil {
					return err
				}
				rho, err := density.GoldenSectionMin(func(rho float64) (float64, error) {
					l, err := eval.At(rho)
					if t == 0 {
						return l.NLL, err
					}
					return l.ED[0], err
				}, 0.001, 0.999, 1e-4)
				eval.Close()
				if err != nil {
					return err
				}
				sum, sumSq, sqErr = sum+rho, sumSq+rho*rho, sqErr+(rho-truth)*(rho-truth)
			}
			n := float64(o.Repetitions)
			mean := sum / n
			std := math.Sqrt(math.Max(0, sumSq/n-mean*mean))
			rmse := math.Sqrt(sqErr / n)
			if t == 0 {
				s.logf("%6s %5s %10.4f %10.4f %10.4f", "MLE", "-", mean, std, rmse)
			} else {
				s.logf("%6g %5d %10.4f %10.4f %10.4f", t, m, mean, std, rmse)
			}
			rows = append(rows, []float64{t, float64(m), mean, std, rmse})
		}
	}
	return plots.WriteCSV(filepath.Join(s.Dir, "mixture_estimates.csv"), []string{"t(0=MLE)", "M", "mean_rho", "std_rho", "rmse"}, rows)
}
