package sampling

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/edlebm/edlebm/eval"
)

// TestScheduleGrid: two segments of spread 3 on [0, 0.5] and 1 on
// (0.5, 1] make a length of 2, and the adaptive grid's density
// 0.9·sd/2 + 0.1 (1.45, then 0.55) puts temperature k at
// β = (k/T)/1.45 up to F(0.5) = 0.725, then 0.5 + (k/T − 0.725)/0.55;
// the linear grid is k/T; each temperature's parameters are its
// segment's.
func TestScheduleGrid(t *testing.T) {
	s := schedule{{lo: 0, hi: 0.5, sd: 3, params: []float64{1}}, {lo: 0.5, hi: 1, sd: 1, params: []float64{2}}}
	if got := s.length(); math.Abs(got-2) > 1e-12 {
		t.Errorf("length %v, want 2", got)
	}
	const temperatures = 40
	adaptive, linear := s.grid(temperatures, true), s.grid(temperatures, false)
	for k := range temperatures + 1 {
		u := float64(k) / temperatures
		want := u / 1.45
		if u > 0.725 {
			want = 0.5 + (u-0.725)/0.55
		}
		if math.Abs(adaptive[k]-want) > 1e-12 || math.Abs(linear[k]-u) > 1e-12 {
			t.Errorf("temperature %d: adaptive β %v, want %v; linear %v, want %v", k, adaptive[k], want, linear[k], u)
		}
	}
	if adaptive[temperatures] != 1 || !slices.IsSorted(adaptive) {
		t.Errorf("adaptive grid %v: want sorted, ending at 1", adaptive)
	}
	for _, tc := range []struct {
		beta float64
		want float64
	}{{0, 1}, {0.25, 1}, {0.5, 1}, {0.5000001, 2}, {1, 2}} {
		if got := s.paramsAt(tc.beta)[0]; got != tc.want {
			t.Errorf("parameters at β %v: %v, want %v", tc.beta, got, tc.want)
		}
	}
	if flat := (schedule{{lo: 0, hi: 1, params: []float64{1}}}).grid(4, true); !slices.Equal(flat, []float64{0, 0.25, 0.5, 0.75, 1}) {
		t.Errorf("a schedule of no length: grid %v, want linear", flat)
	}
}

// TestResampleKeepsProportions: systematic resampling of 4 chains of
// weights ½, ¼, ⅛, ⅛ copies them 2, 1 and 1 times and drops one of the
// last two, whatever the offset.
func TestResampleKeepsProportions(t *testing.T) {
	chains := []float64{0, 0, 1, 1, 2, 2, 3, 3} // 4 chains of 2 values
	w := []float64{0.5, 0.25, 0.125, 0.125}
	for seed := range uint64(20) {
		out := resample(rand.New(rand.NewPCG(seed, 1)), chains, w, 2)
		counts := make([]int, 4)
		for c := 0; c < len(out); c += 2 {
			if out[c] != out[c+1] {
				t.Fatalf("seed %d: chain %d split: %v", seed, c/2, out)
			}
			counts[int(out[c])]++
		}
		if !slices.Equal(counts, []int{2, 1, 0, 1}) && !slices.Equal(counts, []int{2, 1, 1, 0}) {
			t.Errorf("seed %d: copies %v of 4 resampled chains, want 2, 1 and one of the last two", seed, counts)
		}
	}
	if got := effectiveSampleSize(w); math.Abs(got-1/(0.25+0.0625+2*0.015625)) > 1e-12 {
		t.Errorf("effective sample size %v", got)
	}
}

// TestSpread: the weighted standard deviation (against gonum's), but at
// most three times the interquartile range's estimate when a few values
// are walls of 10¹².
func TestSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	v, w := make([]float64, 400), make([]float64, 400)
	for i := range v {
		v[i], w[i] = rng.NormFloat64()*2+5, rng.Float64()
	}
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	for i := range w {
		w[i] /= sum
	}
	// gonum's weighted variance takes frequency weights: n·w, then back
	// from the (n − 1) divisor to n.
	n := float64(len(v))
	freq := make([]float64, len(w))
	for i := range w {
		freq[i] = n * w[i]
	}
	want := math.Sqrt(stat.Variance(v, freq) * (n - 1) / n)
	if got := spread(v, w); math.Abs(got-want) > 1e-9*want {
		t.Errorf("spread %v, weighted sd %v", got, want)
	}
	walled := slices.Clone(v)
	for i := range 10 {
		walled[i] = -1e12
	}
	if got := spread(walled, uniformWeights(len(walled))); !(got > 4 && got < 8) {
		t.Errorf("spread with 10 walls of 400: %v, want about three times the sd 2 of the rest (its quartiles moved a little by the walls)", got)
	}
}

// TestWeightedMoments against gonum's weighted covariance.
func TestWeightedMoments(t *testing.T) {
	const n, d = 50, 3
	rng := rand.New(rand.NewPCG(3, 4))
	chains, w := make([]float64, n*d), make([]float64, n)
	for i := range chains {
		chains[i] = rng.NormFloat64()
	}
	for i := range w {
		w[i] = rng.Float64()
	}
	sum := floats.Sum(w)
	freq := make([]float64, n) // gonum's frequency weights: n·w, its divisor n − 1
	for i := range w {
		w[i] /= sum
		freq[i] = n * w[i]
	}
	mean, cov := weightedMoments(chains, w, d)
	var want mat.SymDense
	stat.CovarianceMatrix(&want, mat.NewDense(n, d, chains), freq)
	scale := (n - 1.0) / n
	for i := range d {
		if m := stat.Mean(mat.Col(nil, i, mat.NewDense(n, d, chains)), freq); math.Abs(mean[i]-m) > 1e-12 {
			t.Errorf("mean %d: %v, want %v", i, mean[i], m)
		}
		for j := range d {
			if math.Abs(cov[i*d+j]-want.At(i, j)*scale) > 1e-12 {
				t.Errorf("covariance (%d, %d): %v, want %v", i, j, cov[i*d+j], want.At(i, j)*scale)
			}
		}
	}
}

// TestJudge: which disagreements make which warnings.
func TestJudge(t *testing.T) {
	est := func(logZ, lo, hi float64) Estimate {
		return Estimate{Chains: 100, Temperatures: 100, LogZ: logZ, Interval: eval.Interval{Lo: lo, Hi: hi}, EffectiveChains: 90}
	}
	for _, tc := range []struct {
		name        string
		main, check Estimate
		upper       float64
		effective   float64
		want        []string
	}{
		{"agreeing", est(1, 0.9, 1.1), est(1.05, 0.95, 1.15), 1.2, 90, nil},
		{"check apart", est(1, 0.9, 1.1), est(0.5, 0.4, 0.85), 1.2, 90, []string{"differ by more than their intervals"}},
		{"wide bracket", est(1, 0.9, 1.1), est(1, 0.9, 1.1), 2.5, 90, []string{"nats apart"}},
		{"few chains", est(1, 0.9, 1.1), est(1, 0.9, 1.1), 1, 4, []string{"rests on 4.0 of its 100 chains"}},
		{"enough chains", est(1, 0.9, 1.1), est(1, 0.9, 1.1), 1, 5, nil},
		{"all three", est(1, 0.9, 1.1), est(0, -0.1, 0.1), 3, 2, []string{"rests on", "differ by", "nats apart"}},
	} {
		r := AISResult{Estimate: tc.main, Check: tc.check, Upper: Estimate{LogZ: tc.upper}, Bracket: tc.upper - tc.main.LogZ}
		r.EffectiveChains = tc.effective
		r.judge(1)
		if r.Converged != (len(tc.want) == 0) || len(r.Warnings) != len(tc.want) {
			t.Errorf("%s: converged %v, warnings %q; want %d", tc.name, r.Converged, r.Warnings, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(r.Warnings[i], w) {
				t.Errorf("%s: warning %q, want one containing %q", tc.name, r.Warnings[i], w)
			}
		}
	}
}
