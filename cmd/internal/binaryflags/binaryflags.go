// Package binaryflags turns the flags shared by the commands that train
// energy models of binary data (train-graycode, train-binary) into the
// models' configurations, so that both read -methods, -hidden, -lr, -ema
// and -set alike.
package binaryflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/settings"
	"github.com/edlebm/edlebm/nets"
)

// Flags are the values of the shared flags.
type Flags struct {
	// Methods is -methods: comma-separated density.BinaryMethods.
	Methods string
	// Hidden is -hidden: the energy MLP's hidden widths (swish).
	Hidden string
	// LearningRate and EMADecay are -lr and -ema.
	LearningRate, EMADecay float64
	// Set is -set: GoMLX context settings applied last.
	Set string
}

// Configs returns one configuration per method: density.DefaultConfig,
// then the command's own defaults (edit, may be nil), then the flags, then
// -set's settings, validated; errors name the flag at fault.
func (f Flags) Configs(edit func(*density.Config)) ([]density.Config, error) {
	hidden, err := settings.ParsePositiveInts(f.Hidden)
	if err != nil {
		return nil, fmt.Errorf("flag -hidden %s: %w", f.Hidden, err)
	}
	var out []density.Config
	for _, method := range strings.Split(f.Methods, ",") {
		method = strings.TrimSpace(method)
		if !slices.Contains(density.BinaryMethods, method) {
			return nil, fmt.Errorf("flag -methods: %q: want one of %v", method, density.BinaryMethods)
		}
		cfg := density.DefaultConfig(method)
		if edit != nil {
			edit(&cfg)
		}
		cfg.MLP = nets.MLPConfig{Hidden: hidden, Activation: nets.ActSwish}
		cfg.LearningRate, cfg.EMADecay = f.LearningRate, f.EMADecay
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("flags: %w", err)
		}
		if cfg, err = cfg.WithSettings(f.Set); err != nil {
			return nil, fmt.Errorf("flag -set: %w", err)
		}
		if cfg.Method != method {
			return nil, fmt.Errorf("flag -set: %smethod=%s: choose methods with -methods", density.ParamPrefix, cfg.Method)
		}
		out = append(out, cfg)
	}
	return out, nil
}
