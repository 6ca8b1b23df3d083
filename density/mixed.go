package density

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/sampling"
)

// MixedMethods lists the training objectives for mixed rows — numbers,
// then one one-hot block per categorical column (Config.Mixed says which):
// "med", energy discrepancy with heat-equation perturbations of the
// categories (losses.MixedEnergyDiscrepancy), and "mcd", contrastive
// divergence with negatives drawn from the data by the exact mixed sampler
// (sampling.MixedSweeps).
var MixedMethods = []string{"med", "mcd"}

// MixedSettings are the settings of the mixed methods.
type MixedSettings struct {
	// Columns are the categorical columns, in the order their one-hot
	// blocks follow the numbers.
	Columns MixedColumns
	// T is the heat equation's time of the categorical columns (method
	// "med"; the numbers' Gaussian variance is Config.ED.T), scaled for
	// each column as TimeScale says.
	T float64
	// TimeScale is one of MixedTimeScales: "none", every column at time
	// T; "k2", as the authors' code, ordinal and cyclical columns at
	// T·K² (a walk on a path or ring of K categories needs time of order
	// K² to spread over it), uniform ones at T.
	TimeScale string
	// Sweeps, MALASteps and StepSize make method "mcd"'s negatives:
	// Sweeps sweeps of sampling.MixedSweeps, each MALASteps MALA steps of
	// StepSize on the numbers, from where Chains says.
	Sweeps, MALASteps int
	StepSize          float64
	// Chains is one of MixedChains: "data", the sweeps start at the batch
	// (short-run contrastive divergence); "persistent", as the authors'
	// baseline, they continue chains kept in the model (one per row of
	// the batch, in checkpoints too), started from noise: standard normal
	// numbers and uniform categories.
	Chains string
}

// DefaultMixed are MixedSettings' defaults (no columns: set them from the
// table's schema).
var DefaultMixed = MixedSettings{T: 0.1, TimeScale: "none", Sweeps: 1, MALASteps: 5, StepSize: 0.1, Chains: "data"}

// MixedChains lists MixedSettings.Chains' values.
var MixedChains = []string{"data", "persistent"}

// DefaultMixedED is method "med"'s energy discrepancy on the numbers
// (Config.ED): Gaussian noise of variance 0.01 (σ 0.1 on standardised
// numbers, as the authors' tabular code), 32 negatives, w = 1. On IBM's
// churn table it lifted SDMetrics' quality from 0.887 (the 2-D setting
// t = 1, M = 4) to 0.926 (docs/tables.md). densityrun.TrainTable sets
// the variance from the table instead (densityrun.NoiseGaps): 0.01 suits
// churn's close rows but lets a small table's model single out its rows.
var DefaultMixedED = losses.EDConfig{T: 0.01, M: 32, W: 1}

// MixedTimeScales lists MixedSettings.TimeScale's values.
var MixedTimeScales = []string{"none", "k2"}

// time is the heat equation's time of column c.
func (s MixedSettings) time(c MixedColumn) float64 {
	if s.TimeScale == "k2" && c.Structure != losses.Uniform {
		return s.T * float64(c.Categories*c.Categories)
	}
	return s.T
}

// MixedColumn is one categorical column: its categories and the graph of
// its perturbation.
type MixedColumn struct {
	Categories int
	Structure  losses.CategoryGraph
}

// MixedColumns are stored as one setting, "K:structure,…" ("3:ordinal,12:cyclical").
type MixedColumns []MixedColumn

// ParamValue implements settings.Value.
func (m *MixedColumns) ParamValue() any {
	parts := make([]string, len(*m))
	for i, c := range *m {
		parts[i] = fmt.Sprintf("%d:%s", c.Categories, c.Structure)
	}
	return strings.Join(parts, ",")
}

// SetParamValue implements settings.Value.
func (m *MixedColumns) SetParamValue(value any) error {
	text, ok := value.(string)
	if !ok {
		return fmt.Errorf("has type %T; want a string such as 3:ordinal,12:cyclical", value)
	}
	*m = nil
	if text == "" {
		return nil
	}
	for _, part := range strings.Split(text, ",") {
		k, structure, _ := strings.Cut(strings.TrimSpace(part), ":")
		n, err := strconv.Atoi(k)
		if err != nil {
			return fmt.Errorf("column %q: want K:structure, such as 3:ordinal", part)
		}
		*m = append(*m, MixedColumn{Categories: n, Structure: losses.CategoryGraph(structure)})
	}
	return nil
}

// Categories is each column's number of categories.
func (m MixedColumns) Categories() []int {
	k := make([]int, len(m))
	for i, c := range m {
		k[i] = c.Categories
	}
	return k
}

// validate reports the first invalid mixed setting of method.
func (s MixedSettings) validate(method string, ed losses.EDConfig) error {
	if len(s.Columns) == 0 {
		return fmt.Errorf("method %s: no categorical columns: want the table's (Config.Mixed.Columns)", method)
	}
	if method == "med" {
		if !slices.Contains(MixedTimeScales, s.TimeScale) {
			return fmt.Errorf("mixed energy discrepancy: time scale %q (toy_mixed_t_scale), want one of %v", s.TimeScale, MixedTimeScales)
		}
		return s.lossConfig(1, ed).Validate() // one number stands for any: the columns and M, w are checked
	}
	for i, c := range s.Columns {
		if c.Categories < 2 {
			return fmt.Errorf("categorical column %d: %d categories, want ≥ 2", i+1, c.Categories)
		}
	}
	if !slices.Contains(MixedChains, s.Chains) {
		return fmt.Errorf("mixed contrastive divergence: chains %q (toy_mixed_chains), want one of %v", s.Chains, MixedChains)
	}
	if s.Sweeps < 1 || s.MALASteps < 0 || !(s.StepSize > 0) {
		return fmt.Errorf("mixed contrastive divergence: %d sweeps, %d MALA steps of %v: want ≥ 1 sweep, ≥ 0 steps, a step > 0", s.Sweeps, s.MALASteps, s.StepSize)
	}
	return nil
}

// lossConfig is method "med"'s loss settings for rows with numeric
// numbers.
func (s MixedSettings) lossConfig(numeric int, ed losses.EDConfig) losses.MixedEDConfig {
	cfg := losses.MixedEDConfig{Numeric: numeric, T: ed.T, M: ed.M, W: ed.W, DropLogM: ed.DropLogM}
	for _, c := range s.Columns {
		cfg.Columns = append(cfg.Columns, losses.CategoricalColumn{Categories: c.Categories, Graph: c.Structure, T: s.time(c)})
	}
	return cfg
}

// mixedLoss is the loss of method "med" or "mcd" on the rows x.
func mixedLoss(ctx *context.Context, energy losses.EnergyFn, x *Node, cfg Config) *Node {
	numeric := x.Shape().Dimensions[1]
	for _, k := range cfg.Mixed.Columns.Categories() {
		numeric -= k
	}
	if numeric < 0 {
		panic(fmt.Errorf("density: rows of %d values, fewer than the categorical columns' %v", x.Shape().Dimensions[1], cfg.Mixed.Columns.Categories()))
	}
	if cfg.Method == "med" {
		return losses.MixedEnergyDiscrepancy(ctx, energy, x, cfg.Mixed.lossConfig(numeric, cfg.ED))
	}
	layout := sampling.MixedLayout{Numeric: numeric, Categories: cfg.Mixed.Columns.Categories()}
	step := Scalar(x.Graph(), x.DType(), cfg.Mixed.StepSize)
	start, chains := x, (*context.Variable)(nil)
	if cfg.Mixed.Chains == "persistent" {
		chains, start = persistentStart(ctx, "mixed_chains", x, mixedNoise(ctx, x, layout))
	}
	negatives, _ := sampling.MixedSweeps(ctx, energy, start, layout, step, cfg.Mixed.Sweeps, cfg.Mixed.MALASteps)
	if chains != nil {
		chains.SetValueGraph(negatives)
	}
	return losses.ContrastiveDivergenceWithNegatives(energy, x, negatives, cfg.CD.Reg)
}

// mixedNoise returns rows shaped as x [B, Width] of standard normal
// numbers and uniformly drawn categories, one-hot.
func mixedNoise(ctx *context.Context, x *Node, layout sampling.MixedLayout) *Node {
	b := x.Shape().Dimensions[0]
	var parts []*Node
	if layout.Numeric > 0 {
		parts = append(parts, ctx.RandomNormal(x.Graph(), shapes.Make(x.DType(), b, layout.Numeric)))
	}
	for _, k := range layout.Categories {
		u := ctx.RandomUniform(x.Graph(), shapes.Make(x.DType(), b))
		index := MinScalar(ConvertDType(Floor(MulScalar(u, float64(k))), dtypes.Int32), float64(k-1))
		parts = append(parts, OneHot(index, k, x.DType()))
	}
	return Concatenate(parts, 1)
}
