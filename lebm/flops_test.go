package lebm

import (
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/nets"
)

// graphFLOPs counts, independently of the FLOP model, the floating-point
// operations of the matrix products that computing roots takes: it walks
// the graph back from roots (the nodes XLA keeps; others are dead code) and
// adds 2·(output size)·(contracted size) for each matrix product. With the
// "gather" transposed convolution every generator and prior layer, and
// every gradient of one, is a rank-2 DotGeneral (nets.contract).
func graphFLOPs(t testing.TB, roots ...*Node) float64 {
	t.Helper()
	seen := map[*Node]bool{}
	stack := append([]*Node(nil), roots...)
	var total float64
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == nil || seen[n] {
			continue
		}
		seen[n] = true
		switch n.Type() {
		case NodeTypeDotGeneral:
			a, out := n.Inputs()[0].Shape(), n.Shape()
			if a.Rank() != 2 || out.Rank() != 2 {
				t.Fatalf("matrix product %s → %s: the count handles rank-2 contractions only", a, out)
			}
			// out is [a's free axis, b's free axis]; a is [free, contracted] in some order.
			total += 2 * float64(out.Size()) * float64(a.Size()/out.Dimensions[0])
		case NodeTypeConvGeneral, NodeTypeDot:
			t.Fatalf("unexpected %s node: the count expects the gather transposed convolution", n.Type())
		}
		stack = append(stack, n.Inputs()...)
	}
	return total
}

// flopsConfig is tinyConfig with a three-layer generator (both kinds of
// layer the presets have: a 1×1 → k×k first layer and strided ones) and a
// prior with distinct widths, so that a layer counted with the wrong
// partner's size shows.
func flopsConfig(t testing.TB, method, smVariant string) Config {
	cfg := tinyConfig(t)
	cfg.Generator = nets.GeneratorConfig{Nz: 5, Layers: []nets.ConvTLayer{
		{Out: 6, Kernel: 4, Stride: 1, Padding: 0}, {Out: 3, Kernel: 4, Stride: 2, Padding: 1}, {Out: 2, Kernel: 3, Stride: 1, Padding: 1}}}
	cfg.Prior = nets.MLPConfig{Hidden: []int{7, 9}, Activation: nets.ActLeakyReLU, LeakySlope: 0.1}
	cfg.PosteriorLangevin.Steps = 3
	cfg.PriorLangevin.Steps = 4
	cfg.TestPosteriorLangevin.Steps = 6
	cfg.GenerationLangevin.Steps = 7
	cfg.ED.M = 3
	cfg.Method, cfg.SMProjections = method, 2
	if smVariant != "" {
		cfg.SMVariant = smVariant
	}
	return cfg
}

// TestFLOPsMatchTheGraph checks the FLOP model against the matrix products
// of the graphs the package builds: a training step, the prior update alone,
// posterior sampling and generation, for each prior update, with the
// paper's piecewise-linear prior and with a smooth one.
func TestFLOPsMatchTheGraph(t *testing.T) {
	t.Parallel()
	const batch = 3
	cases := []struct{ method, variant, activation string }{
		{MethodED, "", nets.ActLeakyReLU},
		{MethodCD, "", nets.ActLeakyReLU},
		{MethodSM, SMFisher, nets.ActLeakyReLU},
		{MethodSM, SMExact, nets.ActLeakyReLU},
		{MethodSM, SMSliced, nets.ActLeakyReLU},
		{MethodED, "", nets.ActSoftplus},
		{MethodCD, "", nets.ActTanh},
		{MethodSM, SMFisher, nets.ActSoftplus},
		{MethodSM, SMFisher, nets.ActSwish},
	}
	for _, c := range cases {
		t.Run(c.method+c.variant+"/"+c.activation, func(t *testing.T) {
			cfg := flopsConfig(t, c.method, c.variant)
			cfg.Prior.Activation = c.activation
			training, err := cfg.TrainingFLOPs(batch)
			if err != nil {
				t.Fatal(err)
			}
			prior, err := cfg.PriorUpdateFLOPs(batch)
			if err != nil {
				t.Fatal(err)
			}
			checks := []struct {
				what  string
				model float64
				roots func(ctx *context.Context, x *Node) []*Node
			}{
				{"training step", training, func(ctx *context.Context, x *Node) []*Node {
					metrics, finite := TrainStepGraph(ctx, cfg, x)
					roots := []*Node{metrics, finite}
					for v := range ctx.IterVariables() {
						if v.ChangedInGraph(x.Graph()) {
							roots = append(roots, v.ValueGraph(x.Graph()))
						}
					}
					return roots
				}},
				{"prior update", prior, func(ctx *context.Context, x *Node) []*Node {
					loss, _ := PriorLoss(ctx, cfg, x, BaseSample(ctx, cfg, x.Graph(), batch))
					return append(Gradient(loss, ScopeValues(ctx, PriorScope, x.Graph())...), loss)
				}},
				{"posterior", cfg.PosteriorFLOPs(batch, cfg.TestPosteriorLangevin), func(ctx *context.Context, x *Node) []*Node {
					return []*Node{PosteriorSample(ctx, cfg, x, BaseSample(ctx, cfg, x.Graph(), batch), cfg.TestPosteriorLangevin)}
				}},
				{"generation", cfg.GenerationFLOPs(batch, cfg.GenerationLangevin), func(ctx *context.Context, x *Node) []*Node {
					return []*Node{Generate(ctx, cfg, x.Graph(), batch, cfg.GenerationLangevin)}
				}},
			}
			for _, check := range checks {
				if got := buildFLOPs(t, cfg, batch, check.roots); got != check.model || got == 0 {
					t.Errorf("%s: FLOP model %.0f, the graph's products %.0f", check.what, check.model, got)
				}
			}
		})
	}
}

// TestFLOPsOfUnmodelledScoreMatching checks that score matching with second
// derivatives of a smooth prior, which the model does not cover, is an
// error naming the variant and the activation rather than a wrong count.
func TestFLOPsOfUnmodelledScoreMatching(t *testing.T) {
	t.Parallel()
	for _, variant := range []string{SMExact, SMSliced} {
		cfg := flopsConfig(t, MethodSM, variant)
		cfg.Prior.Activation = nets.ActSoftplus
		_, err := cfg.TrainingFLOPs(8)
		if err == nil || !strings.Contains(err.Error(), variant) || !strings.Contains(err.Error(), nets.ActSoftplus) {
			t.Errorf("%s with softplus: TrainingFLOPs error %v, want one naming %q and %q", variant, err, variant, nets.ActSoftplus)
		}
	}
}

// buildFLOPs builds, in a graph of its own on a fresh context, the nodes
// roots returns for a batch of images of cfg's shape, and counts their
// products (graphFLOPs).
func buildFLOPs(t *testing.T, cfg Config, batch int, roots func(ctx *context.Context, x *Node) []*Node) float64 {
	t.Helper()
	var flops float64
	ctx := context.New()
	ctx.SetParam(nets.ParamConvTImpl, string(nets.ConvTGather))
	if err := ctx.SetRNGStateFromSeed(cfg.Seed); err != nil {
		t.Fatal(err)
	}
	// The graph is built, never compiled: compiling the unrolled chains
	// would take most of the test's time on XLA.
	g := NewGraph(testBackend(), "flops")
	defer g.Finalize()
	h, w, ch := cfg.Generator.OutputShape()
	x := Parameter(g, "x", shapes.Make(cfg.dtype(), batch, h, w, ch))
	flops = graphFLOPs(t, roots(ctx, x)...)
	return flops
}
