package density

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/edlebm/edlebm/checkpoint"

	"github.com/edlebm/edlebm/internal/scopes"
	"github.com/edlebm/edlebm/internal/settings"
)

// Step is the number of training steps taken.
func (m *Model) Step() int64 { return optimizers.GetGlobalStep(m.ctx) }

// Save writes the whole training state — parameters, their averages, the
// optimizer's moments, the step and the random number generator state —
// into dir, atomically (see package checkpoint).
func (m *Model) Save(dir string) error {
	return checkpoint.Save(m.ctx, dir, m.Step())
}

// Restore loads the newest checkpoint in dir into a model fresh from New,
// so training continues exactly where the saved run stopped. A checkpoint
// of a model with other settings is refused, naming them.
func (m *Model) Restore(dir string) error {
	if m.Step() != 0 {
		return fmt.Errorf("density: restoring from %s: the model has already trained %d steps", dir, m.Step())
	}
	if err := checkpoint.Load(m.ctx, dir); err != nil {
		return fmt.Errorf("density: %w", err)
	}
	var saved Config
	if err := settings.Get(m.ctx, saved.params()); err != nil {
		return fmt.Errorf("density: the checkpoint in %s has no model settings (%w); it predates them or is not a density model's", dir, err)
	}
	if diff := m.cfg.Changes(saved); len(diff) > 0 {
		return fmt.Errorf("density: %s holds a model with other settings (this one has %s)", dir, strings.Join(diff, ", "))
	}
	// Checkpoints bring every variable back trainable; only the network's are.
	for v := range m.ctx.IterVariables() {
		v.SetTrainable(scopes.Within(v.Scope(), energyScope))
	}
	return nil
}

// Load creates a model from the newest checkpoint in dir, its settings
// read from the checkpoint (Restore needs them given): for using a trained
// model, or resuming it, without the flags it was trained with.
func Load(backend backends.Backend, dir string) (*Model, error) {
	cfg, err := SavedConfig(dir)
	if err != nil {
		return nil, err
	}
	m, err := New(backend, cfg, 1)
	if err != nil {
		return nil, fmt.Errorf("density: the checkpoint in %s: %w", dir, err)
	}
	if err := m.Restore(dir); err != nil {
		return nil, err
	}
	return m, nil
}

// SavedConfig reads the settings of the newest checkpoint in dir.
func SavedConfig(dir string) (Config, error) {
	saved := context.New()
	if err := checkpoint.Load(saved, dir); err != nil {
		return Config{}, fmt.Errorf("density: %w", err)
	}
	var cfg Config
	if err := settings.Get(saved, cfg.params()); err != nil {
		return Config{}, fmt.Errorf("density: the checkpoint in %s has no model settings (%w); it predates them or is not a density model's", dir, err)
	}
	return cfg, nil
}
