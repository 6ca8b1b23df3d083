package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// sharedReferences is a folder of mnist-shaped ED and SM references,
// written once for the package's tests (each write compiles the methods'
// graphs, seconds on XLA) and removed by TestMain.
var sharedReferences struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedReferences.dir != "" {
		os.RemoveAll(sharedReferences.dir)
	}
	os.Exit(code)
}

// writeTestReferences copies the shared references of methods (of "ed",
// "sm") into a folder of the test's own and returns it, with options
// that check it.
func writeTestReferences(t *testing.T, methods ...string) (dir string, o options) {
	t.Helper()
	// SimpleGo both writes and checks: the tool's reading, comparing and
	// reporting are under test here (its use, a GPU's backend against
	// these references, is the GPU runbook's), and XLA would spend the
	// tests compiling (31 s against 3).
	o = options{backend: "go", shapes: []string{"mnist"}, batch: 2, seed: 3, rtol: 1e-6}
	refs := &sharedReferences
	refs.once.Do(func() {
		if refs.dir, refs.err = os.MkdirTemp("", "check-backend-test-"); refs.err == nil {
			w := o
			w.write, w.methods = refs.dir, []string{"ed", "sm"}
			refs.err = run(w, &bytes.Buffer{})
		}
	})
	if refs.err != nil {
		t.Fatal(refs.err)
	}
	dir = t.TempDir()
	for _, method := range methods {
		name := "mnist-" + method
		if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(filepath.Join(refs.dir, name))); err != nil {
			t.Fatal(err)
		}
	}
	o.check = dir
	return dir, o
}

// editReference rewrites one reference.json through edit.
func editReference(t *testing.T, path string, edit func(ref *reference)) {
	t.Helper()
	ref, err := readReference(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(&ref)
	data, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckAgainstOwnReference checks the round trip on one backend: the
// reloaded checkpoint gives the same probes (difference 0) and, its random
// number generator state restored, the same training step.
func TestCheckAgainstOwnReference(t *testing.T) {
	_, o := writeTestReferences(t, "ed", "sm")
	var out bytes.Buffer
	if err := run(o, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		fields := strings.Split(line, "|")
		if len(fields) < 4 || !strings.HasPrefix(strings.TrimSpace(fields[1]), "mnist") {
			continue
		}
		// Every number after the names (probe errors; the step's relative
		// differences in the last column) must be 0.
		last := strings.TrimSpace(fields[len(fields)-2])
		if last != "0" {
			t.Errorf("row %q: want a difference of 0", line)
		}
	}
	if got := strings.Count(out.String(), "| mnist |"); got != 2+2*len(metricNames) {
		t.Errorf("report has %d mnist rows, want %d:\n%s", got, 2+2*len(metricNames), out.String())
	}
}

// TestCheckFindsDifferences checks that a probe off by more than -rtol
// fails, in its own column, and that bad references give errors naming
// what is wrong.
func TestCheckFindsDifferences(t *testing.T) {
	dir, o := writeTestReferences(t, "ed") // each method checked compiles its graphs
	edPath := filepath.Join(dir, "mnist-ed", referenceFile)
	var wantCell, refBackend string
	editReference(t, edPath, func(ref *reference) {
		u := ref.Probes["U_post(x, z)"] // one value per example: 2
		diff := 0.01 * math.Sqrt((u[0]*u[0]+u[1]*u[1])/2)
		u[0] += diff // about 1 % of the rms: fails at -rtol 0.5 %, passes at 2 %
		wantCell = fmt.Sprintf("| 0 | %.2g **FAIL** | 0 |", diff/math.Sqrt((u[0]*u[0]+u[1]*u[1])/2))
		refBackend = ref.Backend
	})
	var out bytes.Buffer
	o.rtol = 0.005
	err := run(o, &out)
	if err == nil || !strings.Contains(err.Error(), "1 probes differ") {
		t.Fatalf("error %v, want 1 probe failing\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "| mnist | ed | "+refBackend+" "+wantCell) {
		t.Errorf("want the ED row's U_post column alone failing, %q, in\n%s", wantCell, out.String())
	}
	o.rtol = 0.02
	if err := run(o, &bytes.Buffer{}); err != nil {
		t.Errorf("at -rtol 0.02 a 1 %% difference should pass: %v", err)
	}

	editReference(t, edPath, func(ref *reference) { ref.Inputs.Z = ref.Inputs.Z[1:] })
	if err := run(o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "input z has") {
		t.Errorf("truncated z: error %v, want one naming input z", err)
	}
	editReference(t, edPath, func(ref *reference) { delete(ref.Probes, "G(z)") })
	if err := run(o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `no probe "G(z)"`) {
		t.Errorf("missing probe: error %v, want one naming it", err)
	}
}

// TestTF32PassesAtTheDefaultTolerance checks references written on
// SimpleGo against SimpleGo with TF32 products, as a GPU would be checked:
// every probe within the default -rtol, and the G(z) probes not exact, so
// the TF32 rounding did run.
func TestTF32PassesAtTheDefaultTolerance(t *testing.T) {
	dir := t.TempDir()
	o := options{backend: "go", write: dir, shapes: []string{"mnist"}, methods: []string{"ed", "sm"}, batch: 2, seed: 3}
	if err := run(o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	o.backend, o.write, o.check, o.rtol = "go-tf32", "", dir, defaultRTol
	var out bytes.Buffer
	if err := run(o, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	rows := 0
	for _, line := range strings.Split(out.String(), "\n") {
		fields := strings.Split(line, "|") // "", shape, method, reference backend, G(z), …
		if len(fields) > 5 && strings.TrimSpace(fields[1]) == "mnist" && strings.Contains(fields[3], "SimpleGo") {
			rows++
			if g := strings.TrimSpace(fields[4]); g == "0" {
				t.Errorf("row %q: G(z) exact under TF32 products", line)
			}
		}
	}
	if rows != 2 {
		t.Errorf("found %d probe rows, want 2:\n%s", rows, out.String())
	}
}

// TestFlagErrors checks the flag combinations that cannot run.
func TestFlagErrors(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		name string
		o    options
		want string
	}{
		{"neither", options{backend: "go"}, "exactly one of -write"},
		{"both", options{backend: "go", write: empty, check: empty}, "exactly one of -write"},
		{"no references", options{backend: "go", check: empty}, "no reference.json"},
		{"unknown shape", options{backend: "go", write: empty, shapes: []string{"imagenet"}, methods: []string{"ed"}, batch: 1}, "imagenet"},
		{"unknown method", options{backend: "go", write: empty, shapes: []string{"mnist"}, methods: []string{"mle"}, batch: 1}, `"mle"`},
		{"bad batch", options{backend: "go", write: empty, batch: 0}, "-batch 0"},
	}
	for _, c := range cases {
		if err := run(c.o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestRelativeError checks the error measure on hand-computed cases.
func TestRelativeError(t *testing.T) {
	cases := []struct {
		got, want []float64
		err       float64
	}{
		{[]float64{1, 2}, []float64{1, 2}, 0},
		{[]float64{3, 4.5}, []float64{3, 4}, 0.5 / math.Sqrt(12.5)}, // rms(3, 4) = √12.5
		{[]float64{0.5, 0}, []float64{0, 0}, 0.5},                   // all-zero reference: the absolute difference
		{[]float64{math.NaN(), 0}, []float64{1, 1}, math.Inf(1)},
	}
	for _, c := range cases {
		got, err := relativeError(c.got, c.want)
		if err != nil || math.Abs(got-c.err) > 1e-15 && !(math.IsInf(got, 1) && math.IsInf(c.err, 1)) {
			t.Errorf("relativeError(%v, %v) = %v, %v; want %v", c.got, c.want, got, err, c.err)
		}
	}
	if _, err := relativeError([]float64{1}, []float64{1, 2}); err == nil {
		t.Error("different lengths: want an error")
	}
}
