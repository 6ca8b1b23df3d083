// Package backend picks and opens the GoMLX backend a program runs on: XLA
// with a CUDA PJRT plugin when one is installed (or named), else XLA with
// the XLA CPU PJRT plugin when that is installed (cmd/install-pjrt -cpu),
// else SimpleGo, the pure-Go CPU backend. It never downloads a plugin.
package backend

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/gomlx/go-xla/pkg/pjrt"
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

// JAXCUDAPlugin is where JAX's jax-cuda12-pjrt and jax-cuda13-pjrt Python
// packages put the CUDA PJRT plugin, relative to a site-packages folder.
const JAXCUDAPlugin = "jax_plugins/xla_cuda1*/xla_cuda_plugin.so"

// CPUPluginName is the file name cmd/install-pjrt gives the XLA CPU plugin
// (go-xla's naming: "xla:cpu" finds it).
const CPUPluginName = "pjrt_c_api_cpu_plugin.so"

// InstallCPUCommand installs the XLA CPU plugin where FindCPUPlugin looks.
const InstallCPUCommand = "go run ./cmd/install-pjrt -cpu"

// cpuPluginNames are the names go-xla accepts for the CPU plugin, in the
// order they are looked for.
var cpuPluginNames = []string{CPUPluginName, "pjrt_plugin_cpu.so", "pjrt-plugin-cpu.so"}

// systemRoot prefixes the system-wide folders searched (/usr/local/lib/go-xla,
// /opt, /usr/...): "/" except in tests, which search a temporary tree.
var systemRoot = "/"

// Choice is a resolved backend configuration and why it was chosen.
type Choice struct {
	// Config is the GoMLX backend configuration, e.g. "go" or "xla:/path/plugin.so".
	Config string
	// Reason says in words why this backend was chosen.
	Reason string
	// EmulateTF32 asks Open to wrap the backend in EmulateTF32.
	EmulateTF32 bool
	// CPUDevices is the number of devices Open asks the XLA CPU plugin for
	// (0 for other backends). The plugin runs one compute thread per device,
	// so it defaults to the cores this process may use (runtime.NumCPU):
	// the plugin's own default, 4 devices, oversubscribes smaller machines
	// and cores pinned with taskset (docs/xla.md). The option "devices=N"
	// after "cpu" sets it.
	CPUDevices int
}

// TF32Products reports whether the chosen backend computes float32 matrix
// products from TF32-rounded inputs: go-tf32, and XLA on a CUDA plugin
// (one whose name or file name says cuda), where TF32 is XLA's default
// precision on NVIDIA GPUs since Ampere (older GPUs compute in full
// float32: the answer is then conservative). XLA CPU computes in float32.
func (c Choice) TF32Products() bool { return c.EmulateTF32 || c.CUDA() }

// CUDA reports whether the chosen backend is XLA on a CUDA plugin (one
// whose name or file name says cuda): an NVIDIA GPU.
func (c Choice) CUDA() bool { return xlaPluginNameHas(c.Config, "cuda") }

// xlaPluginNameHas reports whether config is XLA on a plugin whose name or
// file name contains word.
func xlaPluginNameHas(config, word string) bool {
	plugin, ok := strings.CutPrefix(config, "xla:")
	if !ok {
		return false
	}
	plugin, _, _ = strings.Cut(plugin, ",")
	return strings.Contains(strings.ToLower(filepath.Base(plugin)), word)
}

// CPUDevicesFor is the number of devices to ask the XLA CPU plugin for to
// train data-parallel over n of them (n > 1): twice n. The plugin runs one
// compute thread per device, shared by all of them, and a cross-device
// sum (all-reduce) holds one thread per device while it waits for the
// others: with as many threads as devices in the sum, the last device's
// remaining work can find no thread, and XLA aborts the stuck all-reduce
// ("AwaitAndLogIfStuck", then a check failure; the runs that showed it are
// in docs/parallel.md). For n ≤ 1 it returns 0: no need.
func CPUDevicesFor(n int) int {
	if n <= 1 {
		return 0
	}
	return 2 * n
}

// devicesOption is the backend option that sets Choice.CPUDevices.
const devicesOption = "devices="

// withCPUDevices sets c.CPUDevices for an XLA CPU choice: from a
// "devices=N" option in c.Config, which it removes (GoMLX does not know
// it), else runtime.NumCPU(). Other choices must not carry the option.
func withCPUDevices(c Choice, request string) (Choice, error) {
	head, rest, _ := strings.Cut(c.Config, ",")
	var kept []string
	devices := 0
	for _, option := range strings.Split(rest, ",") {
		value, ok := strings.CutPrefix(option, devicesOption)
		if !ok {
			if option != "" {
				kept = append(kept, option)
			}
			continue
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return Choice{}, fmt.Errorf("backend %q: option %q: want %sN with N a whole number ≥ 1", request, option, devicesOption)
		}
		devices = n
	}
	if !xlaPluginNameHas(head, "cpu") {
		if devices > 0 {
			return Choice{}, fmt.Errorf("backend %q: option %s%d applies to the XLA CPU plugin only", request, devicesOption, devices)
		}
		return c, nil
	}
	c.Config = strings.Join(append([]string{head}, kept...), ",")
	if devices == 0 {
		devices = runtime.NumCPU()
	}
	c.CPUDevices = devices
	c.Reason += fmt.Sprintf("; %d CPU device(s), one XLA compute thread each", devices)
	return c, nil
}

// FlagUsage is the usage line of the commands' -backend flag.
const FlagUsage = "GoMLX backend: auto (XLA on a CUDA plugin, else XLA CPU, else SimpleGo), cuda[,tf32], cpu (XLA CPU; install: " +
	InstallCPUCommand + "), go (SimpleGo), go-tf32 (SimpleGo with TF32 matrix products emulated) or xla:PLUGIN[,OPTIONS]"

// Resolve turns a user's request into a backend configuration:
//
//   - "" or "auto": $GOMLX_BACKEND if set, else XLA with the first CUDA PJRT
//     plugin found (see CUDAPluginCandidates), else XLA with the XLA CPU
//     plugin if installed (see CPUPluginCandidates), else SimpleGo;
//   - "cuda" (or "gpu"): XLA with the first CUDA plugin found, or an error;
//   - "cpu" (or "xla:cpu"): XLA with the XLA CPU plugin, or an error that
//     says how to install it;
//   - "go" (or "simplego"): SimpleGo;
//   - "go-tf32" (or "cpu-tf32"): SimpleGo with the GPU's TF32 matrix
//     products emulated (see EmulateTF32);
//   - "xla:NAME" or "xla:/absolute/path.so": passed to GoMLX as given.
//
// Plugins found are named by absolute path, so the configuration printed is
// the file loaded. XLA requests may end in GoMLX's plugin options after
// commas: "cuda,tf32" asks for TF32 float32 dot products explicitly. On
// the XLA CPU plugin, "devices=N" sets Choice.CPUDevices ("cpu,devices=4").
func Resolve(request string) (Choice, error) {
	choice, err := resolve(request)
	if err != nil {
		return choice, err
	}
	return withCPUDevices(choice, request)
}

// resolve is Resolve before the XLA CPU device count is settled.
func resolve(request string) (Choice, error) {
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
		if path, ok := FindCPUPlugin(); ok {
			return Choice{Config: "xla:" + path + options,
				Reason: fmt.Sprintf("XLA CPU PJRT plugin found at %s, and no CUDA PJRT plugin (looked for %s)", path, cudaLookedFor())}, nil
		}
		if err := xlaOnly("SimpleGo, the fallback when no PJRT plugin is found"); err != nil {
			return Choice{}, err
		}
		return Choice{Config: SimpleGo, Reason: fmt.Sprintf("no CUDA PJRT plugin found (looked for %s) and no XLA CPU PJRT plugin (looked for %s; install it with %s); using SimpleGo, the pure-Go CPU backend",
			cudaLookedFor(), cpuLookedFor(), InstallCPUCommand)}, nil
	case "cpu", "xla:cpu":
		if path, ok := FindCPUPlugin(); ok {
			return Choice{Config: "xla:" + path + options, Reason: "XLA CPU requested; PJRT plugin found at " + path}, nil
		}
		return Choice{}, fmt.Errorf("backend %q: no XLA CPU PJRT plugin found (looked for %s); install it with %s, or name one with -backend=xla:/path/to/plugin.so",
			request, cpuLookedFor(), InstallCPUCommand)
	case "go", "simplego":
		return Choice{Config: SimpleGo, Reason: "SimpleGo requested"}, xlaOnly("SimpleGo")
	case "go-tf32", "cpu-tf32":
		return Choice{Config: SimpleGo, Reason: "SimpleGo with float32 matrix-product inputs rounded to TF32 requested", EmulateTF32: true}, xlaOnly("SimpleGo")
	case "cuda", "gpu":
		if path, ok := FindCUDAPlugin(); ok {
			return Choice{Config: "xla:" + path + options, Reason: "CUDA PJRT plugin found at " + path}, nil
		}
		return Choice{}, fmt.Errorf("backend %q: no CUDA PJRT plugin found (looked for %s); install go-xla's (go run ./cmd/install-pjrt -cuda) or JAX's jax-cuda13-pjrt Python package, or name one with -backend=xla:/path/to/plugin.so",
			request, cudaLookedFor())
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
	var b backends.Backend
	if choice.CPUDevices > 0 {
		b, err = xla.NewWithOptions(strings.TrimPrefix(choice.Config, "xla:"),
			pjrt.NamedValuesMap{"cpu_device_count": int64(choice.CPUDevices)})
	} else {
		b, err = backends.NewWithConfig(choice.Config)
	}
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
func FindCUDAPlugin() (string, bool) { return firstFile(CUDAPluginCandidates()) }

// FindCPUPlugin returns the first XLA CPU PJRT plugin file that exists among
// CPUPluginCandidates.
func FindCPUPlugin() (string, bool) { return firstFile(CPUPluginCandidates()) }

// firstFile returns the first of paths that is a regular file (or a link to one).
func firstFile(paths []string) (string, bool) {
	for _, path := range paths {
		if info, err := os.Stat(path); err == nil && !info.IsDir() {
			return path, true
		}
	}
	return "", false
}

// CUDAPluginCandidates lists where a CUDA PJRT plugin is looked for, in
// order: go-xla's install folders (PluginDirs, each also with its nvidia/
// subfolder), then the plugin that JAX's jax-cuda12/13-pjrt Python packages
// ship (JAXCUDAPlugin) in the Python site folders of PythonSitePatterns.
func CUDAPluginCandidates() []string {
	var paths []string
	for _, dir := range PluginDirs() {
		paths = append(paths, filepath.Join(dir, CUDAPluginName), filepath.Join(dir, "nvidia", CUDAPluginName))
	}
	for _, site := range PythonSitePatterns() {
		matches, _ := filepath.Glob(filepath.Join(site, JAXCUDAPlugin))
		paths = append(paths, matches...)
	}
	return paths
}

// CPUPluginCandidates lists where the XLA CPU PJRT plugin is looked for, in
// order: in each of PluginDirs, pjrt_c_api_cpu_plugin.so (CPUPluginName),
// pjrt_plugin_cpu.so and pjrt-plugin-cpu.so.
func CPUPluginCandidates() []string {
	var paths []string
	for _, dir := range PluginDirs() {
		for _, name := range cpuPluginNames {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	return paths
}

// PluginDirs are go-xla's plugin folders, in search order: the entries of
// $PJRT_PLUGIN_LIBRARY_PATH, ~/.local/lib/go-xla and /usr/local/lib/go-xla.
// (go-xla itself searches only $PJRT_PLUGIN_LIBRARY_PATH when it is set;
// plugins found here are loaded by absolute path, so searching more is safe.)
func PluginDirs() []string {
	var dirs []string
	for _, dir := range filepath.SplitList(os.Getenv("PJRT_PLUGIN_LIBRARY_PATH")) {
		if dir != "" {
			dirs = append(dirs, dir)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local", "lib", "go-xla"))
	}
	return append(dirs, filepath.Join(systemRoot, "usr", "local", "lib", "go-xla"))
}

// PythonSitePatterns are the glob patterns of the Python site-packages
// folders searched for JAX's CUDA plugin, in order: the active virtualenv
// ($VIRTUAL_ENV), virtualenvs in /opt (/opt/*/.venv, /opt/*/venv), the
// user's site (~/.local/lib/python3*/site-packages), then the system's
// (/usr/local/lib/python3*/site-packages and dist-packages,
// /usr/lib/python3/dist-packages).
func PythonSitePatterns() []string {
	const venvSite = "lib/python3*/site-packages"
	var patterns []string
	if venv := os.Getenv("VIRTUAL_ENV"); venv != "" {
		patterns = append(patterns, filepath.Join(venv, venvSite))
	}
	patterns = append(patterns,
		filepath.Join(systemRoot, "opt", "*", ".venv", venvSite),
		filepath.Join(systemRoot, "opt", "*", "venv", venvSite))
	if home, err := os.UserHomeDir(); err == nil {
		patterns = append(patterns, filepath.Join(home, ".local", venvSite))
	}
	return append(patterns,
		filepath.Join(systemRoot, "usr", "local", "lib", "python3*", "site-packages"),
		filepath.Join(systemRoot, "usr", "local", "lib", "python3*", "dist-packages"),
		filepath.Join(systemRoot, "usr", "lib", "python3", "dist-packages"))
}

// cudaLookedFor says in words where FindCUDAPlugin looked.
func cudaLookedFor() string {
	return fmt.Sprintf("%s in %s (and their nvidia/ folders), and %s in %s",
		CUDAPluginName, strings.Join(PluginDirs(), ", "), JAXCUDAPlugin, strings.Join(PythonSitePatterns(), ", "))
}

// cpuLookedFor says in words where FindCPUPlugin looked.
func cpuLookedFor() string {
	return fmt.Sprintf("%s or %s in %s", strings.Join(cpuPluginNames[:len(cpuPluginNames)-1], ", "), cpuPluginNames[len(cpuPluginNames)-1],
		strings.Join(PluginDirs(), ", "))
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
