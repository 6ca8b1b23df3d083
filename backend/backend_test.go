package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isolate points every search location at empty temporary directories.
func isolate(t *testing.T) (pluginDir string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GOMLX_BACKEND", "")
	pluginDir = t.TempDir()
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", pluginDir)
	return pluginDir
}

func TestResolve(t *testing.T) {
	cases := []struct {
		name       string
		request    string
		env        string
		plugin     bool // a fake CUDA plugin file is installed
		wantConfig string
		wantTF32   bool // Choice.EmulateTF32
		wantErr    string
	}{
		{"auto without plugin falls back to SimpleGo", "auto", "", false, SimpleGo, false, ""},
		{"empty request is auto", "", "", false, SimpleGo, false, ""},
		{"auto with plugin uses XLA", "auto", "", true, "xla:PLUGIN", false, ""},
		{"auto passes XLA options on", "auto,tf32", "", true, "xla:PLUGIN,tf32", false, ""},
		{"auto refuses XLA options for SimpleGo", "auto,tf32", "", false, "", false, `options "tf32" apply to XLA backends only`},
		{"environment overrides auto", "auto", "xla:cuda", true, "xla:cuda", false, ""},
		{"explicit SimpleGo ignores plugin", "go", "", true, SimpleGo, false, ""},
		{"SimpleGo takes no XLA options", "go,tf32", "", false, "", false, `options "tf32" apply to XLA backends only`},
		{"SimpleGo with TF32 emulated", "go-tf32", "", true, SimpleGo, true, ""},
		{"cuda with plugin", "cuda", "", true, "xla:PLUGIN", false, ""},
		{"cuda with options", "cuda,tf32", "", true, "xla:PLUGIN,tf32", false, ""},
		{"cuda without plugin is an error", "cuda", "", false, "", false, CUDAPluginName},
		{"missing absolute plugin path", "xla:/no/such/plugin.so", "", false, "", false, "/no/such/plugin.so"},
		{"absolute plugin path with options", "xla:PLUGIN,tf32", "", true, "xla:PLUGIN,tf32", false, ""},
		{"other configs pass through", "xla:cpu", "", false, "xla:cpu", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := isolate(t)
			plugin := filepath.Join(dir, CUDAPluginName)
			if c.plugin {
				if err := os.WriteFile(plugin, []byte("fake"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("GOMLX_BACKEND", c.env)
			request := strings.Replace(c.request, "PLUGIN", plugin, 1)
			got, err := Resolve(request)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Resolve(%q) error = %v, want one mentioning %q", c.request, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", c.request, err)
			}
			want := strings.Replace(c.wantConfig, "PLUGIN", plugin, 1)
			if got.Config != want || got.Reason == "" || got.EmulateTF32 != c.wantTF32 {
				t.Errorf("Resolve(%q) = %+v, want config %q with a reason, EmulateTF32 %v", request, got, want, c.wantTF32)
			}
		})
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
