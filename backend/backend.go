// Package backend picks and opens the GoMLX backend a program runs on: XLA
// with a CUDA PJRT plugin when one is installed (or named), else SimpleGo,
// the pure-Go CPU backend. It never downloads a plugin.
package backend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // SimpleGo, always available.
	"github.com/gomlx/gomlx/backends/xla"
)

// SimpleGo is the configuration used for SimpleGo. Its default mode runs
// independent ops in parallel on a bounded worker pool whose ops (DotGeneral)
// wait on the same pool for workers of their own; on a 2-core machine that
// deadlocks (seen in GoMLX v0.26.0 with score-matching graphs). Sequential op
// execution keeps each op's internal parallelism and avoids the deadlock.
const SimpleGo = "go:ops_sequential"

// CUDAPluginName is the file name go-xla's installer gives the CUDA plugin.
const CUDAPluginName = "pjrt_c_api_cuda_plugin.so"

// Choice is a resolved backend configuration and why it was chosen.
type Choice struct {
	// Config is the GoMLX backend configuration, e.g. "go" or "xla:/path/plugin.so".
	Config string
	// Reason says in words why this backend was chosen.
	Reason string
	// EmulateTF32 asks Open to wrap the backend in EmulateTF32.
	EmulateTF32 bool
}

// TF32Products reports whether the chosen backend computes float32 matrix
// products from TF32-rounded inputs: go-tf32, and XLA on a CUDA plugin,
// where TF32 is XLA's default precision on NVIDIA GPUs since Ampere (older
// GPUs compute in full float32: the answer is then conservative).
func (c Choice) TF32Products() bool {
	return c.EmulateTF32 || (strings.HasPrefix(c.Config, "xla:") && strings.Contains(strings.ToLower(c.Config), "cuda"))
}

// FlagUsage is the usage line of the commands' -backend flag.
const FlagUsage = "GoMLX backend: auto, go, go-tf32 (SimpleGo with TF32 matrix products emulated), cuda[,tf32] or xla:PLUGIN[,OPTIONS]"

// Resolve turns a user's request into a backend configuration:
//
//   - "" or "auto": $GOMLX_BACKEND if set, else XLA with the first CUDA PJRT
//     plugin found (see CUDAPluginCandidates), else SimpleGo;
//   - "go" (or "cpu", "simplego"): SimpleGo;
//   - "go-tf32" (or "cpu-tf32"): SimpleGo with the GPU's TF32 matrix
//     products emulated (see EmulateTF32);
//   - "cuda" (or "gpu"): XLA with the first CUDA plugin found, or an error;
//   - "xla:NAME" or "xla:/absolute/path.so": passed to GoMLX as given.
//
// XLA requests may end in GoMLX's plugin options after commas: "cuda,tf32"
// asks for TF32 float32 dot products explicitly.
func Resolve(request string) (Choice, error) {
	name, options, _ := strings.Cut(request, ",")
	if options != "" {
		options = "," + options
	}
	xlaOnly := func(what string) error {
		if options == "" {
			return nil
		}
		return fmt.Errorf("backend %q: options %q apply to XLA backends only, not to %s", request, options[1:], what)
	}
	switch strings.ToLower(name) {
	case "", "auto":
		if env := os.Getenv(backends.ConfigEnvVar); env != "" && options == "" {
			return Choice{Config: env, Reason: "from $" + backends.ConfigEnvVar}, nil
		}
		if path, ok := FindCUDAPlugin(); ok {
			return Choice{Config: "xla:" + path + options, Reason: "CUDA PJRT plugin found at " + path}, nil
		}
		if err := xlaOnly("SimpleGo, the fallback when no CUDA PJRT plugin is found"); err != nil {
			return Choice{}, err
		}
		return Choice{Config: SimpleGo, Reason: fmt.Sprintf("no CUDA PJRT plugin found (looked for %s in %s); using SimpleGo, the pure-Go CPU backend",
			CUDAPluginName, strings.Join(searchDirs(), ", "))}, nil
	case "go", "cpu", "simplego":
		return Choice{Config: SimpleGo, Reason: "SimpleGo requested"}, xlaOnly("SimpleGo")
	case "go-tf32", "cpu-tf32":
		return Choice{Config: SimpleGo, Reason: "SimpleGo with float32 matrix-product inputs rounded to TF32 requested", EmulateTF32: true}, xlaOnly("SimpleGo")
	case "cuda", "gpu":
		if path, ok := FindCUDAPlugin(); ok {
			return Choice{Config: "xla:" + path + options, Reason: "CUDA PJRT plugin found at " + path}, nil
		}
		return Choice{}, fmt.Errorf("backend %q: no CUDA PJRT plugin found (looked for %s in %s); install go-xla's CUDA plugin, or name one with -backend=xla:/path/to/plugin.so",
			request, CUDAPluginName, strings.Join(searchDirs(), ", "))
	}
	if path, ok := strings.CutPrefix(name, "xla:"); ok && filepath.IsAbs(path) {
		if _, err := os.Stat(path); err != nil {
			return Choice{}, fmt.Errorf("backend %q: PJRT plugin file not found: %w", request, err)
		}
	}
	return Choice{Config: request, Reason: "requested"}, nil
}

// Open resolves request (see Resolve) and creates the backend. Automatic
// plugin downloads are disabled: a missing plugin is an error, not a fetch.
func Open(request string) (backends.Backend, Choice, error) {
	choice, err := Resolve(request)
	if err != nil {
		return nil, choice, err
	}
	xla.EnableAutoInstall(false)
	b, err := backends.NewWithConfig(choice.Config)
	if err != nil {
		return nil, choice, fmt.Errorf("opening backend %q (%s): %w", choice.Config, choice.Reason, err)
	}
	if choice.EmulateTF32 {
		b = EmulateTF32(b)
	}
	return b, choice, nil
}

// FindCUDAPlugin returns the first CUDA PJRT plugin file that exists among
// CUDAPluginCandidates.
func FindCUDAPlugin() (string, bool) {
	for _, path := range CUDAPluginCandidates() {
		if info, err := os.Stat(path); err == nil && !info.IsDir() {
			return path, true
		}
	}
	return "", false
}

// CUDAPluginCandidates lists where a CUDA PJRT plugin is looked for, in
// order: go-xla's install directories ($PJRT_PLUGIN_LIBRARY_PATH,
// ~/.local/lib/go-xla, /usr/local/lib/go-xla and their nvidia/ folders),
// then the plugin that JAX's jax-cuda12/13-pjrt Python packages ship.
func CUDAPluginCandidates() []string {
	var paths []string
	for _, dir := range searchDirs() {
		paths = append(paths, filepath.Join(dir, CUDAPluginName))
	}
	for _, pattern := range []string{
		"/usr/lib/python3/dist-packages/jax_plugins/xla_cuda1*/xla_cuda_plugin.so",
		"/usr/local/lib/python3*/dist-packages/jax_plugins/xla_cuda1*/xla_cuda_plugin.so",
		"/usr/local/lib/python3*/site-packages/jax_plugins/xla_cuda1*/xla_cuda_plugin.so",
	} {
		matches, _ := filepath.Glob(pattern)
		paths = append(paths, matches...)
	}
	return paths
}

// searchDirs are go-xla's plugin directories.
func searchDirs() []string {
	var dirs []string
	for _, dir := range filepath.SplitList(os.Getenv("PJRT_PLUGIN_LIBRARY_PATH")) {
		if dir != "" {
			dirs = append(dirs, dir)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		local := filepath.Join(home, ".local", "lib", "go-xla")
		dirs = append(dirs, local, filepath.Join(local, "nvidia"))
	}
	return append(dirs, "/usr/local/lib/go-xla", "/usr/local/lib/go-xla/nvidia")
}

// OpenForCommand is Open for the commands: the error names the -backend
// flag, and the backend chosen and why are printed to stdout.
func OpenForCommand(request string) (backends.Backend, error) {
	b, choice, err := Open(request)
	if err != nil {
		return nil, fmt.Errorf("flag -backend: %w", err)
	}
	fmt.Printf("backend: %s (%s)\n", b.Name(), choice.Reason)
	return b, nil
}
