package toystudies

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/internal/testutil"
)

// studyBackend runs the studies on SimpleGo: their outputs (rows, cells,
// curves) are under test here, the losses' numbers in losses' and
// density's tests on every backend, and XLA would spend most of these
// tests compiling (24 s against 11).
var studyBackend = testutil.SimpleGo

// study is a Study of seed 1 into dir on studyBackend.
func study(dir string) Study { return Study{Backend: studyBackend(), Dir: dir, Seed: 1} }

// A short DSM study writes one row per t with both methods' log-density
// MSE — finite and positive after two epochs — the plot and the density
// picture (two bands, ED's and DSM's, of one cell per t); each run is kept
// as a cell of its own, read back on a rerun; bad flags are named.

func TestDSMStudyWritesOneRowPerT(t *testing.T) {
	out := t.TempDir()
	run := func() [][]string {
		t.Helper()
		o := DSMOptions{ToySet: ToySet{Data: "25gaussians", Points: 512, Epochs: 2}, T: []float64{0.1, 1}}
		if err := study(out).DSM(o); err != nil {
			t.Fatal(err)
		}
		return testutil.ReadCSV(t, filepath.Join(out, "dsm.csv"))
	}
	rows := run()
	if len(rows) != 3 || strings.Join(rows[0], ",") != "t,ed_mse,dsm_mse" || rows[1][0] != "0.1" || rows[2][0] != "1" {
		t.Fatalf("dsm.csv = %v, want a header and rows for t = 0.1 and 1", rows)
	}
	for _, row := range rows[1:] {
		for _, cell := range row[1:] {
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("row %v: MSE %q, want a finite positive number", row, cell)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "dsm.png")); err != nil {
		t.Error(err)
	}
	if cfg := testutil.PNGConfig(t, filepath.Join(out, "dsm_density.png")); cfg.Width != 2*(2*48+1) || cfg.Height != 2*(2*48+1) {
		t.Errorf("dsm_density.png is %d×%d, want two bands of two 48×48 cells at 2 pixels a point", cfg.Width, cfg.Height)
	}
	dsmCell := filepath.Join(out, "cells", "25gaussians-dsm-t1-seed1-points512-epochs2.json")
	if all, _ := filepath.Glob(filepath.Join(out, "cells", "*.json")); len(all) != 4 || !slices.Contains(all, dsmCell) {
		t.Fatalf("cell files %v, want 4 (ED and DSM for each t), %s among them", all, dsmCell)
	}
	editCell(t, dsmCell, func(r *cellResult) { r.MSE = 123.5 })
	if again := run(); again[2][2] != "123.5" || again[2][1] != rows[2][1] || again[1][2] != rows[1][2] {
		t.Errorf("dsm.csv after editing DSM's t = 1 cell = %v, want its MSE 123.5 and the rest as before, %v", again, rows)
	}
	for _, c := range []struct {
		data    string
		t       float64
		points  int
		mention string
	}{
		{"spiral9", 1, 512, "-dsm-data spiral9"},
		{"nonesuch", 1, 512, "-dsm-data nonesuch"},
		{"25gaussians", -1, 512, "DSMOptions.T -1"},
		{"25gaussians", 1, 100, "-dsm-points 100"},
	} {
		o := DSMOptions{ToySet: ToySet{Data: c.data, Points: c.points, Epochs: 1}, T: []float64{c.t}}
		if err := study(t.TempDir()).DSM(o); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("DSM(%+v): error %v, want one naming %s", o, err, c.mention)
		}
	}
}

// A short divergence study (12 steps a run) writes one row per w × M with
// the losses at steps 1 and 10 (100 to 10,000: NaN, past the end) and every
// step's loss; with w = 1 no loss is below the bound log(w/M) that the
// stabiliser puts under the loss, and the lowest loss is the lowest step's.
func TestDivergenceStudyRecordsEveryStep(t *testing.T) {
	out := t.TempDir()
	o := DivergenceOptions{ToySet: ToySet{Data: "25gaussians", Points: 256, Epochs: 6}, W: []float64{0, 1}, M: []int{1, 4}}
	if err := study(out).Divergence(o); err != nil {
		t.Fatal(err)
	}
	rows := testutil.ReadCSV(t, filepath.Join(out, "divergence.csv"))
	want := "w,M,loss_step1,loss_step10,loss_step100,loss_step1000,loss_step10000,lowest_loss,nonfinite_at_step"
	if len(rows) != 5 || strings.Join(rows[0], ",") != want {
		t.Fatalf("divergence.csv = %v, want the header %s and 4 runs", rows, want)
	}
	curves := testutil.ReadCSV(t, filepath.Join(out, "divergence_losses.csv"))
	if len(curves) != 1+4*12 {
		t.Fatalf("divergence_losses.csv has %d rows, want a header and 12 steps of 4 runs", len(curves))
	}
	parse := func(s string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i, r := range rows[1:] {
		w, m := parse(r[0]), parse(r[1])
		if r[4] != "NaN" || r[5] != "NaN" || r[6] != "NaN" || r[8] != "0" {
			t.Errorf("run w %v, M %v: %v, want NaN losses past step 12 and no non-finite step", w, m, r)
		}
		lowest := math.Inf(1)
		for _, c := range curves[1+12*i : 1+12*(i+1)] {
			if parse(c[0]) != w || parse(c[1]) != m {
				t.Fatalf("loss row %v under run w %v, M %v", c, w, m)
			}
			loss := parse(c[3])
			lowest = math.Min(lowest, loss)
			if c[2] == "1" && loss != parse(r[2]) || c[2] == "10" && loss != parse(r[3]) {
				t.Errorf("run w %v, M %v: step %s's loss %v differs from the table's %v", w, m, c[2], loss, r[2:4])
			}
			if w > 0 && loss < math.Log(w/m)-1e-5 {
				t.Errorf("run w %v, M %v, step %s: loss %v below the bound log(w/M) = %v", w, m, c[2], loss, math.Log(w/m))
			}
		}
		if got := parse(r[7]); math.Abs(got-lowest) > 1e-12*math.Abs(lowest) {
			t.Errorf("run w %v, M %v: lowest loss %v, want the lowest step's %v", w, m, got, lowest)
		}
	}
	if cfg := testutil.PNGConfig(t, filepath.Join(out, "divergence_density.png")); cfg.Width != 2*(2*48+1) || cfg.Height != 2*(2*48+1) {
		t.Errorf("divergence_density.png is %d×%d, want two bands of two 48×48 cells", cfg.Width, cfg.Height)
	}
	if _, err := os.Stat(filepath.Join(out, "divergence_losses.png")); err != nil {
		t.Error(err)
	}
}

// A 2×2 grid: one row per t, one column per M in the table, and a
// picture of two bands of two 48×48 cells with grey separators (2 pixels
// a cell); w = 0 with M = 1, the paper's unstable corner, is recorded
// either way (diverged or not) without failing the study.
func TestGridStudyWritesEveryCell(t *testing.T) {
	out := t.TempDir()
	toy := ToySet{Data: "25gaussians", Points: 256, Epochs: 1}
	if err := study(out).Grid(GridOptions{Kind: "wm", ToySet: toy, Values: []float64{0, 1}, M: []int{1, 4}}); err != nil {
		t.Fatal(err)
	}
	rows := testutil.ReadCSV(t, filepath.Join(out, "grid_wm.csv"))
	if len(rows) != 5 || strings.Join(rows[0], ",") != "w,M,mse,diverged_at_step" {
		t.Fatalf("grid_wm.csv = %v, want a header and 4 cells", rows)
	}
	want := [][2]string{{"0", "1"}, {"0", "4"}, {"1", "1"}, {"1", "4"}}
	for i, r := range rows[1:] {
		if r[0] != want[i][0] || r[1] != want[i][1] {
			t.Errorf("row %d = %v, want w %s, M %s", i+1, r, want[i][0], want[i][1])
		}
	}
	if cfg := testutil.PNGConfig(t, filepath.Join(out, "grid_wm.png")); cfg.Width != 2*(2*48+1) || cfg.Height != 2*(2*48+1) {
		t.Errorf("grid_wm.png is %d×%d, want two bands of two 48×48 cells at 2 pixels a point", cfg.Width, cfg.Height)
	}
	if err := study(t.TempDir()).Grid(GridOptions{Kind: "wm", ToySet: toy, Values: []float64{1}, M: []int{0}}); err == nil || !strings.Contains(err.Error(), "M = 0") {
		t.Errorf("M = 0: error %v, want one naming M", err)
	}
	if err := study(t.TempDir()).Grid(GridOptions{Kind: "mw", ToySet: toy, Values: []float64{1}, M: []int{1}}); err == nil || !strings.Contains(err.Error(), `"mw"`) {
		t.Errorf("kind mw: error %v, want one naming it", err)
	}
}

// A grid study run again with the same flags reads its finished cells
// from OUT/cells instead of training them again: a cell file changed by
// hand (its MSE 123.5, or NaN and an infinite energy, as a collapsed run
// leaves) shows in the table, and the picture stays whole. Other settings
// (more training points) do not reuse the files; a damaged file is named.
func TestGridStudyResumesFromItsCells(t *testing.T) {
	out := t.TempDir()
	grid := func(points int) error {
		toy := ToySet{Data: "25gaussians", Points: points, Epochs: 1}
		return study(out).Grid(GridOptions{Kind: "tm", ToySet: toy, Values: []float64{1}, M: []int{1, 4}})
	}
	if err := grid(256); err != nil {
		t.Fatal(err)
	}
	cells, err := filepath.Glob(filepath.Join(out, "cells", "*.json"))
	if err != nil || len(cells) != 2 {
		t.Fatalf("cell files %v (%v), want one per cell", cells, err)
	}
	edit := func(path string, change func(*cellResult)) {
		t.Helper()
		editCell(t, path, func(r *cellResult) {
			if len(r.Energies) != 48*48 || r.AdamEpsilon != 1e-8 {
				t.Fatalf("%s holds %d grid energies and Adam ε %v, want 48² and the default 1e-8", path, len(r.Energies), r.AdamEpsilon)
			}
			change(r)
		})
	}
	byM := map[string]string{}
	for _, c := range cells {
		byM[strings.Split(filepath.Base(c), "-")[2]] = c
	}
	edit(byM["M1"], func(r *cellResult) { r.MSE = 123.5 })
	edit(byM["M4"], func(r *cellResult) { r.MSE, r.Energies[0] = float(math.NaN()), float(math.Inf(1)) })
	if err := grid(256); err != nil {
		t.Fatal(err)
	}
	rows := testutil.ReadCSV(t, filepath.Join(out, "grid_tm.csv"))
	if len(rows) != 3 || rows[1][2] != "123.5" || rows[2][2] != "NaN" {
		t.Errorf("grid_tm.csv after the rerun = %v, want the edited cells' MSEs 123.5 and NaN", rows)
	}
	if _, err := os.Stat(filepath.Join(out, "grid_tm.png")); err != nil {
		t.Error(err)
	}

	if err := grid(384); err != nil { // new cells beside the old
		t.Fatal(err)
	}
	if all, _ := filepath.Glob(filepath.Join(out, "cells", "*.json")); len(all) != 4 {
		t.Errorf("%d cell files after a study with more points, want 4 (2 new)", len(all))
	}
	if err := os.WriteFile(byM["M1"], []byte(`{"mse": 1, "grid_energies": [1, 2]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := grid(256); err == nil || !strings.Contains(err.Error(), byM["M1"]) {
		t.Errorf("a cell file with 2 grid energies: error %v, want one naming it", err)
	}
}

// editCell rewrites the cell file at path with change applied, as a
// person editing it by hand would.
func editCell(t *testing.T, path string, change func(*cellResult)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r cellResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	change(&r)
	if data, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
