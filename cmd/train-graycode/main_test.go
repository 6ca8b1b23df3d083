package main

import (
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/internal/testutil"
)

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"-steps", "0"}, "flag -steps 0"},
		{[]string{"-hidden", "64,x"}, "flag -hidden 64,x"},
		{[]string{"-set", "toy_bed_epsilon=1.5"}, "ε = 1.5"},
		{[]string{"-set", "toy_method=ed"}, "choose methods with -methods"},
		{[]string{"-methods", "bed,ed"}, `flag -methods: "ed"`},
		{[]string{"-methods", "bcd", "-set", "toy_gibbs_sweeps=0"}, "Gibbs sweeps per step = 0"},
		{[]string{"-data", "spiral9"}, `"spiral9"`},
	} {
		o, err := parseFlags(append(tc.args, "-backend", testutil.BackendName(), "-out", t.TempDir()))
		if err == nil {
			err = run(o)
		}
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%q: error %v, want one mentioning %q", tc.args, err, tc.mention)
		}
	}
}

// A short run writes both heat maps and the MMD table, whose floor (two
// data samples) is below the uniform ceiling.
func TestShortRunWritesPicturesAndTable(t *testing.T) {
	out := t.TempDir()
	o, err := parseFlags([]string{"-backend", testutil.BackendName(), "-data", "8gaussians", "-steps", "20", "-batch", "32",
		"-hidden", "16", "-grid", "20", "-mmd-n", "200", "-out", out})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bed/density.png", "bed/data.png", "bcd/density.png"} {
		f, err := os.Open(filepath.Join(out, "8gaussians", name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() != 400 {
			t.Errorf("%s: %v, width %d; want a 400-pixel PNG (20 cells of 20)", name, err, img.Bounds().Dx())
		}
	}
	table, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []result
	for _, line := range strings.Split(string(table), "\n") {
		if strings.HasPrefix(line, "| 8gaussians |") {
			fields := strings.Split(line, "|")
			row := result{set: strings.TrimSpace(fields[1]), method: strings.TrimSpace(fields[2])}
			for i, v := range []*float64{&row.model, &row.gridded, &row.floor, &row.uniform} {
				if _, err := fmt.Sscan(strings.TrimSpace(fields[3+i]), v); err != nil {
					t.Fatal(err)
				}
			}
			rows = append(rows, row)
		}
	}
	if len(rows) != 2 || rows[0].method != "bed" || rows[1].method != "bcd" || !(rows[0].floor < rows[0].gridded && rows[0].gridded < rows[0].uniform) {
		t.Errorf("results.md:\n%s\nwant rows for bed and bcd on 8gaussians: second data sample < data on the cells < uniform", table)
	}
}

func TestCellOfAndDrawCells(t *testing.T) {
	g := density.Grid{Extent: [4]float64{-2, 2, -2, 2}, Size: 4}
	cells := g.Points()
	for i := 0; i < len(cells); i += 2 {
		if c, ok := cellOf(g, cells[i], cells[i+1]); !ok || c != i/2 {
			t.Errorf("the centre of cell %d falls in cell %d (%v)", i/2, c, ok)
		}
	}
	if _, ok := cellOf(g, 2.5, 0); ok {
		t.Error("a point outside the square has a cell")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		got := regridded(rng, g, []float32{0.2, -1.9, 3, 0})
		if c, ok := cellOf(g, got[0], got[1]); !ok || c != 2 || got[2] != 3 || got[3] != 0 {
			t.Fatalf("regridded = %v: want the first point still in cell 2, the second (outside) unchanged", got)
		}
	}
	// softmax(−e) of e = 0, ln 2, +large: 2/3, 1/3, 0.
	probs := softmaxNeg([]float64{0, math.Ln2, 1e4})
	if math.Abs(probs[0]-2.0/3) > 1e-12 || math.Abs(probs[1]-1.0/3) > 1e-12 || probs[2] != 0 {
		t.Errorf("softmaxNeg = %v, want [2/3 1/3 0]", probs)
	}
	// Draws follow the probabilities: cell 1 and 2 of four, 1:3.
	weights := make([]float64, len(cells)/2)
	weights[1], weights[2] = 0.25, 0.75
	drawn := drawCells(rand.New(rand.NewPCG(1, 2)), g, weights, 4000)
	counts := map[int]int{}
	for i := 0; i < len(drawn); i += 2 {
		c, _ := cellOf(g, drawn[i], drawn[i+1])
		counts[c]++
	}
	if len(counts) != 2 || math.Abs(float64(counts[1])/4000-0.25) > 0.03 {
		t.Errorf("4,000 draws landed in cells %v, want cells 1 and 2 about 1:3", counts)
	}
}
