package losses

import (
	"math"
	"strings"
	"testing"
)

func TestConfigValidationNamesTheBadValue(t *testing.T) {
	cases := []struct {
		name    string
		cfg     validator
		mention string // must appear in the error; "" means valid
	}{
		{"paper toy ED", DefaultToyED, ""},
		{"paper latent ED", DefaultLatentED, ""},
		{"ED without stabiliser", EDConfig{T: 1, M: 1, W: 0}, ""},
		{"ED t = 0", EDConfig{T: 0, M: 4, W: 1}, "t (perturbation variance) = 0"},
		{"ED t < 0", EDConfig{T: -0.5, M: 4, W: 1}, "= -0.5"},
		{"ED t NaN", EDConfig{T: math.NaN(), M: 4, W: 1}, "NaN"},
		{"ED t = +Inf", EDConfig{T: math.Inf(1), M: 4, W: 1}, "t (perturbation variance) = +Inf"},
		{"ED M = 0", EDConfig{T: 1, M: 0, W: 1}, "M = 0"},
		{"ED w < 0", EDConfig{T: 1, M: 4, W: -1}, "w = -1"},
		{"ED w = +Inf", EDConfig{T: 1, M: 4, W: math.Inf(1)}, "w = +Inf"},
		{"Bernoulli ε = 0", BernoulliEDConfig{Epsilon: 0, M: 4, W: 1}, "ε = 0"},
		{"Bernoulli ε = 1", BernoulliEDConfig{Epsilon: 1, M: 4, W: 1}, "ε = 1"},
		{"Bernoulli M < 1", BernoulliEDConfig{Epsilon: 0.1, M: -2, W: 1}, "M = -2"},
		{"Langevin step 0", LangevinConfig{StepSize: 0, Steps: 10}, "step size = 0"},
		{"Langevin steps < 0", LangevinConfig{StepSize: 0.1, Steps: -1}, "steps = -1"},
		{"Langevin without steps (samples are the start)", LangevinConfig{StepSize: 0.1, Steps: 0}, ""},
		{"paper toy CD", DefaultToyCD, ""},
		{"CD α < 0", CDConfig{Langevin: LangevinConfig{StepSize: 0.1, Steps: 1}, Reg: -0.3}, "α = -0.3"},
		{"CD bad chain", CDConfig{Langevin: LangevinConfig{StepSize: -1, Steps: 1}}, "step size = -1"},
		{"sliced SM no projections", SlicedSMConfig{Projections: 0}, "projections = 0"},
		{"sliced SM one projection (the default)", SlicedSMConfig{Projections: 1}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			switch {
			case c.mention == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case c.mention != "" && err == nil:
				t.Errorf("Validate() = nil, want an error mentioning %q", c.mention)
			case c.mention != "" && !strings.Contains(err.Error(), c.mention):
				t.Errorf("Validate() = %q, want it to mention %q", err, c.mention)
			}
		})
	}
}
