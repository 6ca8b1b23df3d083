package training

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type record struct {
	Step int64   `json:"step"`
	Loss float64 `json:"loss"`
}

func stepOf(r record) int64 { return r.Step }

// linesOf reads path line by line, independently of Log.
func linesOf(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		var r record
		if err := json.Unmarshal(scanner.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", scanner.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

func steps(recs []record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Step)
	}
	return out
}

// TestLogResumesAtTheCheckpoint: a run logs steps 1–5, is resumed from a
// checkpoint at step 3 and redoes steps 4–6: the file holds each step
// once, in order, with the redone values.
func TestLogResumesAtTheCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), MetricsFile)
	log, kept, err := OpenLog(path, 0, stepOf)
	if err != nil || len(kept) != 0 {
		t.Fatalf("new log: %v records, %v", kept, err)
	}
	for s := int64(1); s <= 5; s++ {
		if err := log.Append(record{s, float64(s)}); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()

	log, kept, err = OpenLog(path, 3, stepOf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(steps(kept), []int64{1, 2, 3}) {
		t.Errorf("resumed at 3 with steps %v, want 1 2 3", steps(kept))
	}
	if got := steps(linesOf(t, path)); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("file after resuming holds steps %v, want 1 2 3", got)
	}
	for s := int64(4); s <= 6; s++ {
		log.Append(record{s, 10 * float64(s)})
	}
	log.Close()
	want := []record{{1, 1}, {2, 2}, {3, 3}, {4, 40}, {5, 50}, {6, 60}}
	if got := linesOf(t, path); !slices.Equal(got, want) {
		t.Errorf("file holds %v, want %v", got, want)
	}
}

// TestLogDropsALineCutShort: a crash in the middle of a line leaves it
// half written; resuming keeps the whole lines before it and rewrites the
// file without it.
func TestLogDropsALineCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), MetricsFile)
	os.WriteFile(path, []byte(`{"step":1,"loss":0.5}`+"\n"+`{"step":2,"loss":0.25}`+"\n"+`{"step":3,"lo`), 0o644)
	log, kept, err := OpenLog(path, 10, stepOf)
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	want := []record{{1, 0.5}, {2, 0.25}}
	if !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if got := linesOf(t, path); !slices.Equal(got, want) {
		t.Errorf("file holds %v, want %v", got, want)
	}
}

// FuzzOpenLog: a damaged metrics file of a run being resumed gives its
// steps up to the checkpoint or an error naming it, never a panic, and
// the file left behind reads back as what was returned.
func FuzzOpenLog(f *testing.F) {
	f.Add([]byte(`{"step":1,"loss":3.5}`+"\n"+`{"step":2}`+"\n"), int64(1))
	f.Add([]byte(`{"step":1}`+"\n"+`{"step":`), int64(2))
	f.Add([]byte("\x00\xff{}[]"), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, upTo int64) {
		path := filepath.Join(t.TempDir(), MetricsFile)
		os.WriteFile(path, data, 0o644)
		log, recs, err := OpenLog(path, upTo, stepOf)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			return
		}
		log.Close()
		for _, r := range recs {
			if r.Step > upTo {
				t.Errorf("step %d kept, beyond %d", r.Step, upTo)
			}
		}
		if got := linesOf(t, path); !slices.Equal(got, recs) {
			t.Errorf("file holds %v, returned %v", got, recs)
		}
	})
}
