package lebm

import (
	"fmt"
	"reflect"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/checkpoint"
	"github.com/edlebm/edlebm/internal/scopes"
	"github.com/edlebm/edlebm/losses"
)

// Save writes a checkpoint of the whole model state — Config parameters,
// both models' variables, both optimizers' state, epoch, global step and the
// random number generator state — into dir, atomically (see package
// checkpoint), keeping the previous one too.
func (m *Model) Save(dir string) error { return m.SaveKeeping(dir, 2) }

// SaveKeeping is Save keeping the newest keep checkpoints in dir: snapshots
// (one per epoch, say) that are evaluated later with Checkpoints and
// LoadCheckpoint.
func (m *Model) SaveKeeping(dir string, keep int) (err error) {
	defer recoverError(&err, "saving to "+dir)
	step := m.Step()
	if err := checkpoint.SaveKeeping(m.ctx, dir, step, keep); err != nil {
		return fmt.Errorf("lebm: %w", err)
	}
	return nil
}

// Load creates a model from the newest checkpoint in dir, written by Save:
// its Config comes from the checkpoint, and training resumes where it
// stopped (optimizer moments, epoch, global step and random number
// generator state included).
func Load(backend backends.Backend, dir string, opts ...LoadOption) (*Model, error) {
	path, err := checkpoint.Latest(dir)
	if err != nil {
		return nil, fmt.Errorf("lebm: %w", err)
	}
	return LoadCheckpoint(backend, path, opts...)
}

// Checkpoints lists the complete checkpoints in dir, oldest first, for
// LoadCheckpoint.
func Checkpoints(dir string) ([]string, error) { return checkpoint.List(dir) }

// LoadCheckpoint is Load from one checkpoint folder (dir/step-N, as listed
// by Checkpoints).
func LoadCheckpoint(backend backends.Backend, path string, opts ...LoadOption) (m *Model, err error) {
	defer recoverError(&err, "loading from "+path)
	ctx := context.New()
	if err := checkpoint.LoadPath(ctx, path); err != nil {
		return nil, fmt.Errorf("lebm: %w", err)
	}
	if len(opts) > 0 {
		cfg, err := ConfigFromContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("lebm: checkpoint %s: %w", path, err)
		}
		for _, opt := range opts {
			opt(&cfg)
		}
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("lebm: checkpoint %s with the load options: %w", path, err)
		}
		cfg.SetParams(ctx)
	}
	if m, err = NewFromContext(backend, ctx); err != nil {
		return nil, fmt.Errorf("lebm: checkpoint %s: %w", path, err)
	}
	// Loaded variables come back trainable; only the two models' are.
	for v := range ctx.IterVariables() {
		v.SetTrainable(scopes.Within(v.Scope(), ctx.In(GeneratorScope).Scope()) || scopes.Within(v.Scope(), ctx.In(PriorScope).Scope()))
	}
	return m, nil
}

// Restore is RestorePath with the newest checkpoint in dir, the folder
// Save writes (as density's and discrete's models restore).
func (m *Model) Restore(dir string) error {
	path, err := checkpoint.Latest(dir)
	if err != nil {
		return fmt.Errorf("lebm: %w", err)
	}
	return m.RestorePath(path)
}

// RestorePath replaces every variable of the model that checkpoints hold —
// both networks, both optimizers' state, the epoch, the global step and
// the random state — with the values in the checkpoint at path
// (dir/step-N, as listed by Checkpoints), which must hold the same
// variables: a checkpoint of the same run, or of a run of the same
// architecture and prior update. Unlike LoadCheckpoint it keeps the
// model's compiled graphs (and its samplers' settings), so that
// evaluating many snapshots of a run compiles once.
func (m *Model) RestorePath(path string) (err error) {
	defer recoverError(&err, "restoring from "+path)
	saved := context.New()
	if err := checkpoint.LoadPath(saved, path); err != nil {
		return fmt.Errorf("lebm: %w", err)
	}
	cfg, err := ConfigFromContext(saved)
	if err != nil {
		return fmt.Errorf("lebm: checkpoint %s: %w", path, err)
	}
	if !reflect.DeepEqual(cfg.Generator, m.cfg.Generator) || !reflect.DeepEqual(cfg.Prior, m.cfg.Prior) || cfg.Method != m.cfg.Method {
		return fmt.Errorf("lebm: checkpoint %s is of another model (architecture or prior update %s) than this %s model", path, cfg.Method, m.cfg.Method)
	}
	count := 0
	for v := range saved.IterVariables() {
		mine := m.ctx.InspectVariable(v.Scope(), v.Name())
		if mine == nil || !mine.Shape().Equal(v.Shape()) {
			return fmt.Errorf("lebm: checkpoint %s: variable %s/%s (%s) does not match the model's", path, v.Scope(), v.Name(), v.Shape())
		}
		mine.MustSetValue(v.MustValue())
		count++
	}
	n := 0
	for v := range m.ctx.IterVariables() {
		if checkpoint.Holds(v) {
			n++
		}
	}
	if count != n {
		return fmt.Errorf("lebm: checkpoint %s holds %d variables, the model %d", path, count, n)
	}
	return nil
}

// LatestCheckpoint returns the folder of the newest complete checkpoint in
// dir, or an error (wrapping os.ErrNotExist when there is none).
func LatestCheckpoint(dir string) (string, error) { return checkpoint.Latest(dir) }

// LoadOption changes a loaded model's test-time samplers, which need no
// retraining: evaluations follow their own protocol whatever a run was
// trained with. The change is stored in the model's context, so a model
// saved after such a load keeps it.
type LoadOption func(*Config)

// WithTestPosterior sets the test-time posterior Langevin (reconstruction,
// posterior samples, anomaly scores) to steps steps of size stepSize; a
// zero argument keeps the checkpoint's value.
func WithTestPosterior(steps int, stepSize float64) LoadOption {
	return func(c *Config) { overrideLangevin(&c.TestPosteriorLangevin, steps, stepSize) }
}

// WithGeneration sets the prior Langevin of generation to steps steps of
// size stepSize; a zero argument keeps the checkpoint's value.
func WithGeneration(steps int, stepSize float64) LoadOption {
	return func(c *Config) { overrideLangevin(&c.GenerationLangevin, steps, stepSize) }
}

// WithGenerationSampler sets the kernel of the generation chains (one of
// Samplers); "" keeps the checkpoint's.
func WithGenerationSampler(sampler string) LoadOption {
	return func(c *Config) {
		if sampler != "" {
			c.GenerationSampler = sampler
		}
	}
}

// WithGenerationLeapfrogSteps sets the leapfrog steps of each HMC
// proposal of the generation chains; 0 keeps the checkpoint's.
func WithGenerationLeapfrogSteps(steps int) LoadOption {
	return func(c *Config) {
		if steps != 0 {
			c.GenerationLeapfrogSteps = steps
		}
	}
}

// WithDataNamed names the data set of a checkpoint written before
// checkpoints kept it (Config.Data empty); one that names its data set
// keeps it. The model then saves the name with its next checkpoint.
func WithDataNamed(name string) LoadOption {
	return func(c *Config) {
		if c.Data == "" {
			c.Data = name
		}
	}
}

func overrideLangevin(l *losses.LangevinConfig, steps int, stepSize float64) {
	if steps != 0 {
		l.Steps = steps
	}
	if stepSize != 0 {
		l.StepSize = stepSize
	}
}
