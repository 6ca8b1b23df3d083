package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestFindMutants checks the mutants found in small sources, each against
// the edits written out by hand.
func TestFindMutants(t *testing.T) {
	const graphImports = "package p\n\nimport . \"github.com/gomlx/gomlx/pkg/core/graph\"\n\n"
	tests := []struct {
		name, src string
		want      []string // "description: mutated line"
	}{
		{"Go operators", "package p\n\nfunc f(a, b float64, ok bool) bool {\n\treturn a+b < 2.5 && !ok\n}\n", []string{
			"+ → -: return a-b < 2.5 && !ok",
			"< → <=: return a+b <= 2.5 && !ok",
			"2.5 → 2×2.5: return a+b < (2*2.5) && !ok",
			"&& → ||: return a+b < 2.5 || !ok",
			"!ok → ok: return a+b < 2.5 && (ok)",
		}},
		{"a string concatenation is left alone", "package p\n\nfunc f(s string) string {\n\treturn \"a\" + s\n}\n", nil},
		{"constants are left alone, their uses are not", "package p\n\nconst c = 1.5 * 2\n\nfunc f(x float64) float64 {\n\treturn -x\n}\n", []string{
			"-x → x: return (x)",
		}},
		{"graph operations, dot-imported", graphImports + "func f(x *Node) *Node {\n\treturn Add(Neg(x), ReduceSum(x, -1))\n}\n", []string{
			"Add → Sub: return Sub(Neg(x), ReduceSum(x, -1))",
			"Neg(x) → x: return Add((x), ReduceSum(x, -1))",
			"ReduceSum → ReduceMean: return Add(Neg(x), ReduceMean(x, -1))",
			"-1 → 1: return Add(Neg(x), ReduceSum(x, (1)))",
		}},
		{"Where's branches and a scalar op with type arguments", graphImports + "func f(c, a, b *Node) *Node {\n\treturn Where(c, a, MulScalar[float64](b, 2))\n}\n", []string{
			"Where(c, a, b) → Where(c, b, a): return Where(c, MulScalar[float64](b, 2), a)",
			"MulScalar → DivScalar: return Where(c, a, DivScalar[float64](b, 2))",
		}},
		{"graph package imported by name", "package p\n\nimport \"github.com/gomlx/gomlx/pkg/core/graph\"\n\nfunc f(x *graph.Node) *graph.Node {\n\treturn graph.StopGradient(x)\n}\n", []string{
			"StopGradient(x) → x: return (x)",
		}},
		{"a function of another package with a graph op's name", "package p\n\nimport \"math\"\n\nfunc f(x float64) float64 {\n\treturn math.Exp(x)\n}\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			muts, err := findMutants("p.go", []byte(tc.src), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range muts {
				lines := strings.Split(string(m.apply([]byte(tc.src))), "\n")
				got = append(got, m.Description+": "+strings.TrimSpace(lines[m.Line-1]))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestCoverageLimitsMutants checks that only positions inside covered
// blocks of a real profile line get mutants.
func TestCoverageLimitsMutants(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "cover.out")
	// Line 4 of p.go covered from column 2 to the end of line 4; line 7 ran 0 times.
	content := "mode: set\nexample.com/m/p/p.go:4.2,4.30 1 1\nexample.com/m/p/p.go:7.2,7.30 1 0\nexample.com/m/q/p.go:7.2,7.30 1 1\n"
	if err := os.WriteFile(profile, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	cov, err := readCoverage(profile, "example.com/m/p")
	if err != nil {
		t.Fatal(err)
	}
	src := "package p\n\nfunc f(a, b int) int {\n\treturn a + b\n}\nfunc g(a, b int) int {\n\treturn a * b\n}\n"
	muts, err := findMutants("p.go", []byte(src), cov.covered("p.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(muts) != 1 || muts[0].Line != 4 || muts[0].Description != "+ → -" {
		t.Errorf("mutants %+v, want only line 4's + → -", muts)
	}
	if _, err := readCoverage(profile+".missing", "example.com/m/p"); err == nil {
		t.Error("a missing profile: no error")
	}
	bad := filepath.Join(dir, "bad.out")
	if err := os.WriteFile(bad, []byte("mode: set\np.go:4.2 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readCoverage(bad, "example.com/m/p"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a malformed profile line: error %v, want one naming line 2", err)
	}
}

// TestRunOnASmallModule runs the whole command on a module written here,
// whose tests catch some mutants and not others, each outcome known in
// advance, then runs it again to check the cache answers without testing.
func TestRunOnASmallModule(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/calc\n\ngo 1.21\n",
		"calc.go": `package calc

// Mean's 0.0 doubled is still 0 (an equivalent mutant, lives); its / is caught.
func Mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Clamp's < → <= changes nothing at x == lo (equivalent, lives).
func Clamp(x, lo float64) float64 {
	if x < lo {
		return lo
	}
	return x
}

// Join's + → - does not build (not viable).
func Join(a, b string) string { return a + b }

// Untested has no test: no mutants.
func Untested(a, b float64) float64 { return a * b }
`,
		"calc_test.go": `package calc

import (
	"os"
	"testing"
)

func TestCalc(t *testing.T) {
	if Mean([]float64{1, 2, 3}) != 2 || Clamp(0, 1) != 1 || Clamp(2, 1) != 2 || Join("a", "b") != "ab" {
		t.Fatal("wrong")
	}
}

// TestElsewhere runs none of calc.go: mutants must not run it. Each run
// leaves a line in $CALC_MARKER.
func TestElsewhere(t *testing.T) {
	f, err := os.OpenFile(os.Getenv("CALC_MARKER"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("ran\n")
	f.Close()
}
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(t.TempDir(), "cache.jsonl")
	out := filepath.Join(t.TempDir(), "report.md")
	marker := filepath.Join(t.TempDir(), "elsewhere-ran")
	t.Setenv("CALC_MARKER", marker)
	var log bytes.Buffer
	if err := run([]string{"-cache", cache, "-out", out, dir}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	// Once, for its coverage: no mutant is at a position it reaches.
	if ran, err := os.ReadFile(marker); err != nil || string(ran) != "ran\n" {
		t.Errorf("TestElsewhere's marks %q (%v), want one: it ran for mutants that it cannot reach", ran, err)
	}
	report, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// 4 mutants: 0.0 doubled (lived), / (killed), < (lived), + in Join (not viable).
	if want := "| example.com/calc | 1 | 4 | 1 | 2 | 0 | 1 | 33.3 % |"; !strings.Contains(string(report), want) {
		t.Errorf("report lacks %q:\n%s\nlog:\n%s", want, report, log.String())
	}
	for _, survivor := range []string{"| calc.go:5 | 0.0 → 2×0.0 | `s := 0.0` |", "| calc.go:14 | < → <= | `if x < lo {` |"} {
		if !strings.Contains(string(report), survivor) {
			t.Errorf("report lacks survivor %q:\n%s", survivor, report)
		}
	}
	before, err := os.ReadFile(filepath.Join(dir, "calc.go"))
	if err != nil || !strings.Contains(string(before), "return s / float64(len(xs))") {
		t.Errorf("the source was changed on disk (%v)", err)
	}

	// Again: every result from the cache, so the same report.
	log.Reset()
	out2 := filepath.Join(t.TempDir(), "report.md")
	if err := run([]string{"-cache", cache, "-out", out2, dir}, &log); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(out2)
	if err != nil {
		t.Fatal(err)
	}
	// The unmutated tests' seconds, the last cell, differ from run to run.
	seconds := regexp.MustCompile(`\| [0-9.]+ \|\n`)
	if seconds.ReplaceAllString(string(again), "") != seconds.ReplaceAllString(string(report), "") {
		t.Errorf("second run from the cache:\n%s\nfirst:\n%s", again, report)
	}
	if strings.Contains(log.String(), "ETA 0s") || !strings.Contains(log.String(), "ETA –") {
		t.Errorf("second run tested mutants again instead of using the cache:\n%s", log.String())
	}

	// Changed tests invalidate the cached outcomes: a third run tests again.
	f, err := os.OpenFile(filepath.Join(dir, "calc_test.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n// changed\n")
	f.Close()
	log.Reset()
	if err := run([]string{"-cache", cache, dir}, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "ETA 0s") {
		t.Errorf("after the tests changed, the third run took outcomes from the cache:\n%s", log.String())
	}
}

// TestRunRejectsBadArguments checks the errors for flags and packages.
func TestRunRejectsBadArguments(t *testing.T) {
	broken := t.TempDir()
	os.WriteFile(filepath.Join(broken, "go.mod"), []byte("module example.com/b\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(broken, "b.go"), []byte("package b\n\nfunc F() int { return 1 }\n"), 0o644)
	os.WriteFile(filepath.Join(broken, "b_test.go"), []byte("package b\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { t.Fatal(\"fails unmutated\") }\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{nil, "at least one package"},
		{[]string{"-timeout-factor", "0.5", "."}, "-timeout-factor 0.5"},
		{[]string{"-only", "(", "."}, "-only \"(\""},
		{[]string{"-cache", "", broken}, "the unmutated tests fail"},
		{[]string{"-cache", "", filepath.Join(broken, "missing")}, "go list"},
	}
	for _, tc := range tests {
		err := run(tc.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q): error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
