package table

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead reads arbitrary bytes as a table: never a panic, and a table
// read has rows, finite numbers, every code a category of its column, and
// a schema of the header's columns.
func FuzzRead(f *testing.F) {
	f.Add([]byte(penguins))
	f.Add([]byte("a,b\n1,x\n2,NA\n"))
	f.Add([]byte("a,b\n1,\"x\n2,y\n"))
	f.Add([]byte("\ufeffa\n1\n1e400\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "f.csv")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := Read(p, Options{MaxCategories: 50})
		if err != nil {
			return
		}
		var numeric, categorical []Column
		for _, c := range tab.Schema.Columns {
			if c.Kind == Numeric {
				numeric = append(numeric, c)
			} else {
				categorical = append(categorical, c)
			}
		}
		if tab.N < 1 || len(tab.Numbers) != tab.N*len(numeric) || len(tab.Codes) != tab.N*len(categorical) {
			t.Fatalf("%d rows, %d numbers, %d codes for %d numeric and %d categorical columns", tab.N, len(tab.Numbers), len(tab.Codes), len(numeric), len(categorical))
		}
		for _, v := range tab.Numbers {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("number %v", v)
			}
		}
		for i, code := range tab.Codes {
			if c := categorical[i%len(categorical)]; code < 0 || code >= len(c.Categories) {
				t.Fatalf("code %d of column %s with %d categories", code, c.Name, len(c.Categories))
			}
		}
	})
}
