package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/edlebm/edlebm/eval"
)

// estimate is log mean exp of the log weights with its interval.
func estimate(temperatures int, logW []float64, acceptance float64, seed int64) (Estimate, error) {
	logZ, iv, err := LogZ(logW, seed)
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{Chains: len(logW), Temperatures: temperatures, LogZ: logZ, Interval: iv, Acceptance: acceptance,
		EffectiveChains: effectiveSampleSize(normalisedWeights(logW))}, nil
}

// LogZ is the AIS estimate of log Z from the chains' log weights, the log
// of their mean weight, with its 95 % bootstrap interval (1,000
// resamplings seeded by seed). A weight that is not finite is an error
// naming its chain.
func LogZ(logWeights []float64, seed int64) (float64, eval.Interval, error) {
	for c, w := range logWeights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return 0, eval.Interval{}, fmt.Errorf("chain %d's log weight is %v: the energy is not finite on the annealing path", c, w)
		}
	}
	iv, err := eval.LogMeanExpInterval(logWeights, 1000, uint64(seed))
	return eval.LogMeanExp(logWeights), iv, err
}

// normalisedWeights is exp(logW) scaled to sum to 1.
func normalisedWeights(logW []float64) []float64 {
	top := math.Inf(-1)
	for _, l := range logW {
		top = max(top, l)
	}
	w, sum := make([]float64, len(logW)), 0.0
	for i, l := range logW {
		w[i] = math.Exp(l - top)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// effectiveSampleSize is 1/Σw² of normalised weights.
func effectiveSampleSize(w []float64) float64 {
	s := 0.0
	for _, v := range w {
		s += v * v
	}
	return 1 / s
}

// resample draws len(w) chains of dim values from chains by systematic
// resampling with the normalised weights w.
func resample(rng *rand.Rand, chains, w []float64, dim int) []float64 {
	n := len(w)
	out := make([]float64, 0, len(chains))
	u, cum, i := rng.Float64()/float64(n), w[0], 0
	for range n {
		for u > cum && i < n-1 {
			i++
			cum += w[i]
		}
		out = append(out, chains[i*dim:(i+1)*dim]...)
		u += 1 / float64(n)
	}
	return out
}

// weightedSD is the standard deviation of v under the normalised weights w.
func weightedSD(v, w []float64) float64 {
	mean := 0.0
	for i := range v {
		mean += w[i] * v[i]
	}
	variance := 0.0
	for i := range v {
		variance += w[i] * (v[i] - mean) * (v[i] - mean)
	}
	return math.Sqrt(variance)
}
