package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/backend"
)

// fakePlugin is the content of the fake wheels' plugin.
var fakePlugin = []byte("\x7fELF not really a PJRT plugin\n")

// fakeWheel writes a wheel of xlaCPUWheel's project and version, tagged
// for any platform, into dir with the given members besides its
// .dist-info metadata (which pip checks), and returns its path and the spec
// that pins it.
func fakeWheel(t *testing.T, dir string, members map[string][]byte) (string, wheelSpec) {
	t.Helper()
	distInfo := "xla_cpu_pjrt-" + xlaCPUWheel.Version + ".dist-info/"
	all := map[string][]byte{
		distInfo + "METADATA": []byte("Metadata-Version: 2.1\nName: " + xlaCPUWheel.Project + "\nVersion: " + xlaCPUWheel.Version + "\n"),
		distInfo + "WHEEL":    []byte("Wheel-Version: 1.0\nGenerator: install-pjrt test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
	}
	for name, data := range members {
		all[name] = data
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range all {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "xla_cpu_pjrt-"+xlaCPUWheel.Version+"-py3-none-any.whl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	spec := xlaCPUWheel
	spec.SHA256 = hex.EncodeToString(sum[:])
	return path, spec
}

// isolate keeps the machine's own plugins, pip configuration and caches
// out of a test.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir())
	t.Setenv("PIP_CONFIG_FILE", os.DevNull)
	t.Setenv("PIP_FIND_LINKS", "")
	os.Unsetenv("PIP_FIND_LINKS") // t.Setenv restores it afterwards.
	t.Setenv("PIP_NO_INDEX", "")
	os.Unsetenv("PIP_NO_INDEX")
}

// assertInstalled fails t unless dir holds the fake plugin, exactly.
func assertInstalled(t *testing.T, dir string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, cpuPluginFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, fakePlugin) {
		t.Errorf("installed plugin = %q, want %q", got, fakePlugin)
	}
}

// assertNotInstalled fails t if dir holds a plugin or its stamp.
func assertNotInstalled(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{cpuPluginFile, cpuPluginFile + stampSuffix} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was installed", name)
		}
	}
}

// TestInstallCPUWithPip installs a fake wheel through the real pip, from a
// local folder (-find-links), and checks that the backend package then
// finds the plugin, and that a second install does nothing (it does not
// even run pip).
func TestInstallCPUWithPip(t *testing.T) {
	isolate(t)
	if out, err := exec.Command("python3", "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Skipf("no pip to test with: python3 -m pip --version: %v: %s", err, out)
	}
	links, dir := t.TempDir(), t.TempDir()
	_, spec := fakeWheel(t, links, map[string][]byte{xlaCPUWheel.Member: fakePlugin})
	var out strings.Builder
	if err := runWith([]string{"-cpu", "-dir", dir, "-find-links", links, "-python", "python3"}, &out, spec); err != nil {
		t.Fatalf("install: %v\noutput:\n%s", err, out.String())
	}
	assertInstalled(t, dir)
	target := filepath.Join(dir, cpuPluginFile)
	for _, want := range []string{"pip download", "--no-index --find-links " + links, "Successfully downloaded xla-cpu-pjrt", "installed the XLA CPU PJRT plugin", target, "PJRT_PLUGIN_LIBRARY_PATH=" + dir} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not mention %q:\n%s", want, out.String())
		}
	}

	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", dir)
	if backend.CPUPluginName != cpuPluginFile {
		t.Errorf("backend.CPUPluginName = %q, this command installs %q", backend.CPUPluginName, cpuPluginFile)
	}
	if got, err := backend.Resolve("cpu"); err != nil || got.Config != "xla:"+target {
		t.Errorf(`backend.Resolve("cpu") = %+v, %v; want config xla:%s`, got, err, target)
	}

	before, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runWith([]string{"-cpu", "-dir", dir, "-python", "/no/such/python"}, &out, spec); err != nil {
		t.Fatalf("second install: %v", err)
	}
	if !strings.Contains(out.String(), "already installed") {
		t.Errorf("second install's output = %q, want it to say the plugin is already installed", out.String())
	}
	if after, err := os.Stat(target); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("second install replaced %s", target)
	}

	// A wheel whose digest is not the pinned one is refused after pip got it.
	other := xlaCPUWheel
	other.SHA256 = strings.Repeat("0", 64)
	dir2 := t.TempDir()
	err = runWith([]string{"-cpu", "-dir", dir2, "-find-links", links}, &out, other)
	if err == nil || !strings.Contains(err.Error(), "xla_cpu_pjrt-0.0.1-py3-none-any.whl: sha256 "+spec.SHA256+", want "+other.SHA256) {
		t.Errorf("install with the wrong pinned digest: error %v, want one naming the wheel and both digests", err)
	}
	assertNotInstalled(t, dir2)

	// pip's own failure ends the error.
	err = runWith([]string{"-cpu", "-dir", dir2, "-find-links", t.TempDir()}, &out, spec)
	if err == nil || !strings.Contains(err.Error(), "pip download xla-cpu-pjrt==0.0.1") || !strings.Contains(err.Error(), "No matching distribution") {
		t.Errorf("install from an empty folder: error %v, want pip's", err)
	}
}

// TestInstallCPUFromWheel installs local wheels (-wheel): good ones, ones
// with the wrong digest or without the plugin, and again over an install.
func TestInstallCPUFromWheel(t *testing.T) {
	cases := []struct {
		name      string
		members   map[string][]byte
		wrongHash bool // pin a digest other than the wheel's
		before    func(t *testing.T, dir string, install func() error)
		wantErr   []string // with WHEEL, GOT and WANT standing for the wheel's path, its digest and the pinned one
		wantOut   string
	}{
		{name: "installs the plugin", members: map[string][]byte{xlaCPUWheel.Member: fakePlugin}, wantOut: "installed the XLA CPU PJRT plugin"},
		{name: "refuses a wheel with another digest", members: map[string][]byte{xlaCPUWheel.Member: fakePlugin}, wrongHash: true,
			wantErr: []string{"wheel WHEEL: sha256 GOT, want WANT (pinned for xla-cpu-pjrt 0.0.1)"}},
		{name: "refuses a wheel without the plugin", members: map[string][]byte{"xla_plugins/xla_cpu_pjrt/other.so": fakePlugin},
			wantErr: []string{"wheel WHEEL has no member " + xlaCPUWheel.Member}},
		{name: "does nothing when installed", members: map[string][]byte{xlaCPUWheel.Member: fakePlugin},
			before: func(t *testing.T, dir string, install func() error) {
				if err := install(); err != nil {
					t.Fatal(err)
				}
			}, wantOut: "already installed"},
		{name: "reinstalls a changed plugin", members: map[string][]byte{xlaCPUWheel.Member: fakePlugin},
			before: func(t *testing.T, dir string, install func() error) {
				if err := install(); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, cpuPluginFile), []byte("changed"), 0o644); err != nil {
					t.Fatal(err)
				}
			}, wantOut: "installed the XLA CPU PJRT plugin"},
		{name: "replaces a plugin installed from another wheel", members: map[string][]byte{xlaCPUWheel.Member: fakePlugin},
			before: func(t *testing.T, dir string, install func() error) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, cpuPluginFile), []byte("older"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, cpuPluginFile+stampSuffix), []byte(`{"project":"xla-cpu-pjrt","version":"0.0.0","wheel_sha256":"ab","plugin_sha256":"cd"}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}, wantOut: "installed the XLA CPU PJRT plugin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			isolate(t)
			dir := filepath.Join(t.TempDir(), "go-xla") // created by the install
			wheel, spec := fakeWheel(t, t.TempDir(), c.members)
			got := spec.SHA256
			if c.wrongHash {
				spec.SHA256 = strings.Repeat("f", 64)
			}
			var out strings.Builder
			install := func() error {
				out.Reset()
				return runWith([]string{"-cpu", "-wheel", wheel, "-dir", dir}, &out, spec)
			}
			if c.before != nil {
				c.before(t, dir, install)
			}
			err := install()
			if len(c.wantErr) > 0 {
				if err == nil {
					t.Fatalf("install succeeded, want an error; output:\n%s", out.String())
				}
				for _, want := range c.wantErr {
					want = strings.NewReplacer("WHEEL", wheel, "GOT", got, "WANT", spec.SHA256).Replace(want)
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error = %v\nwant it to mention %q", err, want)
					}
				}
				assertNotInstalled(t, dir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), c.wantOut) {
				t.Errorf("output = %q, want it to mention %q", out.String(), c.wantOut)
			}
			assertInstalled(t, dir)
			if !installedFrom(filepath.Join(dir, cpuPluginFile), spec) {
				t.Errorf("the stamp does not record the install")
			}
		})
	}
}

func TestFlagErrors(t *testing.T) {
	isolate(t)
	wheel, _ := fakeWheel(t, t.TempDir(), map[string][]byte{xlaCPUWheel.Member: fakePlugin})
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args    []string
		wantErr []string
	}{
		{[]string{"-cpu", "-cuda"}, []string{"-cpu", "-cuda"}},
		{[]string{"-plugin", "cuda11"}, []string{`flag -plugin "cuda11"`, "cuda13 or cuda12"}},
		{[]string{"-cpu", "-plugin", "cuda12"}, []string{`flag -plugin "cuda12"`, "-cuda only", "xla-cpu-pjrt 0.0.1"}},
		{[]string{"-cpu", "-version", "0.8.1"}, []string{`flag -version "0.8.1"`, "-cuda only"}},
		{[]string{"-cuda", "-wheel", wheel}, []string{`flag -wheel "` + wheel + `"`, "-cpu only"}},
		{[]string{"-find-links", "/tmp"}, []string{`flag -find-links "/tmp"`, "-cpu only"}},
		{[]string{"-cuda", "-python", "python3.12"}, []string{`flag -python "python3.12"`, "-cpu only"}},
		{[]string{"-cpu", "-wheel", wheel, "-find-links", "/tmp"}, []string{`-wheel "` + wheel + `"`, `-find-links "/tmp"`}},
		{[]string{"-cpu", "-wheel", "/no/such.whl"}, []string{`flag -wheel "/no/such.whl"`, "no such file"}},
		{[]string{"-cpu", "-wheel", "/tmp"}, []string{`flag -wheel "/tmp"`, "folder"}},
		{[]string{"-cpu", "-find-links", "/no/such/dir"}, []string{`flag -find-links "/no/such/dir"`, "no such file"}},
		{[]string{"-cpu", "-find-links", notDir}, []string{`flag -find-links "` + notDir + `"`, "it is a file"}},
		{[]string{"-cpu", "-dir", t.TempDir(), "-python", "/no/such/python"}, []string{`flag -python "/no/such/python"`}},
		{[]string{"-cpu", "-dir", notDir + "/sub", "-wheel", wheel}, []string{`flag -dir "` + notDir + `/sub"`}},
		{[]string{"-cpu", "extra"}, []string{`unexpected arguments ["extra"]`}},
	}
	for _, c := range cases {
		err := run(c.args, &strings.Builder{})
		if err == nil {
			t.Errorf("run(%q) succeeded, want an error", c.args)
			continue
		}
		for _, want := range c.wantErr {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("run(%q) error = %v\nwant it to mention %q", c.args, err, want)
			}
		}
	}
}

func TestDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	got, err := defaultDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".local", "lib", "go-xla"); got != systemDir && got != want || (got == systemDir) != writable(systemDir) {
		t.Errorf("defaultDir() = %q, want %s if it can be written (%v), else %s", got, systemDir, writable(systemDir), want)
	}
	if !writable(filepath.Join(home, "not", "yet")) {
		t.Errorf("writable(a folder to be made in a writable one) = false")
	}
	if os.Geteuid() != 0 && writable("/proc/1") {
		t.Errorf("writable(/proc/1) = true")
	}
}

// TestSearchedAgreesWithBackend checks that searched, which says whether
// the backend package looks in a folder, matches backend.PluginDirs.
func TestSearchedAgreesWithBackend(t *testing.T) {
	isolate(t)
	extra := t.TempDir()
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", extra)
	for _, dir := range backend.PluginDirs() {
		if !searched(dir) {
			t.Errorf("searched(%q) = false; the backend package searches it", dir)
		}
	}
	if searched(t.TempDir()) {
		t.Errorf("searched(a new temporary folder) = true")
	}
}

// TestParseFlags checks the command lines that install: the Dockerfile's
// (CUDA without -cuda), -cuda, and -cpu with its sources.
func TestParseFlags(t *testing.T) {
	t.Setenv("PYTHON", "")
	cases := []struct {
		args []string
		want options
	}{
		{[]string{"-plugin", "cuda13", "-dir", "/out/go-xla"}, options{plugin: "cuda13", version: "latest", dir: "/out/go-xla", python: "python3"}},
		{[]string{"-cuda", "-plugin", "cuda12", "-version", "0.8.1"}, options{cuda: true, plugin: "cuda12", version: "0.8.1", python: "python3"}},
		{[]string{"-cpu"}, options{cpu: true, plugin: "cuda13", version: "latest", python: "python3"}},
		{[]string{"-cpu", "-python", "/usr/bin/python3.12", "-find-links", "/tmp"}, options{cpu: true, plugin: "cuda13", version: "latest", python: "/usr/bin/python3.12", findLinks: "/tmp"}},
	}
	for _, c := range cases {
		got, err := parseFlags(c.args)
		if err != nil || got != c.want {
			t.Errorf("parseFlags(%q) = %+v, %v; want %+v", c.args, got, err, c.want)
		}
	}
	t.Setenv("PYTHON", "/opt/py/bin/python")
	if got, err := parseFlags([]string{"-cpu"}); err != nil || got.python != "/opt/py/bin/python" {
		t.Errorf("parseFlags(-cpu) with $PYTHON set = %+v, %v; want python from $PYTHON", got, err)
	}
}
