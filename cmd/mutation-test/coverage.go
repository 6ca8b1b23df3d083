package main

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
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
