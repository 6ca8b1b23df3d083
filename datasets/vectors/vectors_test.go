package vectors

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/npy"
)

// sklearnData is where Debian's python3-sklearn keeps its bundled data sets
// (scripts/test.sh installs it).
const sklearnData = "/usr/lib/python3/dist-packages/sklearn/datasets/data"

// numpyStats returns the column means and standard deviations NumPy
// computes of the file (np.loadtxt with the given skiprows, the last
// column dropped).
func numpyStats(t *testing.T, path string, skip int) (mean, std []float64) {
	t.Helper()
	script := `import sys, numpy as np
x = np.loadtxt(sys.argv[1], delimiter=",", skiprows=int(sys.argv[2]))[:, :-1]
print(" ".join(repr(float(v)) for v in x.mean(0))); print(" ".join(repr(float(v)) for v in x.std(0)))`
	out, err := exec.Command("/usr/bin/python3", "-c", script, path, strconv.Itoa(skip)).Output()
	if err != nil {
		t.Fatalf("NumPy: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	parse := func(line string) []float64 {
		var v []float64
		for _, f := range strings.Fields(line) {
			x, _ := strconv.ParseFloat(f, 64)
			v = append(v, x)
		}
		return v
	}
	return parse(lines[0]), parse(lines[1])
}

// TestReadScikitLearnFiles reads scikit-learn's bundled real data sets as a
// user's files are read — a line of counts skipped, the class the last
// column — and checks the shapes and every column's mean and standard
// deviation against NumPy's reading of the same files.
func TestReadScikitLearnFiles(t *testing.T) {
	for _, tc := range []struct {
		file       string
		skip       int
		n, d       int
		firstLabel string
	}{
		{"wine_data.csv", 1, 178, 13, "0"},
		{"breast_cancer.csv", 1, 569, 30, "0"},
		{"digits.csv.gz", 0, 1797, 64, "0"},
		{"iris.csv", 1, 150, 4, "0"},
	} {
		path := filepath.Join(sklearnData, tc.file)
		s, err := Read(path, ReadOptions{SkipRows: tc.skip, Label: "last"})
		if err != nil {
			t.Fatal(err)
		}
		if s.N != tc.n || s.D != tc.d || len(s.Labels) != tc.n || s.Labels[0] != tc.firstLabel || s.Name != tc.file {
			t.Errorf("%s: %d × %d, %d labels (first %q), name %q; want %d × %d", tc.file, s.N, s.D, len(s.Labels), s.Labels[0], s.Name, tc.n, tc.d)
		}
		mean, std := numpyStats(t, path, tc.skip)
		z := Fit(s)
		for j := range s.D {
			if math.Abs(z.Mean[j]-mean[j]) > 1e-9*(1+math.Abs(mean[j])) || std[j] > 0 && math.Abs(z.Std[j]-std[j]) > 1e-9*std[j] {
				t.Errorf("%s column %d: mean %v, std %v; NumPy %v, %v", tc.file, j+1, z.Mean[j], z.Std[j], mean[j], std[j])
			}
		}
	}
}

// writeText writes text to a file called name in a fresh folder.
func writeText(t *testing.T, name, text string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadCSVHeaderAndLabels checks the header rule and each way of
// naming the label column.
func TestReadCSVHeaderAndLabels(t *testing.T) {
	text := "a,b,kind\n1,2,cat\n3,4.5,dog\n"
	for _, label := range []string{"kind", "3", "last"} {
		s, err := Read(writeText(t, "x.csv", text), ReadOptions{Label: label})
		if err != nil {
			t.Fatal(err)
		}
		if s.N != 2 || s.D != 2 || !slices.Equal(s.Values, []float64{1, 2, 3, 4.5}) || !slices.Equal(s.Columns, []string{"a", "b"}) || !slices.Equal(s.Labels, []string{"cat", "dog"}) {
			t.Errorf("label %q: %+v", label, s)
		}
	}
	s, err := Read(writeText(t, "x.csv", "1, 2\n3, 4\n"), ReadOptions{})
	if err != nil || s.Columns != nil || !slices.Equal(s.Values, []float64{1, 2, 3, 4}) {
		t.Errorf("no header: %+v, %v", s, err)
	}
}

// TestReadErrors checks that bad files are refused, naming the file and,
// where there is one, the line and column.
func TestReadErrors(t *testing.T) {
	nan := npy.Encode(npy.Array{Shape: []int{2, 2}, Values: []float64{1, 2, math.NaN(), 4}})
	cube := npy.Encode(npy.Array{Shape: []int{1, 1, 2}, Values: []float64{1, 2}})
	two, _ := npy.EncodeNPZ([]string{"a", "b"}, map[string]npy.Array{"a": {Shape: []int{1, 1}, Values: []float64{1}}, "b": {Shape: []int{1, 1}, Values: []float64{2}}})
	for _, tc := range []struct {
		name, file string
		data       string
		o          ReadOptions
		want       string
	}{
		{"ragged row", "x.csv", "a,b,c\n1,2,3\n4,5\n", ReadOptions{}, "line 3: 2 fields, want 3"},
		{"ragged row after skipped lines", "x.csv", "junk\n1,2\n3\n", ReadOptions{SkipRows: 1}, "line 3: 1 fields, want 2"},
		{"a word", "x.csv", "a,b\n1,x\n", ReadOptions{}, `line 2, column 2 (b): "x" is not a number`},
		{"a NaN", "x.csv", "1,2\n3,NaN\n", ReadOptions{}, "line 2, column 2: NaN: want finite numbers"},
		{"an empty field", "x.csv", "1,2\n3,\n", ReadOptions{}, `line 2, column 2: "" is not a number`},
		{"empty file", "x.csv", "", ReadOptions{}, "0 rows of 0 values"},
		{"header only", "x.csv", "a,b\n", ReadOptions{}, "0 rows"},
		{"unknown label", "x.csv", "a,b\n1,2\n", ReadOptions{Label: "c"}, `label column "c"`},
		{"NaN in an array", "x.npy", string(nan), ReadOptions{}, "row 1, column 1: NaN"},
		{"3-D array", "x.npy", string(cube), ReadOptions{}, "shape [1 1 2]: want [N, d]"},
		{"which array", "x.npz", string(two), ReadOptions{}, "arrays [a b]: name the one"},
		{"no such array", "x.npz", string(two), ReadOptions{Array: "c"}, `no array "c"`},
		{"label for .npy", "x.npy", string(cube), ReadOptions{Label: "y"}, "needs a CSV file or an .npz"},
		{"unknown format", "x.txt", "1,2\n", ReadOptions{}, "unknown format"},
		{"skipping past the end", "x.csv", "1,2\n", ReadOptions{SkipRows: 3}, "skipping line 2 of 3"},
	} {
		p := writeText(t, tc.file, tc.data)
		if _, err := Read(p, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", tc.name, err, p, tc.want)
		}
	}
}

// TestNumPyFiles reads an .npy array and an .npz archive with a label
// array.
func TestNumPyFiles(t *testing.T) {
	x := npy.Array{Shape: []int{3, 2}, Values: []float64{1, 2, 3, 4, 5, 6}}
	s, err := Read(writeText(t, "x.npy", string(npy.Encode(x))), ReadOptions{})
	if err != nil || s.N != 3 || s.D != 2 || !slices.Equal(s.Values, x.Values) {
		t.Errorf(".npy: %+v, %v", s, err)
	}
	z, _ := npy.EncodeNPZ([]string{"y", "data"}, map[string]npy.Array{"data": x, "y": {Shape: []int{3}, Values: []float64{0, 1, 2}}})
	s, err = Read(writeText(t, "x.npz", string(z)), ReadOptions{Label: "y"})
	if err != nil || s.N != 3 || !slices.Equal(s.Labels, []string{"0", "1", "2"}) || !slices.Equal(s.Values, x.Values) {
		t.Errorf(".npz: %+v, %v", s, err)
	}
}

// TestSplitStandardizeAndWrite checks the split, that standardised
// training columns have mean 0 and deviation 1 (computed here), that
// Invert undoes Apply, the log-Jacobian, and that each format written is
// read back unchanged.
func TestSplitStandardizeAndWrite(t *testing.T) {
	s, err := Read(filepath.Join(sklearnData, "wine_data.csv"), ReadOptions{SkipRows: 1, Label: "last"})
	if err != nil {
		t.Fatal(err)
	}
	train, test, err := s.Split(0.2, 3)
	if err != nil || len(test) != 36 || len(train) != 142 || !slices.IsSorted(train) || !slices.IsSorted(test) {
		t.Fatalf("split: %d train, %d test, %v", len(train), len(test), err)
	}
	if again, _, _ := s.Split(0.2, 3); !slices.Equal(again, train) {
		t.Error("the same seed split differently")
	}
	tr := s.Subset(train)
	z := Fit(tr)
	u := z.Apply(tr)
	for j := range s.D {
		var m, v float64
		for i := range tr.N {
			m += float64(u[i*s.D+j]) / float64(tr.N)
		}
		for i := range tr.N {
			d := float64(u[i*s.D+j]) - m
			v += d * d / float64(tr.N)
		}
		if math.Abs(m) > 1e-5 || math.Abs(v-1) > 1e-5 {
			t.Errorf("column %d standardised: mean %v, variance %v", j+1, m, v)
		}
	}
	back := z.Invert(u)
	for i, v := range back {
		if math.Abs(v-tr.Values[i]) > 1e-5*(1+math.Abs(tr.Values[i])) {
			t.Fatalf("Invert(Apply) value %d: %v, want %v", i, v, tr.Values[i])
		}
	}
	var logDet float64
	for _, sd := range z.Std {
		logDet += math.Log(1 / sd)
	}
	if math.Abs(z.LogJacobian()-logDet) > 1e-9 {
		t.Errorf("LogJacobian %v, want %v", z.LogJacobian(), logDet)
	}
	if err := z.Check(s.D); err != nil {
		t.Error(err)
	}
	if err := (Standardizer{Mean: []float64{0}, Std: []float64{0}}).Check(1); err == nil {
		t.Error("a zero deviation passed Check")
	}
	tr.Columns = []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11", "c12", "c13"}
	for _, name := range []string{"out.csv", "out.npy", "out.npz"} {
		p := filepath.Join(t.TempDir(), name)
		if err := Write(p, tr); err != nil {
			t.Fatal(err)
		}
		r, err := Read(p, ReadOptions{})
		if err != nil || r.N != tr.N || !slices.Equal(r.Values, tr.Values) || name == "out.csv" && !slices.Equal(r.Columns, tr.Columns) {
			t.Errorf("%s read back: %v", name, err)
		}
	}
}

// FuzzReadCSV: any bytes as a CSV file give finite vectors that fill
// their shape, or an error naming the file; never a panic.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("a,b,kind\n1,2,cat\n3,4.5,dog\n"), "kind", 0)
	f.Add([]byte("3,2,x\n1,2\n3,4\n"), "", 1)
	f.Fuzz(func(t *testing.T, data []byte, label string, skip int) {
		p := filepath.Join(t.TempDir(), "f.csv")
		os.WriteFile(p, data, 0o644)
		s, err := Read(p, ReadOptions{Label: label, SkipRows: skip % 4})
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name %s", err, p)
			}
			return
		}
		if len(s.Values) != s.N*s.D || s.Labels != nil && len(s.Labels) != s.N {
			t.Errorf("%d values for %d × %d, %d labels", len(s.Values), s.N, s.D, len(s.Labels))
		}
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("accepted %v", v)
			}
		}
	})
}

// TestReadDropsAByteOrderMark: a CSV saved by a spreadsheet program with a
// UTF-8 byte-order mark reads its header's first name without it.
func TestReadDropsAByteOrderMark(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bom.csv")
	if err := os.WriteFile(p, []byte("\ufeffalcohol,ash\n13.2,2.4\n12.9,2.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Read(p, ReadOptions{})
	if err != nil || s.Columns[0] != "alcohol" || s.N != 2 {
		t.Fatalf("read %+v, %v; want the columns alcohol and ash, 2 rows", s, err)
	}
}
