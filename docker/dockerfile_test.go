// Package docker holds the image's Dockerfile; its test checks what can be
// checked without a Docker engine (none runs where the project is built).
package docker

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line      int
	cmd, rest string
}

func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var pending strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if pending.Len() == 0 && (text == "" || strings.HasPrefix(text, "#")) {
			continue
		}
		if pending.Len() == 0 {
			start = n
		}
		if cont, ok := strings.CutSuffix(text, "\\"); ok {
			pending.WriteString(cont + " ")
			continue
		}
		pending.WriteString(text)
		cmd, rest, _ := strings.Cut(pending.String(), " ")
		out = append(out, instruction{start, strings.ToUpper(cmd), strings.TrimSpace(rest)})
		pending.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var variable = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// commands are the programs `go build ./cmd/...` makes.
func commands(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestDockerfile(t *testing.T) {
	instructions := parseDockerfile(t, "Dockerfile")
	globalArgs := map[string]bool{} // ARGs before the first FROM: the only ones FROM sees
	var stages []string
	seenFrom := false
	cmds := commands(t)
	for _, in := range instructions {
		switch in.cmd {
		case "ARG":
			if !seenFrom {
				name, _, _ := strings.Cut(in.rest, "=")
				globalArgs[name] = true
			}
		case "FROM":
			seenFrom = true
			for _, m := range variable.FindAllStringSubmatch(in.rest, -1) {
				if !globalArgs[m[1]] {
					t.Errorf("line %d: FROM uses $%s, which no ARG declares before the first FROM: Docker leaves it blank", in.line, m[1])
				}
			}
			if _, name, ok := strings.Cut(strings.ToLower(in.rest), " as "); ok {
				stages = append(stages, strings.TrimSpace(name))
			}
		case "COPY":
			for _, field := range strings.Fields(in.rest) {
				if from, ok := strings.CutPrefix(field, "--from="); ok && !slices.Contains(stages, from) {
					t.Errorf("line %d: COPY --from=%s names no earlier stage (have %v)", in.line, from, stages)
				}
			}
		case "ENTRYPOINT":
			var argv []string
			if err := json.Unmarshal([]byte(in.rest), &argv); err != nil || len(argv) == 0 {
				t.Fatalf("line %d: ENTRYPOINT %s: want a JSON array (exec form): %v", in.line, in.rest, err)
			}
			if !slices.Contains(cmds, argv[0]) {
				t.Errorf("line %d: ENTRYPOINT runs %s, which is not one of the built commands %v", in.line, argv[0], cmds)
			}
		}
	}
	if len(stages) == 0 || !seenFrom {
		t.Fatalf("Dockerfile: stages %v: want a named build stage and a runtime stage", stages)
	}

	// Every --entrypoint the README shows is a built command.
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`--entrypoint (\S+)`).FindAllStringSubmatch(string(readme), -1) {
		if !slices.Contains(cmds, m[1]) {
			t.Errorf("README.md: --entrypoint %s is not one of the built commands %v", m[1], cmds)
		}
	}
}

func TestDockerignoreKeepsRunsOut(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	for _, want := range []string{".git", "runs", "out"} {
		if !slices.Contains(lines, want) {
			t.Errorf(".dockerignore does not exclude %s: COPY . . would send it into the build", want)
		}
	}
}

// TestDockerignoreCoversGitignore checks that .dockerignore keeps out of
// the build context everything .gitignore keeps out of the repository (a
// .gitignore pattern without a slash inside applies at any depth, where
// .dockerignore needs **/ for that).
func TestDockerignoreCoversGitignore(t *testing.T) {
	read := func(name string) []string {
		data, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		var patterns []string
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				patterns = append(patterns, line)
			}
		}
		return patterns
	}
	docker := read(".dockerignore")
	for _, git := range read(".gitignore") {
		want := strings.TrimSuffix(git, "/")
		if anchored, ok := strings.CutPrefix(want, "/"); ok {
			want = anchored
		} else if !strings.Contains(want, "/") {
			want = "**/" + want
		}
		if !slices.Contains(docker, want) {
			t.Errorf(".gitignore has %s, and .dockerignore lacks %s: COPY . . would send it into the build", git, want)
		}
	}
}
