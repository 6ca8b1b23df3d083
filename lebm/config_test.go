package lebm

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/internal/settings"
	"github.com/edlebm/edlebm/losses"
	"github.com/edlebm/edlebm/nets"
)

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dataset        string
		nz             int
		h, w, c        int
		posteriorSteps int
	}{
		{"svhn", 100, 32, 32, 3, 20},
		{"cifar10", 128, 32, 32, 3, 40},
		{"celeba64", 100, 64, 64, 3, 20},
		{"celeba128", 100, 128, 128, 3, 20},
		{"mnist", 16, 28, 28, 1, 20},
		{"fashion-mnist", 16, 28, 28, 1, 20},
	} {
		t.Run(tc.dataset, func(t *testing.T) {
			cfg, err := DefaultConfig(tc.dataset)
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if h, w, c := cfg.Generator.OutputShape(); cfg.Generator.Nz != tc.nz || h != tc.h || w != tc.w || c != tc.c {
				t.Errorf("generator nz %d, images %d×%d×%d; want nz %d, %d×%d×%d", cfg.Generator.Nz, h, w, c, tc.nz, tc.h, tc.w, tc.c)
			}
			// The paper's settings: appendix "Experimental Details of LEBMs",
			// paragraph "Details of Training and Inference" (posterior chain
			// 0.1 × 20, 40 on CIFAR-10; test posterior 0.1 × 100; generation
			// 0.2 × 500; t = 0.25, M = 16, w = 1; Adam 1e-4 and 5e-5). σ = 0.3,
			// σ₀ = 1, the prior chain 0.4 × 60 and β₁ = 0.5 are CD-LEBM's (Pang
			// et al. 2020), whose set-up the paper adopts (same appendix, "Model
			// Architectures"; the prior MLP nz→200→200→1 is its table of LEBM
			// architectures, LeakyReLU 0.1 its text).
			want := Config{
				Data: tc.dataset, AnomalyHoldout: -1,
				Generator: cfg.Generator, Prior: cfg.Prior,
				Sigma: 0.3, PriorSigma: 1,
				PosteriorLangevin:       losses.LangevinConfig{StepSize: 0.1, Steps: tc.posteriorSteps},
				TestPosteriorLangevin:   losses.LangevinConfig{StepSize: 0.1, Steps: 100},
				PriorLangevin:           losses.LangevinConfig{StepSize: 0.4, Steps: 60},
				GenerationLangevin:      losses.LangevinConfig{StepSize: 0.2, Steps: 500},
				GenerationSampler:       SamplerLangevin, // the paper's unadjusted Langevin
				GenerationLeapfrogSteps: 5,               // for HMC, which the paper does not use
				Method:                  MethodED,
				ED:                      losses.EDConfig{T: 0.25, M: 16, W: 1},
				SMVariant:               SMFisher, SMProjections: 1,
				GeneratorLR: 1e-4, PriorLR: 5e-5, Beta1: 0.5, Beta2: 0.999, AdamEpsilon: 1e-8,
				LRDecay: 1, DType: "float32",
			}
			if !reflect.DeepEqual(cfg, want) {
				t.Errorf("DefaultConfig(%q) = %+v, want %+v", tc.dataset, cfg, want)
			}
			if !reflect.DeepEqual(cfg.Prior.Hidden, []int{200, 200}) || cfg.Prior.LeakySlope != 0.1 {
				t.Errorf("prior MLP %+v, want nz→200→200→1 with LeakyReLU 0.1", cfg.Prior)
			}
		})
	}
	if _, err := DefaultConfig("imagenet"); err == nil || !strings.Contains(err.Error(), `"imagenet"`) {
		t.Errorf("DefaultConfig(\"imagenet\") error %v, want one naming the data set", err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"generator", func(c *Config) { c.Generator.Nz = 0 }, "nz = 0"},
		{"prior", func(c *Config) { c.Prior.Activation = "relu6" }, `"relu6"`},
		{"sigma", func(c *Config) { c.Sigma = 0 }, "Sigma (likelihood σ) = 0"},
		{"prior sigma", func(c *Config) { c.PriorSigma = -2 }, "PriorSigma (prior base σ0) = -2"},
		{"generator lr", func(c *Config) { c.GeneratorLR = 0 }, "GeneratorLR = 0"},
		{"prior lr", func(c *Config) { c.PriorLR = -1e-3 }, "PriorLR = -0.001"},
		{"adam epsilon", func(c *Config) { c.AdamEpsilon = 0 }, "AdamEpsilon = 0"},
		{"beta1", func(c *Config) { c.Beta1 = 1 }, "Beta1 = 1"},
		{"beta2", func(c *Config) { c.Beta2 = -0.1 }, "Beta2 = -0.1"},
		{"lr decay", func(c *Config) { c.LRDecay = 1.5 }, "LRDecay = 1.5"},
		{"lr decay zero", func(c *Config) { c.LRDecay = 0 }, "LRDecay = 0"},
		{"posterior langevin", func(c *Config) { c.PosteriorLangevin.StepSize = 0 }, "PosteriorLangevin: Langevin step size = 0"},
		{"test posterior langevin", func(c *Config) { c.TestPosteriorLangevin.Steps = -1 }, "TestPosteriorLangevin: Langevin steps = -1"},
		{"prior langevin", func(c *Config) { c.PriorLangevin.StepSize = -1 }, "PriorLangevin"},
		{"generation langevin", func(c *Config) { c.GenerationLangevin.Steps = -3 }, "GenerationLangevin"},
		{"method", func(c *Config) { c.Method = "nce" }, `Method = "nce"`},
		{"ed", func(c *Config) { c.ED.M = 0 }, "ED: energy discrepancy M = 0"},
		{"sm variant", func(c *Config) { c.SMVariant = "denoising" }, `SMVariant = "denoising"`},
		{"sm projections", func(c *Config) { c.SMProjections = 0 }, "SMProjections = 0"},
		{"dtype", func(c *Config) { c.DType = "bfloat16" }, `DType = "bfloat16"`},
		{"compute dtype", func(c *Config) { c.DType, c.ComputeDType = "float32", "float16" }, `ComputeDType = "float16"`},
		{"bfloat16 layers of a float64 model", func(c *Config) { c.ComputeDType = "bfloat16" }, `ComputeDType = "bfloat16" with DType "float64"`},
		{"transposed-convolution form", func(c *Config) { c.ConvTImpl = "fft" }, `ConvTImpl = "fft"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig(t)
			tc.change(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestConfigValidateAcceptsBoundaries checks that the closed ends of the
// documented ranges are valid: Adam's β in [0, 1) and LRDecay in (0, 1].
func TestConfigValidateAcceptsBoundaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*Config)
	}{
		{"beta1 = 0", func(c *Config) { c.Beta1 = 0 }},
		{"beta2 = 0", func(c *Config) { c.Beta2 = 0 }},
		{"lr decay = 1", func(c *Config) { c.LRDecay = 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig(t)
			tc.change(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

func TestConfigParams(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	cfg.ED.DropLogM, cfg.PriorLangevin.NoNoise = true, true
	for _, tc := range []struct {
		name     string
		settings string // GoMLX command-line settings applied after SetParams
		change   func(*Config)
		wantErr  string
	}{
		{"round trip", "", func(*Config) {}, ""},
		{"command line", "lebm_method=cd;lebm_posterior_steps=7;lebm_prior_lr=0.001;lebm_generator_layers=8,4,1,0,3,4,2,1",
			func(c *Config) {
				c.Method, c.PosteriorLangevin.Steps, c.PriorLR = MethodCD, 7, 1e-3
				c.Generator.Layers[1].Out = 3
			}, ""},
		{"invalid value", "lebm_sigma=-1", nil, "Sigma (likelihood σ) = -1"},
		{"compute dtype", "lebm_dtype=float32;lebm_compute_dtype=bfloat16", func(c *Config) { c.DType, c.ComputeDType = "float32", "bfloat16" }, ""},
		{"ragged layers", "lebm_generator_layers=8,4,1", nil, "want 4 (out, kernel, stride, padding) per layer"},
		{"transposed-convolution form", "convt_impl=phase", func(c *Config) { c.ConvTImpl = "phase" }, ""},
		{"unknown transposed-convolution form", "convt_impl=fft", nil, `ConvTImpl = "fft"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cfg.WithSettings(tc.settings)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ConfigFromContext error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := cfg
			want.Generator.Layers = append(want.Generator.Layers[:0:0], cfg.Generator.Layers...)
			tc.change(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ConfigFromContext = %+v, want %+v", got, want)
			}
		})
	}

	t.Run("older context without the optional settings", func(t *testing.T) {
		// Checkpoints from before these settings existed: no compute dtype
		// (float32 throughout), no data set (unknown), no held-out class
		// (none), Xavier-initialised priors.
		optional := map[string]bool{"lebm_compute_dtype": true, "lebm_data": true, "lebm_anomaly_holdout": true, "lebm_prior_init": true, nets.ParamConvTImpl: true}
		withAll := cfg
		withAll.Data, withAll.AnomalyHoldout, withAll.Prior.Init, withAll.ConvTImpl = "svhn", 3, nets.InitPyTorch, "phase"
		full := context.New()
		withAll.SetParams(full)
		old := context.New()
		for _, p := range withAll.params() {
			if !optional[p.Key] {
				v, _ := full.GetParam(p.Key)
				old.SetParam(p.Key, v)
			}
		}
		got, err := ConfigFromContext(old)
		want := withAll
		want.ComputeDType, want.Data, want.AnomalyHoldout, want.Prior.Init, want.ConvTImpl = "", "", -1, nets.InitXavier, ""
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ConfigFromContext without the optional parameters = %+v, %v; want %+v", got, err, want)
		}
		for key := range optional {
			if found := slices.ContainsFunc(withAll.params(), func(p settings.Param) bool { return p.Key == key && p.Optional }); !found {
				t.Errorf("%s is not an optional parameter", key)
			}
		}
	})

	t.Run("missing and mistyped", func(t *testing.T) {
		ctx := context.New()
		if _, err := ConfigFromContext(ctx); err == nil || !strings.Contains(err.Error(), `"lebm_generator_nz" is not set`) {
			t.Errorf("ConfigFromContext of an empty context: %v, want a missing-parameter error", err)
		}
		cfg.SetParams(ctx)
		ctx.SetParam("lebm_ed_m", 16.0)
		if _, err := ConfigFromContext(ctx); err == nil || !strings.Contains(err.Error(), `"lebm_ed_m" = 16 has type float64; want int`) {
			t.Errorf("ConfigFromContext with a float64 M: %v, want a type error", err)
		}
		// A null (JSON null) setting whose zero value would be valid: only
		// list settings may be null.
		cfg.SetParams(ctx)
		ctx.SetParam("lebm_seed", nil)
		if _, err := ConfigFromContext(ctx); err == nil || !strings.Contains(err.Error(), `"lebm_seed" = <nil>`) {
			t.Errorf("ConfigFromContext with a nil seed: %v, want a type error naming lebm_seed", err)
		}
	})

	t.Run("no generator layers", func(t *testing.T) {
		noLayers := cfg
		noLayers.Generator.Layers = nil
		ctx := context.New()
		noLayers.SetParams(ctx)
		if _, err := ConfigFromContext(ctx); err == nil || !strings.Contains(err.Error(), "generator has no layers") {
			t.Errorf("ConfigFromContext of a config without generator layers: %v, want the generator's validation error", err)
		}
	})
}

// The presets against the paper's and Pang et al.'s settings: "paper" is
// DefaultConfig (the paper's appendix "Experimental Details of LEBMs",
// checked in TestDefaultConfig); "pang-cd" differs from it in the CD
// update, prior learning rate 2e-5 and decay 0.998 per epoch only, Pang et
// al. (2020)'s settings for the CD-LEBM the paper compares with (its
// appendix, training details; batch 100).
func TestPresetConfig(t *testing.T) {
	t.Parallel()
	paper, err := DefaultConfig("svhn")
	if err != nil {
		t.Fatal(err)
	}
	got, err := PresetConfig("svhn", PresetPaper)
	if err != nil || !reflect.DeepEqual(got, paper) {
		t.Errorf("preset paper: %+v (%v), want DefaultConfig %+v", got, err, paper)
	}
	want := paper
	want.Method, want.PriorLR, want.LRDecay = MethodCD, 2e-5, 0.998
	got, err = PresetConfig("svhn", PresetPangCD)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("preset pang-cd: %+v (%v), want %+v", got, err, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("preset pang-cd invalid: %v", err)
	}
	if PangCDBatch != 100 {
		t.Errorf("PangCDBatch = %d, want Pang et al.'s 100", PangCDBatch)
	}
	if _, err := PresetConfig("svhn", "pang"); err == nil || !strings.Contains(err.Error(), `preset "pang"`) {
		t.Errorf("unknown preset: %v, want an error naming it", err)
	}
}

// Changes lists exactly the settings that differ, by their context names;
// SettingNames lists every setting WithSettings takes, each of which
// round-trips through it.
func TestConfigChangesAndSettingNames(t *testing.T) {
	t.Parallel()
	paper, err := DefaultConfig("svhn")
	if err != nil {
		t.Fatal(err)
	}
	run := paper
	run.ED.T, run.PriorLR, run.Prior.Hidden = 0.5, 1e-4, []int{200, 100}
	want := []string{"lebm_ed_t=0.5", "lebm_prior_hidden=[200 100]", "lebm_prior_lr=0.0001"}
	if got := run.Changes(paper); !slices.Equal(got, want) {
		t.Errorf("Changes = %q, want %q", got, want)
	}
	if got := paper.Changes(paper); len(got) != 0 {
		t.Errorf("Changes of the paper's settings from themselves = %q", got)
	}
	names := SettingNames()
	if len(names) != len(paper.params()) {
		t.Errorf("SettingNames has %d names, want the %d parameters", len(names), len(paper.params()))
	}
	for _, n := range []string{"lebm_ed_t", "lebm_generator_layers", "lebm_prior_init", "lebm_data"} {
		if !slices.Contains(names, n) {
			t.Errorf("SettingNames lacks %s", n)
		}
	}
	if _, err := paper.WithSettings("lebm_nonsense=1"); err == nil || !strings.Contains(err.Error(), "lebm_nonsense") {
		t.Errorf("an unknown setting: %v, want an error naming it", err)
	}
}

// TestConvTImplReachesTheGenerator checks that the ConvTImpl setting,
// stored in a model's context as New stores it, is the form the generator's
// layers take: the gather form multiplies gathered patches (no
// convolution), the native form convolves (and flips its kernel, with a
// gather on SimpleGo).
func TestConvTImplReachesTheGenerator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		impl             string
		gather, convolve bool
	}{
		{string(nets.ConvTGather), true, false},
		{string(nets.ConvTNative), false, true},
	} {
		cfg, err := tinyConfig(t).WithSettings(nets.ParamConvTImpl + "=" + tc.impl)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.New()
		cfg.SetParams(ctx)
		g := NewGraph(testBackend(), tc.impl)
		Decode(ctx, cfg, Parameter(g, "z", shapes.Make(cfg.dtype(), 2, cfg.Generator.Nz)))
		count := map[NodeType]int{}
		for _, n := range g.Nodes() {
			count[n.Type()]++
		}
		g.Finalize()
		if (tc.gather && count[NodeTypeGather] == 0) || (count[NodeTypeConvGeneral] > 0) != tc.convolve {
			t.Errorf("%s=%s: the generator has %d gathers and %d convolutions; want gathers: %v, convolutions: %v",
				nets.ParamConvTImpl, tc.impl, count[NodeTypeGather], count[NodeTypeConvGeneral], tc.gather, tc.convolve)
		}
	}
}

// TestImageGenerator checks that the generator for each image shape makes
// images of that shape (following the layers' sizes, not the preset's
// name), and that other shapes are refused.
func TestImageGenerator(t *testing.T) {
	t.Parallel()
	for size := range ImageGenerators {
		for _, channels := range []int{1, 3} {
			gen, err := ImageGenerator(size, channels)
			if err != nil {
				t.Fatal(err)
			}
			if h, w, c := gen.OutputShape(); h != size || w != size || c != channels {
				t.Errorf("ImageGenerator(%d, %d) makes %d×%d×%d images", size, channels, h, w, c)
			}
		}
	}
	for _, tc := range []struct{ size, channels int }{{48, 3}, {32, 2}} {
		if _, err := ImageGenerator(tc.size, tc.channels); err == nil {
			t.Errorf("ImageGenerator(%d, %d) succeeded", tc.size, tc.channels)
		}
	}
	cfg, err := DefaultConfig(FolderData)
	if h, _, c := cfg.Generator.OutputShape(); err != nil || h != 32 || c != 3 {
		t.Errorf("DefaultConfig(%q): %d×%d images, error %v; want 32×32×3", FolderData, h, c, err)
	}
}
