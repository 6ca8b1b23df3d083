package density

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
)

// TestMixedMethodsClassifyAsBayes trains both mixed methods (mcd with its
// chains from the data and persistent ones) on rows of one
// number and one categorical column of three categories — c with
// probabilities 0.6, 0.3, 0.1, then x | c ~ N(μ_c, 0.5²) — and reads the
// energy's classification p(c | x) ∝ exp(−E(x, c)) at held-out numbers:
// its probabilities must be near Bayes' (computed here from the truth),
// its accuracy within 0.03 of Bayes' and its calibration error below 0.06.
func TestMixedMethodsClassifyAsBayes(t *testing.T) {
	prior, mu := []float64{0.6, 0.3, 0.1}, []float64{-1, 0, 1.5}
	const sigma = 0.5
	draw := func(rng *rand.Rand) (float64, int) {
		u, c := rng.Float64(), 0
		for c < 2 && u >= prior[c] {
			u -= prior[c]
			c++
		}
		return mu[c] + sigma*rng.NormFloat64(), c
	}
	rng := rand.New(rand.NewPCG(8, 9))
	var data []float32
	for range 4096 {
		x, c := draw(rng)
		row := []float32{float32(x), 0, 0, 0}
		row[1+c] = 1
		data = append(data, row...)
	}
	const n = 600
	var test []float32
	var labels []int
	var bayes []float64
	for range n {
		x, c := draw(rng)
		labels = append(labels, c)
		var z float64
		post := make([]float64, 3)
		for k := range 3 {
			post[k] = prior[k] * math.Exp(-(x-mu[k])*(x-mu[k])/(2*sigma*sigma))
			z += post[k]
		}
		for k := range 3 {
			bayes = append(bayes, post[k]/z)
			row := []float32{float32(x), 0, 0, 0}
			row[1+k] = 1
			test = append(test, row...)
		}
	}
	_, bayesAccuracy, _ := eval.ExpectedCalibrationError(bayes, 3, labels, 10)
	for _, variant := range []struct{ method, chains string }{{"med", "data"}, {"mcd", "data"}, {"mcd", "persistent"}} {
		method := variant.method
		t.Run(method+"-"+variant.chains, func(t *testing.T) {
			cfg := DefaultConfig(method)
			cfg.Mixed.Chains = variant.chains
			cfg.MLP = nets.MLPConfig{Hidden: []int{32, 32}, Activation: "softplus"}
			cfg.LearningRate, cfg.EMADecay = 1e-2, 0.9
			cfg.ED = losses.EDConfig{T: 0.05, M: 16, W: 1}
			cfg.Mixed.Columns = MixedColumns{{Categories: 3, Structure: losses.Uniform}}
			cfg.Mixed.T, cfg.Mixed.Sweeps, cfg.Mixed.MALASteps, cfg.Mixed.StepSize = 0.5, 2, 5, 0.3
			cfg.CD.Reg = 0.01
			_, energies, err := TrainOnPoints(testBackend(), cfg, 5, data, 4, 128, 12, test)
			if err != nil {
				t.Fatal(err)
			}
			probs := make([]float64, 0, 3*n)
			var gap float64
			for i := range n {
				e := energies[3*i : 3*i+3]
				lo := math.Min(e[0], math.Min(e[1], e[2]))
				var z float64
				for _, v := range e {
					z += math.Exp(lo - v)
				}
				for k, v := range e {
					p := math.Exp(lo-v) / z
					probs = append(probs, p)
					gap += math.Abs(p-bayes[3*i+k]) / (3 * n)
				}
			}
			ece, accuracy, err := eval.ExpectedCalibrationError(probs, 3, labels, 10)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: accuracy %.3f (Bayes %.3f), ECE %.3f, mean |p − Bayes| %.3f", method, accuracy, bayesAccuracy, ece, gap)
			if accuracy < bayesAccuracy-0.03 || ece > 0.06 || gap > 0.06 {
				t.Errorf("%s: accuracy %.3f (Bayes %.3f), ECE %.3f, mean |p − Bayes| %.3f", method, accuracy, bayesAccuracy, ece, gap)
			}
		})
	}
}

// TestMixedColumnsRoundTrip: the columns' setting is written and read
// back as one string, and a bad one is refused.
func TestMixedColumnsRoundTrip(t *testing.T) {
	in := MixedColumns{{3, losses.Ordinal}, {12, losses.Cyclical}, {2, losses.Uniform}}
	v := in.ParamValue()
	if v != "3:ordinal,12:cyclical,2:uniform" {
		t.Errorf("ParamValue %q", v)
	}
	var out MixedColumns
	if err := out.SetParamValue(v); err != nil || len(out) != 3 || out[1] != in[1] {
		t.Errorf("read back %v (%v)", out, err)
	}
	if err := out.SetParamValue("x:ordinal"); err == nil {
		t.Error("x:ordinal: no error")
	}
	cfg := DefaultConfig("med")
	if err := cfg.Validate(); err == nil {
		t.Error("med without columns: no error")
	}
}

// TestLoadReadsTheMixedSettings: a mixed model saved and loaded with Load
// (settings from the checkpoint) has the same columns and times, and
// trains on.
func TestLoadReadsTheMixedSettings(t *testing.T) {
	cfg := DefaultConfig("med")
	cfg.MLP.Hidden = []int{8}
	cfg.Mixed.Columns = MixedColumns{{Categories: 3, Structure: losses.Ordinal}, {Categories: 4, Structure: losses.Cyclical}}
	cfg.Mixed.T, cfg.Mixed.TimeScale = 0.25, "k2"
	m, err := New(testBackend(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(testBackend(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.cfg.Mixed; len(got.Columns) != 2 || got.Columns[1] != cfg.Mixed.Columns[1] || got.T != 0.25 || got.TimeScale != "k2" || loaded.cfg.Method != "med" {
		t.Errorf("loaded %+v, saved %+v", got, cfg.Mixed)
	}
	row := []float32{0.3, 0, 1, 0, 0, 0, 0, 1}
	if _, err := loaded.TrainStep(tensors.FromFlatDataAndDimensions(append(row, row...), 2, 8)); err != nil {
		t.Fatal(err)
	}
}

// TestMixedTimeScale: each column's heat-equation time under each
// TimeScale — "k2" as the authors' compute_transition_matrix, t·K² for
// ordinal and cyclical columns — and an unknown scale refused by name.
func TestMixedTimeScale(t *testing.T) {
	columns := MixedColumns{{5, losses.Uniform}, {4, losses.Ordinal}, {6, losses.Cyclical}}
	for _, tc := range []struct {
		scale string
		want  []float64
	}{
		{"none", []float64{0.01, 0.01, 0.01}},
		{"k2", []float64{0.01, 0.16, 0.36}},
	} {
		cfg := DefaultConfig("med")
		cfg.Mixed.Columns, cfg.Mixed.T = columns, 0.01
		cfg, err := cfg.WithSettings("toy_mixed_t_scale=" + tc.scale)
		if err != nil {
			t.Fatal(err)
		}
		for i, col := range cfg.Mixed.lossConfig(2, cfg.ED).Columns {
			if math.Abs(col.T-tc.want[i]) > 1e-12 {
				t.Errorf("%s: column %d (%d, %s) at time %v, want %v", tc.scale, i+1, col.Categories, col.Graph, col.T, tc.want[i])
			}
		}
	}
	cfg := DefaultConfig("med")
	cfg.Mixed.Columns = columns
	if _, err := cfg.WithSettings("toy_mixed_t_scale=k"); err == nil || !strings.Contains(err.Error(), `"k" (toy_mixed_t_scale)`) {
		t.Errorf("time scale k: error %v, want one naming it", err)
	}
}

// TestPersistentMixedChains: method mcd's persistent chains start from
// noise and continue from step to step. With no MALA steps the numbers
// never move after their start: after step 2 they are step 1's (a chain
// started anew would draw new ones, one from the data would hold the
// batch's 5), while the categories stay one-hot.
func TestPersistentMixedChains(t *testing.T) {
	cfg := DefaultConfig("mcd")
	cfg.MLP.Hidden = []int{8}
	cfg.Mixed.Columns = MixedColumns{{Categories: 3, Structure: losses.Uniform}}
	cfg.Mixed.Chains, cfg.Mixed.Sweeps, cfg.Mixed.MALASteps = "persistent", 1, 0
	m, err := New(testBackend(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	batch := slices.Repeat([]float32{5, 1, 0, 0}, 8)
	chains := func() []float32 {
		if _, err := m.TrainStep(tensors.FromFlatDataAndDimensions(batch, 8, 4)); err != nil {
			t.Fatal(err)
		}
		return tensors.MustCopyFlatData[float32](m.Context().InspectVariable(chainsScope, "mixed_chains").MustValue())
	}
	first, second := chains(), chains()
	numbers := map[float32]bool{}
	for i := range 8 {
		numbers[first[4*i]] = true
		a, b := first[4*i:4*i+4], second[4*i:4*i+4]
		if a[0] != b[0] || math.Abs(float64(a[0])) > 5 || a[0] == 5 {
			t.Errorf("chain %d: number %v after step 1, %v after step 2: want the same draw of N(0, 1)", i, a[0], b[0])
		}
		for _, row := range [][]float32{a, b} {
			if row[1]+row[2]+row[3] != 1 || row[1]*row[2]+row[2]*row[3]+row[1]*row[3] != 0 {
				t.Errorf("chain %d: categories %v, want one-hot", i, row[1:])
			}
		}
	}
	if len(numbers) != 8 {
		t.Errorf("the 8 chains' numbers %v: want 8 draws of N(0, 1)", numbers)
	}
	if _, err := cfg.WithSettings("toy_mixed_chains=buffer"); err == nil || !strings.Contains(err.Error(), `"buffer" (toy_mixed_chains)`) {
		t.Errorf("chains buffer: error %v, want one naming it", err)
	}
}
