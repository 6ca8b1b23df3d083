package table

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// FuzzRead reads arbitrary bytes as a table: never a panic, and a table
// read has rows, finite numbers, every code a category of its column, and
// a schema of the header's columns; encoded and decoded, its categories
// and spikes are the file's.
func FuzzRead(f *testing.F) {
	f.Add([]byte(penguins))
	f.Add([]byte("a,b\n1,x\n2,NA\n"))
	f.Add([]byte("a,b\n1,\"x\n2,y\n"))
	f.Add([]byte("\ufeffa\n1\n1e400\n"))
	f.Add([]byte(gainsCSV(5)))
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
		// Encoded and decoded, every category and every spike comes back
		// exactly (numbers off a spike: to float32's precision).
		_, _, rows := encodeDecode(t, tab)
		for i, row := range rows {
			for j, field := range tab.Fields(i) {
				c := tab.Schema.Columns[j]
				if (c.Kind == Categorical || c.Spike != nil && field == strconv.FormatFloat(*c.Spike, 'g', -1, 64)) && row[j] != field {
					t.Fatalf("row %d, column %s: decoded %q, want %q", i+1, c.Name, row[j], field)
				}
			}
		}
	})
}
