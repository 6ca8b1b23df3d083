// Package testutil holds the helpers the project's numerical tests share:
// the backend they run on (SimpleGo unless $EDLEBM_TEST_BACKEND names
// another), element-wise comparison with a relative tolerance, and central
// finite differences, and a float64 log-sum-exp.
package testutil

import (
	"encoding/csv"
	"fmt"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/janpfeifer/must"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/mnist"
)

// BackendEnvVar names the backend the tests run on, as a -backend value
// ("go", "cuda", "xla:/path/plugin.so"); unset, it is SimpleGo. It lets the
// whole suite run on a GPU (scripts/test-gpu.sh).
const BackendEnvVar = "EDLEBM_TEST_BACKEND"

// BackendName is the -backend value of the tests' backend: the commands'
// tests pass it to the commands.
func BackendName() string {
	if name := os.Getenv(BackendEnvVar); name != "" {
		return name
	}
	return "go"
}

// opened is the tests' backend (see BackendName) and how it was chosen,
// created once.
var opened = sync.OnceValues(func() (backends.Backend, backend.Choice) {
	b, choice, err := backend.Open(BackendName())
	return must.M1(b, err), choice
})

// Backend is the tests' backend (see BackendName), created once; SimpleGo
// runs as backend.SimpleGo configures it.
func Backend() backends.Backend {
	b, _ := opened()
	return b
}

// SimpleGo is a SimpleGo backend, created once, for the tests that need
// full float32 products whatever the tests' backend.
var SimpleGo = sync.OnceValue(func() backends.Backend {
	b, _, err := backend.Open("go")
	return must.M1(b, err)
})

// MultiDeviceCount is the number of devices the data-parallel tests split
// batches over at most.
const MultiDeviceCount = 4

// multiDevice is MultiDevice's backend, opened once.
var multiDevice = sync.OnceValues(func() (backends.Backend, error) {
	cpuDevices := backend.CPUDevicesFor(MultiDeviceCount)
	if _, choice := opened(); choice.CUDA() && Backend().NumDevices() >= MultiDeviceCount ||
		choice.CPUDevices >= cpuDevices {
		return Backend(), nil
	}
	b, _, err := backend.Open(fmt.Sprintf("cpu,devices=%d", cpuDevices))
	return b, err
})

// MultiDevice is a backend on which batches can be split over up to
// MultiDeviceCount devices, for the data-parallel tests: the tests'
// backend where it has the devices, else XLA CPU with
// backend.CPUDevicesFor(MultiDeviceCount) devices (SimpleGo has one).
// Without the XLA CPU plugin, t fails naming the command that installs it.
func MultiDevice(t testing.TB) backends.Backend {
	t.Helper()
	b, err := multiDevice()
	if err != nil {
		t.Fatalf("the data-parallel tests need XLA CPU (%v); install it with %s", err, backend.InstallCPUCommand)
	}
	return b
}

// TF32 reports whether the tests' backend rounds the inputs of float32
// matrix products to TF32 (backend.Choice.TF32Products): -backend go-tf32,
// or XLA on a CUDA GPU.
func TF32() bool {
	_, choice := opened()
	return choice.TF32Products()
}

// ProductTol is the tolerance of a float32 result that went through matrix
// products: float32Tol on backends that compute them in full float32,
// tf32Tol where TF32 (each call site says what TF32 emulation gave).
func ProductTol(float32Tol, tf32Tol float64) float64 {
	if TF32() {
		return tf32Tol
	}
	return float32Tol
}

// AssertAllClose fails t when got and want differ in length, or at the
// first element where |got − want| > tol·max(1, |want|) or got is NaN.
func AssertAllClose(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s[%d] = %.10g, want %.10g (tolerance %g)", what, i, got[i], want[i], tol)
			return
		}
	}
}

// MaxRelativeDiff is the largest |got[i] − want[i]| / (floor + |want[i]|)
// (+Inf where got is NaN or the lengths differ): how far two runs'
// metrics drifted apart, floor keeping values near zero from dominating.
func MaxRelativeDiff(got, want []float64, floor float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	worst := 0.0
	for i := range got {
		if math.IsNaN(got[i]) {
			return math.Inf(1)
		}
		worst = math.Max(worst, math.Abs(got[i]-want[i])/(floor+math.Abs(want[i])))
	}
	return worst
}

// Array is a float64 tensor given as flat row-major data and dimensions.
type Array struct {
	Data []float64
	Dims []int
}

// Tensor returns the array as a GoMLX tensor.
func (a Array) Tensor() *tensors.Tensor { return tensors.FromFlatDataAndDimensions(a.Data, a.Dims...) }

// RandomArray draws N(0, scale²) values with the given dimensions.
func RandomArray(rng *rand.Rand, scale float64, dims ...int) Array {
	n := 1
	for _, d := range dims {
		n *= d
	}
	data := make([]float64, n)
	for i := range data {
		data[i] = scale * rng.NormFloat64()
	}
	return Array{data, dims}
}

// Executor is a compiled graph, of package graph or context.
type Executor interface {
	Exec(args ...any) ([]*tensors.Tensor, error)
}

// ExecFlat runs exec on inputs and returns its outputs as flat float64 slices.
func ExecFlat(t testing.TB, exec Executor, inputs ...Array) [][]float64 {
	t.Helper()
	ts := make([]*tensors.Tensor, len(inputs))
	for i, in := range inputs {
		ts[i] = in.Tensor()
	}
	return ExecTensors(t, exec, ts...)
}

// ExecTensors runs exec on inputs and returns its outputs, which must be
// float64, as flat slices.
func ExecTensors(t testing.TB, exec Executor, inputs ...*tensors.Tensor) [][]float64 {
	t.Helper()
	args := make([]any, len(inputs))
	for i, in := range inputs {
		args[i] = in
	}
	outs, err := exec.Exec(args...)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	res := make([][]float64, len(outs))
	for i, o := range outs {
		if res[i], err = tensors.CopyFlatData[float64](o); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// Run compiles the graph function fn on Backend and runs it on inputs.
func Run(t testing.TB, fn func(inputs []*graph.Node) []*graph.Node, inputs ...Array) [][]float64 {
	t.Helper()
	exec, err := graph.NewExec(Backend(), fn)
	if err != nil {
		t.Fatal(err)
	}
	return ExecFlat(t, exec, inputs...)
}

// AssertOnlyFile fails t unless dir holds exactly one entry, name: no
// temporary files left behind by an atomic write.
func AssertOnlyFile(t testing.TB, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only %s", names, name)
	}
}

// AssertGreyImages checks a loaded set of n single-channel side×side images:
// its name, its shape, its labels (nil wanted only as nil) and every pixel
// against want(image, row, column), stopping at the first wrong pixel.
func AssertGreyImages(t testing.TB, im *datasets.Images, name string, n, side int, labels []int, want func(n, r, c int) float32) {
	t.Helper()
	if im.Name != name || !slices.Equal(im.Shape(), []int{n, side, side, 1}) {
		t.Fatalf("name %q shape %v, want %q [%d %d %d 1]", im.Name, im.Shape(), name, n, side, side)
	}
	if !slices.Equal(im.Labels, labels) || (im.Labels == nil) != (labels == nil) {
		t.Errorf("labels %v, want %v", im.Labels, labels)
	}
	for i := range n {
		for r := range side {
			for c := range side {
				if got, want := im.Image(i)[r*side+c], want(i, r, c); got != want {
					t.Fatalf("image %d pixel (row %d, column %d) = %v, want %v", i, r, c, got, want)
				}
			}
		}
	}
}

// WriteInTempDir writes data as dir/name in a new temporary folder and
// returns dir.
func WriteInTempDir(t testing.TB, name string, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// WriteBlankIDX writes an all-zero unsigned-byte IDX file with the given
// dimensions: a data set of the right format and shape for command tests.
func WriteBlankIDX(t testing.TB, path string, dims ...int) {
	t.Helper()
	size := 1
	for _, d := range dims {
		size *= d
	}
	if err := mnist.WriteIDX(path, dims, make([]byte, size)); err != nil {
		t.Fatal(err)
	}
}

// RequireFashionMNIST skips t, saying what to install, when Debian's
// Fashion-MNIST files, which the end-to-end tests train and evaluate on,
// are missing. The README's test command installs them, so there the
// tests always run; a plain `go test ./...` elsewhere skips only these.
func RequireFashionMNIST(t testing.TB) {
	t.Helper()
	if err := mnist.CheckFashionInstalled(); err != nil {
		t.Skipf("%v: apt-get install dataset-fashion-mnist (./scripts/test.sh installs it)", err)
	}
}

// ReadText returns the file at path as text, or fails the test.
func ReadText(t testing.TB, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// ReadCSV returns every record of the CSV file at path, header included,
// or fails the test.
func ReadCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return records
}

// WriteCSV writes records to path as CSV, or fails the test.
func WriteCSV(t testing.TB, path string, records [][]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(records); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// PNGConfig returns the width, height and colour model of the PNG file at
// path, or fails the test.
func PNGConfig(t testing.TB, path string) image.Config {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg
}

// WriteImagesAsPNG writes every image of im (pixels in [-1, 1], 1 or 3
// channels) as a PNG dir/NNNNN.png, NNNNN its index, as a user with a
// folder of images would have them: levels round((v+1)/2·255).
func WriteImagesAsPNG(t testing.TB, dir string, im *datasets.Images) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	level := func(v float32) uint8 { return uint8(math.Round((float64(v) + 1) / 2 * 255)) }
	for i := range im.N {
		var img image.Image
		pix := im.Image(i)
		switch im.Channels {
		case 1:
			g := image.NewGray(image.Rect(0, 0, im.Width, im.Height))
			for j, v := range pix {
				g.Pix[j] = level(v)
			}
			img = g
		case 3:
			c := image.NewNRGBA(image.Rect(0, 0, im.Width, im.Height))
			for j := range im.Height * im.Width {
				c.Pix[4*j], c.Pix[4*j+1], c.Pix[4*j+2], c.Pix[4*j+3] = level(pix[3*j]), level(pix[3*j+1]), level(pix[3*j+2]), 255
			}
			img = c
		default:
			t.Fatalf("WriteImagesAsPNG: %d channels, want 1 or 3", im.Channels)
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%05d.png", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
