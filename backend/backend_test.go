package backend

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
)

// fakeTree is a temporary stand-in for every place Resolve searches: the
// user's home, $PJRT_PLUGIN_LIBRARY_PATH, the active virtualenv and the
// system folders, so that no plugin installed on the machine leaks into a
// test.
type fakeTree struct {
	home, pjrt, venv, root string
}

// isolate points every search location at empty temporary folders and
// clears $GOMLX_BACKEND.
func isolate(t *testing.T) fakeTree {
	t.Helper()
	tree := fakeTree{home: t.TempDir(), pjrt: t.TempDir(), venv: t.TempDir(), root: t.TempDir()}
	t.Setenv("HOME", tree.home)
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", tree.pjrt)
	t.Setenv("VIRTUAL_ENV", tree.venv)
	t.Setenv(backends.ConfigEnvVar, "")
	saved := systemRoot
	systemRoot = tree.root
	t.Cleanup(func() { systemRoot = saved })
	return tree
}

// fakePlugins are plugin files a test can install, by key, as paths
// relative to the fakeTree folder their first element names.
var fakePlugins = map[string][2]string{
	"cuda":          {"pjrt", CUDAPluginName},
	"cuda-nvidia":   {"home", ".local/lib/go-xla/nvidia/" + CUDAPluginName},
	"cuda-venv":     {"venv", "lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"},
	"cuda-opt-dot":  {"root", "opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"},
	"cuda-opt":      {"root", "opt/jax/venv/lib/python3.11/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so"},
	"cuda-user":     {"home", ".local/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"},
	"cuda-usr-site": {"root", "usr/local/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"},
	"cuda-usr-dist": {"root", "usr/local/lib/python3.12/dist-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"},
	"cuda-debian":   {"root", "usr/lib/python3/dist-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so"},
	"cpu":           {"pjrt", CPUPluginName},
	"cpu-home":      {"home", ".local/lib/go-xla/" + CPUPluginName},
	"cpu-system":    {"root", "usr/local/lib/go-xla/pjrt_plugin_cpu.so"},
	"cpu-dash":      {"home", ".local/lib/go-xla/pjrt-plugin-cpu.so"},
}

// path is where the fake plugin key lives in tree.
func (tree fakeTree) path(t *testing.T, key string) string {
	t.Helper()
	fake, ok := fakePlugins[key]
	if !ok {
		t.Fatalf("no fake plugin %q", key)
	}
	base := map[string]string{"home": tree.home, "pjrt": tree.pjrt, "venv": tree.venv, "root": tree.root}[fake[0]]
	return filepath.Join(base, filepath.FromSlash(fake[1]))
}

// install writes the fake plugins keys into tree.
func (tree fakeTree) install(t *testing.T, keys ...string) {
	t.Helper()
	for _, key := range keys {
		path := tree.path(t, key)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("fake"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// expand replaces {key} by the path of fake plugin key and {home}, {pjrt},
// {venv}, {root} by the tree's folders.
func (tree fakeTree) expand(t *testing.T, s string) string {
	t.Helper()
	for key := range fakePlugins {
		s = strings.ReplaceAll(s, "{"+key+"}", tree.path(t, key))
	}
	return strings.NewReplacer("{home}", tree.home, "{pjrt}", tree.pjrt, "{venv}", tree.venv, "{root}", tree.root).Replace(s)
}

func TestResolve(t *testing.T) {
	cudaDirs := CUDAPluginName + " in {pjrt}, {home}/.local/lib/go-xla, {root}/usr/local/lib/go-xla (and their nvidia/ folders)"
	cases := []struct {
		name       string
		request    string
		env        string   // $GOMLX_BACKEND
		plugins    []string // fake plugins installed (keys of fakePlugins)
		wantConfig string   // with {key} placeholders
		wantTF32   bool     // Choice.EmulateTF32
		devices    int      // Choice.CPUDevices; -1: runtime.NumCPU()
		wantReason []string // substrings of Choice.Reason
		wantErr    []string // substrings of the error
	}{
		{name: "auto without plugins falls back to SimpleGo", request: "auto", wantConfig: SimpleGo, wantReason: []string{
			"no CUDA PJRT plugin found (looked for " + cudaDirs, JAXCUDAPlugin + " in {venv}/lib/python3*/site-packages, {root}/opt/*/.venv/lib/python3*/site-packages",
			"no XLA CPU PJRT plugin (looked for pjrt_c_api_cpu_plugin.so, pjrt_plugin_cpu.so or pjrt-plugin-cpu.so in {pjrt}, {home}/.local/lib/go-xla, {root}/usr/local/lib/go-xla",
			InstallCPUCommand, "using SimpleGo"}},
		{name: "empty request is auto", request: "", wantConfig: SimpleGo, wantReason: []string{"using SimpleGo"}},
		{name: "auto prefers CUDA to XLA CPU", request: "auto", plugins: []string{"cuda", "cpu"}, wantConfig: "xla:{cuda}",
			wantReason: []string{"CUDA PJRT plugin found at {cuda}"}},
		{name: "auto takes XLA CPU without CUDA", request: "auto", plugins: []string{"cpu"}, wantConfig: "xla:{cpu}", devices: -1,
			wantReason: []string{"XLA CPU PJRT plugin found at {cpu}, and no CUDA PJRT plugin (looked for " + cudaDirs}},
		{name: "auto finds XLA CPU in the home folder", request: "auto", plugins: []string{"cpu-home"}, wantConfig: "xla:{cpu-home}", devices: -1},
		{name: "auto finds XLA CPU in the system folder", request: "auto", plugins: []string{"cpu-system"}, wantConfig: "xla:{cpu-system}", devices: -1},
		{name: "auto with CUDA in a virtualenv", request: "auto", plugins: []string{"cuda-opt-dot", "cpu"}, wantConfig: "xla:{cuda-opt-dot}"},
		{name: "auto passes XLA options to CUDA", request: "auto,tf32", plugins: []string{"cuda"}, wantConfig: "xla:{cuda},tf32"},
		{name: "auto passes XLA options to XLA CPU", request: "auto,opt", plugins: []string{"cpu"}, wantConfig: "xla:{cpu},opt", devices: -1},
		{name: "auto refuses XLA options for SimpleGo", request: "auto,tf32",
			wantErr: []string{`backend "auto,tf32"`, `options "tf32" apply to XLA backends only`}},
		{name: "environment overrides auto", request: "auto", env: "xla:cuda", plugins: []string{"cuda", "cpu"}, wantConfig: "xla:cuda",
			wantReason: []string{"$GOMLX_BACKEND"}},
		{name: "explicit SimpleGo ignores plugins", request: "go", plugins: []string{"cuda", "cpu"}, wantConfig: SimpleGo},
		{name: "simplego is SimpleGo", request: "simplego", plugins: []string{"cpu"}, wantConfig: SimpleGo},
		{name: "SimpleGo takes no XLA options", request: "go,tf32", wantErr: []string{`options "tf32" apply to XLA backends only`}},
		{name: "SimpleGo with TF32 emulated", request: "go-tf32", plugins: []string{"cuda", "cpu"}, wantConfig: SimpleGo, wantTF32: true},
		{name: "cpu-tf32 is go-tf32", request: "cpu-tf32", plugins: []string{"cpu"}, wantConfig: SimpleGo, wantTF32: true},
		{name: "cpu is XLA CPU", request: "cpu", plugins: []string{"cuda", "cpu"}, wantConfig: "xla:{cpu}", devices: -1,
			wantReason: []string{"XLA CPU requested", "{cpu}"}},
		{name: "xla:cpu is XLA CPU by path", request: "xla:cpu", plugins: []string{"cpu-home"}, wantConfig: "xla:{cpu-home}", devices: -1},
		{name: "XLA:CPU in capitals", request: "XLA:CPU", plugins: []string{"cpu-home"}, wantConfig: "xla:{cpu-home}", devices: -1},
		{name: "cpu with options", request: "cpu,opt", plugins: []string{"cpu"}, wantConfig: "xla:{cpu},opt", devices: -1},
		{name: "cpu takes $PJRT_PLUGIN_LIBRARY_PATH first", request: "cpu", plugins: []string{"cpu", "cpu-home", "cpu-system"}, wantConfig: "xla:{cpu}", devices: -1},
		{name: "cpu takes the home folder before the system's", request: "cpu", plugins: []string{"cpu-home", "cpu-system"}, wantConfig: "xla:{cpu-home}", devices: -1},
		{name: "cpu takes go-xla's first name first", request: "cpu", plugins: []string{"cpu-dash", "cpu-home"}, wantConfig: "xla:{cpu-home}", devices: -1},
		{name: "cpu under pjrt-plugin-cpu.so", request: "cpu", plugins: []string{"cpu-dash"}, wantConfig: "xla:{cpu-dash}", devices: -1},
		{name: "cpu without the plugin is an error", request: "cpu", plugins: []string{"cuda"}, wantErr: []string{
			`backend "cpu": no XLA CPU PJRT plugin found`, CPUPluginName, "pjrt-plugin-cpu.so", "{pjrt}", "{home}/.local/lib/go-xla", "{root}/usr/local/lib/go-xla",
			"install it with go run ./cmd/install-pjrt -cpu"}},
		{name: "xla:cpu without the plugin is an error", request: "xla:cpu", wantErr: []string{`backend "xla:cpu"`, InstallCPUCommand}},
		{name: "cuda with plugin", request: "cuda", plugins: []string{"cuda", "cpu"}, wantConfig: "xla:{cuda}"},
		{name: "gpu is cuda", request: "gpu", plugins: []string{"cuda-venv"}, wantConfig: "xla:{cuda-venv}"},
		{name: "cuda with options", request: "cuda,tf32", plugins: []string{"cuda"}, wantConfig: "xla:{cuda},tf32"},
		{name: "cuda takes go-xla's plugin before JAX's", request: "cuda", plugins: []string{"cuda-venv", "cuda-nvidia"}, wantConfig: "xla:{cuda-nvidia}"},
		{name: "cuda takes $VIRTUAL_ENV before /opt", request: "cuda", plugins: []string{"cuda-opt-dot", "cuda-venv"}, wantConfig: "xla:{cuda-venv}"},
		{name: "cuda without plugin is an error", request: "cuda", plugins: []string{"cpu"}, wantErr: []string{
			`backend "cuda": no CUDA PJRT plugin found`, cudaDirs, JAXCUDAPlugin,
			"{venv}/lib/python3*/site-packages", "{root}/opt/*/venv/lib/python3*/site-packages", "{home}/.local/lib/python3*/site-packages",
			"{root}/usr/local/lib/python3*/dist-packages", "{root}/usr/lib/python3/dist-packages", "install-pjrt -cuda"}},
		{name: "missing absolute plugin path", request: "xla:/no/such/plugin.so", wantErr: []string{"/no/such/plugin.so"}},
		{name: "absolute plugin path with options", request: "xla:{cpu},tf32", plugins: []string{"cpu"}, wantConfig: "xla:{cpu},tf32", devices: -1,
			wantReason: []string{"requested"}},
		{name: "other configs pass through", request: "xla:tpu", wantConfig: "xla:tpu"},
		{name: "XLA CPU gets a device per core", request: "cpu", plugins: []string{"cpu"}, wantConfig: "xla:{cpu}", devices: -1,
			wantReason: []string{"CPU device(s), one XLA compute thread each"}},
		{name: "auto on XLA CPU gets a device per core", request: "auto", plugins: []string{"cpu-system"}, wantConfig: "xla:{cpu-system}", devices: -1},
		{name: "devices option sets the XLA CPU devices", request: "cpu,devices=3", plugins: []string{"cpu"}, wantConfig: "xla:{cpu}", devices: 3,
			wantReason: []string{"; 3 CPU device(s)"}},
		{name: "devices option among others", request: "auto,opt,devices=2,more", plugins: []string{"cpu"}, wantConfig: "xla:{cpu},opt,more", devices: 2},
		{name: "devices option on a plugin path", request: "xla:{cpu-home},devices=5", plugins: []string{"cpu-home"}, wantConfig: "xla:{cpu-home}", devices: 5},
		{name: "devices=0 is an error", request: "cpu,devices=0", plugins: []string{"cpu"}, wantErr: []string{`option "devices=0"`, "whole number ≥ 1"}},
		{name: "devices must be a number", request: "cpu,devices=many", plugins: []string{"cpu"}, wantErr: []string{`option "devices=many"`}},
		{name: "devices is for XLA CPU only", request: "cuda,devices=2", plugins: []string{"cuda"}, wantErr: []string{"devices=2 applies to the XLA CPU plugin only"}},
		{name: "CUDA has no CPU devices", request: "auto", plugins: []string{"cuda", "cpu"}, wantConfig: "xla:{cuda}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tree := isolate(t)
			tree.install(t, c.plugins...)
			t.Setenv(backends.ConfigEnvVar, c.env)
			request := tree.expand(t, c.request)
			got, err := Resolve(request)
			if len(c.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Resolve(%q) = %+v, want an error", request, got)
				}
				for _, want := range c.wantErr {
					if want = tree.expand(t, want); !strings.Contains(err.Error(), want) {
						t.Errorf("Resolve(%q) error = %v\nwant it to mention %q", request, err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", request, err)
			}
			devices := c.devices
			if devices < 0 {
				devices = runtime.NumCPU()
			}
			if want := tree.expand(t, c.wantConfig); got.Config != want || got.Reason == "" || got.EmulateTF32 != c.wantTF32 || got.CPUDevices != devices {
				t.Errorf("Resolve(%q) = %+v, want config %q with a reason, EmulateTF32 %v, CPUDevices %d", request, got, want, c.wantTF32, devices)
			}
			for _, want := range c.wantReason {
				if want = tree.expand(t, want); !strings.Contains(got.Reason, want) {
					t.Errorf("Resolve(%q).Reason = %q\nwant it to mention %q", request, got.Reason, want)
				}
			}
		})
	}
}

// TestCUDAPluginInPythonSites checks that JAX's CUDA plugin is found in
// each kind of Python site folder on its own.
func TestCUDAPluginInPythonSites(t *testing.T) {
	for _, key := range []string{"cuda-venv", "cuda-opt-dot", "cuda-opt", "cuda-user", "cuda-usr-site", "cuda-usr-dist", "cuda-debian", "cuda-nvidia"} {
		t.Run(key, func(t *testing.T) {
			tree := isolate(t)
			tree.install(t, key, "cpu")
			got, err := Resolve("auto")
			if want := "xla:" + tree.path(t, key); err != nil || got.Config != want {
				t.Errorf("Resolve(auto) = %+v, %v; want config %q", got, err, want)
			}
		})
	}
}

func TestTF32ProductsAndCUDA(t *testing.T) {
	cases := []struct {
		choice     Choice
		tf32, cuda bool
	}{
		{Choice{Config: SimpleGo}, false, false},
		{Choice{Config: SimpleGo, EmulateTF32: true}, true, false},
		{Choice{Config: "xla:cuda"}, true, true},
		{Choice{Config: "xla:/usr/local/lib/go-xla/nvidia/" + CUDAPluginName}, true, true},
		{Choice{Config: "xla:/opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so,tf32"}, true, true},
		{Choice{Config: "xla:cpu"}, false, false},
		{Choice{Config: "xla:/home/cuda/.local/lib/go-xla/" + CPUPluginName}, false, false},
		{Choice{Config: "xla:/opt/cuda/pjrt_plugin_cpu.so,cuda"}, false, false},
	}
	for _, c := range cases {
		if got := c.choice.TF32Products(); got != c.tf32 {
			t.Errorf("%+v.TF32Products() = %v, want %v", c.choice, got, c.tf32)
		}
		if got := c.choice.CUDA(); got != c.cuda {
			t.Errorf("%+v.CUDA() = %v, want %v", c.choice, got, c.cuda)
		}
	}
}

func TestOpenSimpleGo(t *testing.T) {
	isolate(t)
	b, choice, err := Open("auto")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	if choice.Config != SimpleGo || !strings.Contains(choice.Reason, "SimpleGo") {
		t.Errorf("choice = %+v, want SimpleGo with a reason saying so", choice)
	}
}

// TestOpenXLACPUDevices opens the installed XLA CPU plugin (scripts/test.sh
// installs it) and checks that it presents the devices asked for: the
// plugin's own default is 4 whatever the machine.
func TestOpenXLACPUDevices(t *testing.T) {
	if _, ok := FindCPUPlugin(); !ok {
		t.Fatalf("no XLA CPU PJRT plugin installed (looked for %s); install it with %s", cpuLookedFor(), InstallCPUCommand)
	}
	for _, c := range []struct {
		request string
		want    int
	}{{"cpu", runtime.NumCPU()}, {"cpu,devices=3", 3}} {
		b, choice, err := Open(c.request)
		if err != nil {
			t.Fatalf("Open(%q): %v", c.request, err)
		}
		if got := b.NumDevices(); got != c.want || choice.CPUDevices != c.want {
			t.Errorf("Open(%q): %d devices, choice.CPUDevices %d; want %d", c.request, got, choice.CPUDevices, c.want)
		}
		b.Finalize()
	}
}

func TestCPUDevicesFor(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 0, 2: 4, 4: 8} {
		if got := CPUDevicesFor(n); got != want {
			t.Errorf("CPUDevicesFor(%d) = %d, want %d", n, got, want)
		}
	}
}
