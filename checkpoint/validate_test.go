package checkpoint

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/ml/context"
)

// savedCheckpoint writes a small real checkpoint (a float32 [3] and an
// int64 [2] variable and a parameter) and returns its folder, metadata
// and data files.
func savedCheckpoint(t testing.TB) (folder, jsonFile, binFile string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ckpt")
	ctx := context.New()
	ctx.SetParam("answer", 42)
	ctx.In("model").VariableWithValue("w", []float32{1, 2, 3})
	ctx.In("model").VariableWithValue("steps", []int64{7, 8})
	if err := Save(ctx, dir, 1); err != nil {
		t.Fatal(err)
	}
	folder, err := Latest(dir)
	if err != nil {
		t.Fatal(err)
	}
	jsons, _ := filepath.Glob(filepath.Join(folder, "*.json"))
	if len(jsons) != 1 {
		t.Fatalf("checkpoint folder holds %v", jsons)
	}
	return folder, jsons[0], strings.TrimSuffix(jsons[0], ".json") + ".bin"
}

// editMetadata rewrites the .json after edit changed its decoded form.
func editMetadata(t *testing.T, file string, edit func(m map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// variable returns Variables[i] of decoded metadata.
func variable(m map[string]any, i int) map[string]any {
	return m["Variables"].([]any)[i].(map[string]any)
}

// variableNamed is the variable of m with that ParameterName.
func variableNamed(t *testing.T, m map[string]any, name string) map[string]any {
	for _, v := range m["Variables"].([]any) {
		if v := v.(map[string]any); v["ParameterName"] == name {
			return v
		}
	}
	t.Fatalf("no variable %s", name)
	return nil
}

// gzipBin is a GoMLX gzip .bin holding data.
func gzipBin(data []byte) []byte {
	var b bytes.Buffer
	b.WriteString(binHeader)
	b.WriteByte(byte(len(gzipFormatName)))
	b.WriteString(gzipFormatName)
	z := gzip.NewWriter(&b)
	z.Write(data)
	z.Close()
	return b.Bytes()
}

// TestDamagedCheckpointsAreClearErrors damages a real checkpoint in each
// way that once panicked in GoMLX's loader or made it allocate what the
// metadata claimed, and checks that loading it is an error naming the
// file and the field, quickly, with bounded allocation.
func TestDamagedCheckpointsAreClearErrors(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, jsonFile, binFile string)
		want   string // in the error, beside the file name
	}{
		{"metadata null", func(t *testing.T, j, _ string) { os.WriteFile(j, []byte("null"), 0o644) }, "not a JSON object"},
		{"metadata not JSON", func(t *testing.T, j, _ string) { os.WriteFile(j, []byte("{\"Variables\": [1,"), 0o644) }, "metadata:"},
		{"a parameter with an empty scope", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) { m["Params"].([]any)[0].(map[string]any)["Scope"] = "" })
		}, "Params[0]"},
		{"a variable without a dtype", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) { delete(variable(m, 1), "DType") })
		}, `DType ""`},
		{"a variable with an empty scope", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) { variable(m, 1)["ParameterName"] = "var:" })
		}, "ParameterName"},
		{"a negative dimension", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) { variable(m, 1)["Dimensions"] = []int{-3} })
		}, "negative"},
		{"an overflowing shape", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) { variable(m, 1)["Dimensions"] = []int64{1 << 40, 1 << 40} })
		}, "too large"},
		{"a length unlike the shape's", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) { variable(m, 1)["Length"] = 17 })
		}, "Length 17 bytes"},
		{"8 GiB declared, consistently", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) {
				v := variable(m, len(m["Variables"].([]any))-1)
				v["Dimensions"], v["DType"], v["Length"] = []int64{1 << 31}, "Float32", int64(1)<<33
			})
		}, "more than"},
		{"a global step of two values", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) { variableNamed(t, m, "var:/model/steps")["ParameterName"] = "var:/global_step" })
		}, "the global step is Int64[2]"},
		{"a global step of another dtype", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) {
				v := variableNamed(t, m, "var:/model/w")
				v["ParameterName"], v["Dimensions"] = "var:/global_step", []int64{}
				v["DType"], v["Length"] = "Float32", 4
			})
		}, "the global step is Float32[]"},
		{"variables out of order", func(t *testing.T, j, _ string) {
			editMetadata(t, j, func(m map[string]any) { variable(m, 1)["Pos"] = 0 })
		}, "Pos 0"},
		{"data cut short", func(t *testing.T, _, b string) {
			data, _ := os.ReadFile(b)
			os.WriteFile(b, data[:len(data)-12], 0o644)
		}, "cut short"},
		{"data inflating beyond the declared bytes", func(t *testing.T, _, b string) {
			// 64 MiB of zeros: 64 KiB compressed, within DEFLATE's ratio.
			os.WriteFile(b, gzipBin(make([]byte, 64<<20)), 0o644)
		}, "inflates to more than"},
		{"too little data", func(t *testing.T, _, b string) {
			os.WriteFile(b, gzipBin(make([]byte, 10)), 0o644)
		}, "inflates to 10 bytes"},
		{"an unknown compression", func(t *testing.T, _, b string) {
			os.WriteFile(b, append([]byte(binHeader+"\x04zstd"), make([]byte, 64)...), 0o644)
		}, `compression "zstd"`},
		{"uncompressed data of the wrong size", func(t *testing.T, _, b string) {
			os.WriteFile(b, make([]byte, 20), 0o644)
		}, "20 bytes, but the metadata declares"},
		{"no data file", func(t *testing.T, _, b string) { os.Remove(b) }, "no such file"},
	}
	// The checkpoint intact loads: the damage, not the checks, fails it.
	folder, _, _ := savedCheckpoint(t)
	if err := LoadPath(context.New(), folder); err != nil {
		t.Fatalf("intact checkpoint: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			folder, jsonFile, binFile := savedCheckpoint(t)
			tc.damage(t, jsonFile, binFile)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			err := LoadPath(context.New(), folder)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), folder) {
				t.Errorf("error %v, want one naming %s and containing %q", err, folder, tc.want)
			}
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 16<<20 {
				t.Errorf("loading allocated %d MiB", allocated>>20)
			}
			if elapsed > 5*time.Second {
				t.Errorf("loading took %s", elapsed)
			}
		})
	}
}

// FuzzLoadPath feeds LoadPath checkpoint folders of arbitrary metadata
// and data: it may refuse them, never panic, hang or allocate beyond what
// the data file can hold. The seeds are a real checkpoint and damaged
// copies of it; `go test` runs them, scripts/fuzz.sh fuzzes.
func FuzzLoadPath(f *testing.F) {
	_, jsonFile, binFile := savedCheckpoint(f)
	metadata, err := os.ReadFile(jsonFile)
	if err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(binFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(metadata, data)
	f.Add([]byte("null"), data)
	f.Add(bytes.Replace(metadata, []byte(`"Float32"`), []byte(`""`), 1), data)
	f.Add(metadata, gzipBin(make([]byte, 1<<20)))
	f.Add(metadata, data[:len(data)/2])
	f.Fuzz(func(t *testing.T, metadata, data []byte) {
		folder := t.TempDir()
		base := filepath.Join(folder, "checkpoint-n0000000-fuzz")
		if err := os.WriteFile(base+".json", metadata, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(base+".bin", data, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := LoadPath(context.New(), folder)
		runtime.ReadMemStats(&after)
		// Accepted data can legitimately inflate to DEFLATE's ratio, and is
		// held twice (GoMLX's buffer and the tensors).
		limit := uint64(32<<20 + 3*maxDeflateRatio*len(data))
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > limit {
			t.Errorf("allocated %d bytes for %d + %d bytes of files (error %v)", allocated, len(metadata), len(data), err)
		}
		if err != nil && !strings.Contains(err.Error(), folder) {
			t.Errorf("error %q does not name the checkpoint %s", err, folder)
		}
	})
}

// FuzzLatest: whatever LATEST holds, Latest names a checkpoint folder
// inside dir or returns an error naming the file, never a path outside.
func FuzzLatest(f *testing.F) {
	f.Add([]byte("step-000000001\n"))
	f.Add([]byte("../../etc\n"))
	f.Add([]byte("step-000000001/../../x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, "step-000000001"), 0o755)
		os.WriteFile(filepath.Join(dir, "LATEST"), data, 0o644)
		path, err := Latest(dir)
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name %s", err, dir)
			}
			if len(err.Error()) > 3*len(dir)+400 {
				t.Errorf("error of %d bytes for a LATEST of %d: the file's bytes must be cut", len(err.Error()), len(data))
			}
			return
		}
		if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), stepPrefix) {
			t.Errorf("LATEST %q gave %s, outside %s", data, path, dir)
		}
	})
}

// TestLatestErrorsSayWhatIsWrong: a LATEST file that is not a folder name
// (a picture saved over it) is reported by its first bytes, escaped, not
// quoted whole; a name of a file or of nothing says which.
func TestLatestErrorsSayWhatIsWrong(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 83_000)...)
	for _, c := range []struct {
		name    string
		latest  []byte
		prepare func(dir string)
		want    []string
	}{
		{"a PNG", png, nil, []string{"LATEST is corrupt", `"\x89PNG\r\n\x1a\n`, "…"}},
		{"a folder name padded past the limit", append([]byte("step-000000001"), make([]byte, 300)...), nil, []string{"LATEST is corrupt"}},
		{"a step that is a file", []byte("step-000000002\n"), func(dir string) {
			os.WriteFile(filepath.Join(dir, "step-000000002"), nil, 0o644)
		}, []string{"step-000000002, which is a file, not a checkpoint folder"}},
		{"a step that is missing", []byte("step-000000003\n"), nil, []string{"step-000000003, which does not exist"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.prepare != nil {
				c.prepare(dir)
			}
			os.WriteFile(filepath.Join(dir, "LATEST"), c.latest, 0o644)
			_, err := Latest(dir)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(err.Error()) > 2*len(dir)+250 {
				t.Errorf("error of %d bytes: %q", len(err.Error()), err)
			}
		})
	}
}
