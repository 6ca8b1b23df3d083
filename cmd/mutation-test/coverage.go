package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A block is one covered span of a coverage profile, in one file.
type block struct{ startLine, startCol, endLine, endCol int }

// contains reports whether (line, col) lies in the block.
func (b block) contains(line, col int) bool {
	after := line > b.startLine || line == b.startLine && col >= b.startCol
	before := line < b.endLine || line == b.endLine && col < b.endCol
	return after && before
}

// coverage maps a file's base name to the blocks `go test` ran at least
// once.
type coverage map[string][]block

// covered returns the test for findMutants of the file named base.
func (c coverage) covered(base string) func(line, col int) bool {
	blocks := c[base]
	return func(line, col int) bool {
		for _, b := range blocks {
			if b.contains(line, col) {
				return true
			}
		}
		return false
	}
}

// merge adds other's blocks to c.
func (c coverage) merge(other coverage) {
	for file, blocks := range other {
		c[file] = append(c[file], blocks...)
	}
}

// A testRun is what one of the package's tests did alone: the blocks it
// ran and how long it took.
type testRun struct {
	Name    string
	Seconds float64
	Blocks  coverage
}

// coverageByTest builds the package's tests once, with coverage, and runs
// each test alone. A mutant then needs only the tests that reach it: a
// test that never runs the edited code cannot tell it from the original.
// An error means a test fails unmutated (or the tests do not build).
func coverageByTest(o options, pkg goPackage, tmp string, log io.Writer) ([]testRun, error) {
	bin := filepath.Join(tmp, "package.test")
	build := exec.Command("go", "test", "-c", "-cover", "-ldflags=-w", "-o", bin, ".")
	build.Dir = pkg.Dir
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the tests: %w\n%s", err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, nil // no test files: nothing is covered
	}
	listed, err := exec.Command(bin, "-test.list", ".").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the tests: %w", commandError(err))
	}
	var runs []testRun
	for _, name := range strings.Fields(string(listed)) {
		if strings.HasPrefix(name, "Benchmark") {
			continue // -test.run does not run benchmarks
		}
		profile := filepath.Join(tmp, name+".cover")
		cmd := exec.Command(bin, "-test.run", "^"+name+"$", "-test.count=1", "-test.timeout=30m",
			"-test.coverprofile="+profile)
		cmd.Dir = pkg.Dir // tests read their testdata relative to it
		cmd.Env = append(os.Environ(), "EDLEBM_TEST_BACKEND="+o.backend)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s alone: %w\n%s", name, err, bytes.TrimSpace(out))
		}
		run := testRun{Name: name, Seconds: time.Since(start).Seconds()}
		if run.Blocks, err = readCoverage(profile, pkg.ImportPath); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "  %s: %.1f s\n", name, run.Seconds)
		runs = append(runs, run)
	}
	return runs, nil
}

// readCoverage parses a profile written by `go test -coverprofile` for
// the package importPath: lines "importPath/file.go:L.C,L.C statements count".
func readCoverage(profile, importPath string) (coverage, error) {
	f, err := os.Open(profile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cov := coverage{}
	scanner := bufio.NewScanner(f)
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		if n == 1 && strings.HasPrefix(line, "mode:") {
			continue
		}
		b, file, count, err := parseProfileLine(line)
		if err != nil {
			return nil, fmt.Errorf("coverage profile %s line %d: %w", profile, n, err)
		}
		if count > 0 && path.Dir(file) == importPath {
			cov[path.Base(file)] = append(cov[path.Base(file)], b)
		}
	}
	return cov, scanner.Err()
}

func parseProfileLine(line string) (b block, file string, count int, err error) {
	colon := strings.LastIndex(line, ":")
	fields := strings.Fields(line[colon+1:])
	if colon < 0 || len(fields) != 3 {
		return b, "", 0, fmt.Errorf("%q: want FILE:L.C,L.C STATEMENTS COUNT", line)
	}
	if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.startLine, &b.startCol, &b.endLine, &b.endCol); err != nil {
		return b, "", 0, fmt.Errorf("%q: span: %w", line, err)
	}
	if count, err = strconv.Atoi(fields[2]); err != nil {
		return b, "", 0, fmt.Errorf("%q: count: %w", line, err)
	}
	return b, line[:colon], count, nil
}
