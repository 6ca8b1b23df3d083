package sampling

import (
	"math"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/losses"
)

// TestAISAgainstClosedForms: log Z of a shifted, narrowed Gaussian in three
// dimensions, (d/2)·log(2πσ²), and of a two-mode mixture in one,
// log((a + b)·√(2πs²)), each within the estimate's bootstrap interval
// (widened by 0.05 for the interval's own error) and within 0.1.
func TestAISAgainstClosedForms(t *testing.T) {
	const sigma, s, a, b = 0.7, 0.5, 1.5, 3.5
	for _, tc := range []struct {
		name   string
		dim    int
		energy losses.EnergyFn
		want   float64
	}{
		{"gaussian", 3, func(x *Node) *Node {
			mu := Const(x.Graph(), []float64{1, -1, 0.5})
			return DivScalar(ReduceSum(Square(Sub(x, InsertAxes(mu, 0))), -1), 2*sigma*sigma)
		}, 1.5 * math.Log(2*math.Pi*sigma*sigma)},
		{"mixture", 1, func(x *Node) *Node {
			x = Squeeze(x, -1)
			left := AddScalar(DivScalar(Square(AddScalar(x, 2)), -2*s*s), math.Log(a))
			right := AddScalar(DivScalar(Square(AddScalar(x, -2)), -2*s*s), math.Log(b))
			top := Max(left, right)
			return Neg(Add(top, Log(Add(Exp(Sub(left, top)), Exp(Sub(right, top))))))
		}, math.Log((a + b) * math.Sqrt(2*math.Pi*s*s))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := AIS(testutil.Backend(), context.New(), func(*context.Context) losses.EnergyFn { return tc.energy }, tc.dim,
				AISConfig{Chains: 400, Temperatures: 500, BaseStd: 3, StepSize: 1.0, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: log Z %.4f [%.4f, %.4f], exact %.4f, acceptance %.3f", tc.name, res.LogZ, res.Interval.Lo, res.Interval.Hi, tc.want, res.Acceptance)
			if tc.want < res.Interval.Lo-0.05 || tc.want > res.Interval.Hi+0.05 || math.Abs(res.LogZ-tc.want) > 0.1 {
				t.Errorf("log Z %.4f [%.4f, %.4f], exact %.4f", res.LogZ, res.Interval.Lo, res.Interval.Hi, tc.want)
			}
			if !(res.Acceptance > 0.3 && res.Acceptance < 1) || len(res.LogWeights) != 400 || len(res.Samples) != 400*tc.dim {
				t.Errorf("acceptance %.3f, %d weights, %d sample values", res.Acceptance, len(res.LogWeights), len(res.Samples))
			}
		})
	}
}

func TestAISConfigRefusesBadSettings(t *testing.T) {
	ok := AISConfig{Chains: 2, Temperatures: 1, BaseStd: 1, StepSize: 0.1}
	for _, tc := range []struct {
		edit func(*AISConfig)
		want string
	}{
		{func(c *AISConfig) { c.Chains = 1 }, "AIS chains = 1"},
		{func(c *AISConfig) { c.Temperatures = 0 }, "AIS temperatures = 0"},
		{func(c *AISConfig) { c.BaseStd = 0 }, "AIS base standard deviation = 0"},
		{func(c *AISConfig) { c.StepSize = -1 }, "MALA step size = -1"},
	} {
		c := ok
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", c, err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("a valid config: %v", err)
	}
}
