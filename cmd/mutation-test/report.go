package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A cacheEntry is one tested mutant, one line of the -cache file.
type cacheEntry struct {
	Key     string  `json:"key"`
	Outcome string  `json:"outcome"`
	Seconds float64 `json:"seconds"`
}

// loadCache reads the results of earlier runs; a missing file is empty.
func loadCache(path string) (map[string]cacheEntry, error) {
	done := map[string]cacheEntry{}
	if path == "" {
		return done, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return done, nil
	}
	if err != nil {
		return nil, fmt.Errorf("-cache: %w", err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(nil, 1<<20)
	for n := 1; scanner.Scan(); n++ {
		var e cacheEntry
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			// A run killed mid-write leaves a partial last line; the
			// mutant is simply tested again.
			continue
		}
		switch e.Outcome {
		case killed, lived, timedOut, notViable:
			done[e.Key] = e
		}
	}
	return done, scanner.Err()
}

// appendCache records one result as soon as it is known.
func appendCache(path string, e cacheEntry) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("-cache: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("-cache: %w", err)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("-cache %s: %w", path, err)
	}
	return f.Close()
}

// markdown writes the score table and every surviving mutant.
func markdown(reports []packageReport, o options, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Mutation testing\n\n")
	fmt.Fprintf(&b, "Command: `go run ./cmd/mutation-test -backend %s %s`, %s. Mutants at lines the package's own tests run; score = killed ÷ (killed + lived), a timeout counting as killed.\n\n",
		o.backend, packageArgs(reports), now.UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "| package | files | mutants | killed | lived | timed out | not viable | score | unmutated tests s |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range reports {
		c := r.count()
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %.1f %% | %.1f |\n", shortPackage(r.Package), r.Files,
			len(r.Results), c[killed], c[lived], c[timedOut], c[notViable], r.score(), r.BaselineSeconds)
	}
	for _, r := range reports {
		var survivors []result
		for _, res := range r.Results {
			if res.Outcome == lived {
				survivors = append(survivors, res)
			}
		}
		if len(survivors) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s: %d survivors\n\n| where | mutation | line |\n|---|---|---|\n", shortPackage(r.Package), len(survivors))
		for _, s := range survivors {
			fmt.Fprintf(&b, "| %s:%d | %s | `%s` |\n", filepath.Base(s.File), s.Line,
				escapeCell(s.Description), escapeCell(strings.ReplaceAll(s.Source, "`", "'")))
		}
	}
	return b.String()
}

func packageArgs(reports []packageReport) string {
	var names []string
	for _, r := range reports {
		names = append(names, "./"+shortPackage(r.Package))
	}
	return strings.Join(names, " ")
}

// shortPackage drops the module path: losses, not github.com/…/losses.
func shortPackage(importPath string) string {
	const module = "github.com/edlebm/edlebm/"
	return strings.TrimPrefix(importPath, module)
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
