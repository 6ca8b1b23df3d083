package lebm

import (
	"fmt"
	"math/bits"
	"strings"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/metrics"
)

// stepMetric is one training metric of the Trainer: a scalar prediction of
// StepModelFn, or the failed-checks mask.
type stepMetric struct {
	name, short, kind string
	// index is the prediction's (MetricGeneratorLoss, ...), or -1 for the
	// failed-checks mask.
	index int
}

// stepMetrics lists the Trainer's metrics for cfg: f(z_prior) only where
// the method samples the prior.
func stepMetrics(cfg Config) []stepMetric {
	list := []stepMetric{
		{"Generator loss", "gen", metrics.LossMetricType, MetricGeneratorLoss},
		{"Prior loss", "prior", metrics.LossMetricType, MetricPriorLoss},
		{"Mean f(z_post)", "f(post)", "energy", MetricPosteriorEnergy},
	}
	if cfg.Method == MethodCD {
		list = append(list, stepMetric{"Mean f(z_prior)", "f(prior)", "energy", MetricPriorEnergy})
	}
	return append(list,
		stepMetric{"Reconstruction MSE", "MSE", "MSE", MetricReconstructionMSE},
		stepMetric{"NaN or Inf in", "NaN", "check", -1})
}

// newTrainer creates the model's GoMLX trainer (StepModelFn, NewOptimizer
// and the metrics of stepMetrics) and records where each metric lands in
// the trainer's outputs, which start with the trainer's own loss metrics.
func (m *Model) newTrainer() (err error) {
	defer recoverError(&err, "creating the trainer")
	modelFn := StepModelFn(m.cfg)
	counted := func(ctx *context.Context, spec any, inputs []*Node) []*Node {
		m.trainGraphs++
		return modelFn(ctx, spec, inputs)
	}
	list := stepMetrics(m.cfg)
	objects := make([]metrics.Interface, len(list))
	for i, sm := range list {
		fn := func(_ *context.Context, _, predictions []*Node) *Node { return predictions[sm.index] }
		var pretty metrics.PrettyPrintFn
		if sm.index < 0 {
			fn = func(ctx *context.Context, _, predictions []*Node) *Node { return FailedChecks(ctx, predictions) }
			pretty = func(v *tensors.Tensor) string { return describeChecks(tensors.ToScalar[int32](v)) }
		}
		objects[i] = metrics.NewBaseMetric(sm.name, sm.short, sm.kind, fn, pretty)
	}
	m.trainer = train.NewTrainer(m.backend, m.ctx, counted, nil, NewOptimizer(m.cfg), objects, nil)
	all := m.trainer.TrainMetrics()
	m.metricAt = make(map[int]int, len(list))
	for i, sm := range list {
		for j, o := range all {
			if o == objects[i] {
				m.metricAt[sm.index] = j
			}
		}
	}
	return nil
}

// Trainer returns the model's GoMLX trainer, for a train.Loop (as
// cmd/train-lebm runs one): its model function is StepModelFn, its
// optimizer NewOptimizer, and its training metrics, after the trainer's
// own loss metrics, are the step's losses, energies, reconstruction error
// and failed checks; ReadStepMetrics reads them. Run it on batches of
// images only (no labels).
func (m *Model) Trainer() *train.Trainer { return m.trainer }

// ReadStepMetrics reads the metrics a training step of Trainer returned.
// When a check failed (see Checks), it returns the metrics with Finite
// false and an error naming the step and the quantities: the step's
// update was discarded.
func (m *Model) ReadStepMetrics(outs []*tensors.Tensor) (metrics StepMetrics, err error) {
	defer recoverError(&err, "reading the training metrics")
	value := func(index int) float64 { return tensors.ToScalar[float64](outs[m.metricAt[index]]) }
	failed := tensors.ToScalar[int32](outs[m.metricAt[-1]])
	step := m.Step()
	metrics = StepMetrics{
		Step:              step,
		GeneratorLoss:     value(MetricGeneratorLoss),
		PriorLoss:         value(MetricPriorLoss),
		PosteriorEnergy:   value(MetricPosteriorEnergy),
		PriorSampled:      m.cfg.Method == MethodCD,
		ReconstructionMSE: value(MetricReconstructionMSE),
		Finite:            failed == 0,
	}
	if metrics.PriorSampled {
		metrics.PriorEnergy = value(MetricPriorEnergy)
	}
	if failed != 0 {
		metrics.Step++ // the global step did not advance
		return metrics, fmt.Errorf("lebm: training step %d diverged: NaN or Inf in %s (generator loss %g, prior loss %g); the update was discarded",
			metrics.Step, describeChecks(failed), metrics.GeneratorLoss, metrics.PriorLoss)
	}
	return metrics, nil
}

// describeChecks names the checks of Checks set in mask, or says "none".
func describeChecks(mask int32) string {
	if mask == 0 {
		return "none"
	}
	var names []string
	for rest := uint32(mask); rest != 0; rest &= rest - 1 {
		if i := bits.TrailingZeros32(rest); i < len(Checks) {
			names = append(names, Checks[i])
		}
	}
	return strings.Join(names, ", ")
}
