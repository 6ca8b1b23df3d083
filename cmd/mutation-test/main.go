// Command mutation-test measures how many deliberate bugs each package's
// own tests catch. It makes one small edit at a time (a mutant) to a
// package's source, at lines the tests run, and runs the tests that reach
// the edited position (each test's coverage is measured alone first) on the
// edited code through `go test -overlay`, so the working tree is never
// touched:
//
//   - Go operators: + ↔ −, × ↔ ÷, < ↔ ≤, > ↔ ≥, == ↔ !=, && ↔ ||, a unary −
//     or ! dropped, a float literal doubled;
//   - GoMLX graph operations, which Go's operators never see: Add ↔ Sub,
//     Mul ↔ Div, the Scalar forms, Max ↔ Min, Sum ↔ Mean reductions,
//     Exp → Expm1, Log → Log1p, the comparison boundaries, LogicalAnd ↔
//     LogicalOr, Where's branches swapped, and Neg, StopGradient, Sqrt,
//     Square, Abs or LogicalNot left out.
//
// A mutant is killed when the tests fail (or time out), lived when they
// pass, not viable when it does not build. The score is killed ÷ (killed +
// lived). Results are cached by file content (-cache), so an interrupted
// run resumes and an unchanged file is not tested again.
//
//	go run ./cmd/mutation-test -out docs/results/mutation.md ./losses ./nets ./lebm ./density ./eval
//
// The tests run on the backend -backend names (EDLEBM_TEST_BACKEND;
// default SimpleGo, which compiles fastest). docs/testing.md has the
// results and the reason each survivor is left.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mutation-test:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	backend       string
	out           string
	cache         string
	timeoutFactor float64
	only          *regexp.Regexp
}

func run(args []string, log io.Writer) error {
	fs := flag.NewFlagSet("mutation-test", flag.ContinueOnError)
	fs.SetOutput(log)
	var o options
	fs.StringVar(&o.backend, "backend", "go", "backend the tests run on (EDLEBM_TEST_BACKEND): go (SimpleGo) or cpu (XLA CPU)")
	fs.StringVar(&o.out, "out", "", "Markdown report to write (default: print only)")
	defaultCache := filepath.Join(os.TempDir(), "edlebm-mutation-test.jsonl")
	if dir, err := os.UserCacheDir(); err == nil {
		defaultCache = filepath.Join(dir, "edlebm", "mutation-test.jsonl")
	}
	fs.StringVar(&o.cache, "cache", defaultCache, "results of mutants already tested, by file content (\"\": none)")
	fs.Float64Var(&o.timeoutFactor, "timeout-factor", 3, "a mutant's tests time out after this many times their unmutated duration (plus 60 s)")
	only := fs.String("only", "", "test only mutants whose FILE:LINE (file base name) matches this regular expression")
	fs.Usage = func() {
		fmt.Fprintln(log, "usage: mutation-test [flags] PACKAGE...\n\nPACKAGE: a package directory, e.g. ./losses. Flags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("name at least one package, e.g. ./losses")
	}
	if o.timeoutFactor < 1 {
		return fmt.Errorf("-timeout-factor %g: must be at least 1", o.timeoutFactor)
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return fmt.Errorf("-only %q: %w", *only, err)
		}
		o.only = re
	}
	done, err := loadCache(o.cache)
	if err != nil {
		return err
	}
	var reports []packageReport
	for _, pkg := range fs.Args() {
		r, err := testPackage(pkg, o, done, log)
		if err != nil {
			return fmt.Errorf("%s: %w", pkg, err)
		}
		reports = append(reports, r)
	}
	text := markdown(reports, o, time.Now())
	fmt.Fprint(log, "\n", text)
	if o.out != "" {
		return os.WriteFile(o.out, []byte(text), 0o644)
	}
	return nil
}

// Outcomes of one mutant.
const (
	killed    = "killed"
	lived     = "lived"
	timedOut  = "timed out"
	notViable = "not viable"
)

// A result is one mutant's outcome.
type result struct {
	mutant
	Source  string // the mutated line as it was, trimmed
	Outcome string
	Seconds float64
}

// packageReport is what one package's mutants came to.
type packageReport struct {
	Package         string
	Files           int
	Results         []result
	BaselineSeconds float64
}

// count returns how many results had each outcome.
func (r packageReport) count() map[string]int {
	c := map[string]int{}
	for _, res := range r.Results {
		c[res.Outcome]++
	}
	return c
}

// score is killed (timeouts included) ÷ (killed + lived), in percent.
func (r packageReport) score() float64 {
	c := r.count()
	caught := c[killed] + c[timedOut]
	if caught+c[lived] == 0 {
		return 0
	}
	return 100 * float64(caught) / float64(caught+c[lived])
}

// goPackage is what `go list` says of one package.
type goPackage struct {
	Dir, ImportPath                    string
	GoFiles, TestGoFiles, XTestGoFiles []string
}

// testsHash identifies the package's test files' contents: a cached
// outcome holds only for the tests that produced it.
func (p goPackage) testsHash() (string, error) {
	h := sha256.New()
	for _, name := range append(append([]string{}, p.TestGoFiles...), p.XTestGoFiles...) {
		src, err := os.ReadFile(filepath.Join(p.Dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(src))
		h.Write(src)
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

func testPackage(pkgArg string, o options, done map[string]cacheEntry, log io.Writer) (packageReport, error) {
	// go list runs in the package's directory, so that a package of
	// another module (the tests' own) is listed by its module.
	list := exec.Command("go", "list", "-json", ".")
	list.Dir = pkgArg
	listed, err := list.Output()
	if err != nil {
		return packageReport{}, fmt.Errorf("go list: %w", commandError(err))
	}
	var pkg goPackage
	if err := json.Unmarshal(listed, &pkg); err != nil {
		return packageReport{}, fmt.Errorf("go list output: %w", err)
	}
	report := packageReport{Package: pkg.ImportPath, Files: len(pkg.GoFiles)}

	tmp, err := os.MkdirTemp("", "mutation-test-")
	if err != nil {
		return report, err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(log, "%s: running each test alone, unmutated, with coverage\n", pkg.ImportPath)
	start := time.Now()
	tests, err := coverageByTest(o, pkg, tmp, log)
	if err != nil {
		return report, fmt.Errorf("the unmutated tests fail; fix them first: %w", err)
	}
	report.BaselineSeconds = time.Since(start).Seconds()
	cov := coverage{}
	for _, t := range tests {
		cov.merge(t.Blocks)
	}
	testsHash, err := pkg.testsHash()
	if err != nil {
		return report, err
	}

	todo, err := pendingMutants(pkg, cov, testsHash, o)
	if err != nil {
		return report, err
	}

	var spent time.Duration
	ran := 0
	for i, p := range todo {
		key := p.m.key(p.hash)
		res := result{mutant: p.m, Source: p.source}
		if entry, ok := done[key]; ok {
			res.Outcome, res.Seconds = entry.Outcome, entry.Seconds
		} else {
			t0 := time.Now()
			res.Outcome, err = testMutant(o, pkg.Dir, p.m, p.src, tmp, testsReaching(tests, p.m, o.timeoutFactor))
			if err != nil {
				return report, err
			}
			res.Seconds = time.Since(t0).Seconds()
			spent += time.Since(t0)
			ran++
			if err := appendCache(o.cache, cacheEntry{Key: key, Outcome: res.Outcome, Seconds: res.Seconds}); err != nil {
				return report, err
			}
			done[key] = cacheEntry{Key: key, Outcome: res.Outcome, Seconds: res.Seconds}
		}
		report.Results = append(report.Results, res)
		eta := "–"
		if ran > 0 {
			eta = (spent / time.Duration(ran) * time.Duration(len(todo)-i-1)).Round(time.Second).String()
		}
		c := report.count()
		fmt.Fprintf(log, "[%d/%d] %s:%d %s: %s (%.1f s) — killed %d, lived %d, not viable %d; ETA %s\n",
			i+1, len(todo), filepath.Base(p.m.File), p.m.Line, p.m.Description, res.Outcome, res.Seconds,
			c[killed]+c[timedOut], c[lived], c[notViable], eta)
	}
	return report, nil
}

// pending is a mutant to test, with its file's source, the hash that keys
// its cached outcome, and its line as written.
type pending struct {
	m      mutant
	src    []byte
	hash   string
	source string
}

// pendingMutants lists the mutants of pkg's covered lines that -only
// selects.
func pendingMutants(pkg goPackage, cov coverage, testsHash string, o options) ([]pending, error) {
	var todo []pending
	for _, name := range pkg.GoFiles {
		file := filepath.Join(pkg.Dir, name)
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		muts, err := findMutants(file, src, cov.covered(name))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(src)
		hash := hex.EncodeToString(sum[:8]) + "+tests@" + testsHash
		lines := strings.Split(string(src), "\n")
		for _, m := range muts {
			if o.only != nil && !o.only.MatchString(fmt.Sprintf("%s:%d", name, m.Line)) {
				continue
			}
			todo = append(todo, pending{m, src, hash, strings.TrimSpace(lines[m.Line-1])})
		}
	}
	return todo, nil
}

// A testSelection is the tests a mutant needs, as a -run pattern, and how
// long they may take.
type testSelection struct {
	pattern string
	timeout time.Duration
}

// testsReaching selects the tests whose coverage holds the mutant's
// position; they time out after factor times their unmutated duration,
// plus a minute (test binaries start slowly on a busy machine).
func testsReaching(tests []testRun, m mutant, factor float64) testSelection {
	var names []string
	seconds := 0.0
	base := filepath.Base(m.File)
	for _, t := range tests {
		if t.Blocks.covered(base)(m.Line, m.Col) {
			names = append(names, t.Name)
			seconds += t.Seconds
		}
	}
	return testSelection{
		pattern: "^(" + strings.Join(names, "|") + ")$",
		timeout: time.Duration((factor*seconds + 60) * float64(time.Second)),
	}
}

// testMutant runs the selected tests with file replaced by the mutant.
func testMutant(o options, dir string, m mutant, src []byte, tmp string, sel testSelection) (string, error) {
	mutated := filepath.Join(tmp, "mutant.go")
	if err := os.WriteFile(mutated, m.apply(src), 0o644); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {m.File: mutated}})
	if err != nil {
		return "", err
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return "", err
	}
	out, err := goTest(o, dir, sel.timeout, "-failfast", "-run="+sel.pattern, "-overlay="+overlayFile)
	switch {
	case err == nil:
		return lived, nil
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return notViable, nil
	case bytes.Contains(out, []byte("panic: test timed out")) || errors.Is(err, context.DeadlineExceeded):
		return timedOut, nil
	}
	return killed, nil
}

// goTest runs `go test -count=1 FLAGS .` in dir on the chosen backend;
// timeout 0 means go test's default.
func goTest(o options, dir string, timeout time.Duration, flags ...string) ([]byte, error) {
	ctx := context.Background()
	args := []string{"test", "-count=1", "-ldflags=-w"} // -w: links in half the time
	if timeout > 0 {
		args = append(args, "-timeout="+timeout.String())
		// go test's own timeout panics the test binary; this one stops a
		// mutant that hangs the build or go test itself.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout+time.Minute)
		defer cancel()
	}
	args = append(append(args, flags...), ".")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "EDLEBM_TEST_BACKEND="+o.backend)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, err
}

// commandError adds a failed command's standard error to its error.
func commandError(err error) error {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(exitErr.Stderr))
	}
	return err
}
