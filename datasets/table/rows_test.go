package table

import (
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/vectors"
)

// penguinSchema is the schema Read infers from the penguins table.
func penguinSchema(t testing.TB) Schema {
	t.Helper()
	p := filepath.Join(t.TempDir(), "p.csv")
	if err := os.WriteFile(p, []byte(penguins), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := Read(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tab.Schema
}

// TestReadRowsEncodesAgainstTheTrainingSchema: new rows with the columns
// in another order and two columns the model has not (a label, an id)
// give the numbers and codes read off the schema's categories by hand,
// their lines, and the other columns' fields.
func TestReadRowsEncodesAgainstTheTrainingSchema(t *testing.T) {
	s := penguinSchema(t)
	text := "id,month,year,sex,body_mass_g,bill_length_mm,island,species,odd\n" +
		"a,Dec,2009,male,4000,40.5,Dream,Gentoo,no\n" +
		"b,Mar,2007,female,3000.5,38,\"Biscoe, north\",Adelie,yes\n"
	tab, err := ReadRows(writeFile(t, "new.csv", text), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The schema's order: species, island, bill, mass, sex, year (a
	// number), month; categories sorted: species Adelie/Chinstrap/Gentoo,
	// island Biscoe/"Biscoe, north"/Dream/Torgersen, sex female/male, month
	// Dec/Feb/Jan/Mar.
	wantNumbers := []float64{40.5, 4000, 2009, 38, 3000.5, 2007}
	wantCodes := []int{2, 2, 1, 0, 0, 1, 0, 3}
	if tab.N != 2 || !slices.Equal(tab.Numbers, wantNumbers) || !slices.Equal(tab.Codes, wantCodes) || !slices.Equal(tab.Lines, []int{2, 3}) {
		t.Errorf("%d rows, numbers %v codes %v lines %v; want 2, %v, %v, [2 3]", tab.N, tab.Numbers, tab.Codes, tab.Lines, wantNumbers, wantCodes)
	}
	if got, want := tab.Fields(1), []string{"Adelie", "Biscoe, north", "38", "3000.5", "female", "2007", "Mar"}; !slices.Equal(got, want) {
		t.Errorf("Fields(1) = %q, want %q", got, want)
	}
	if !slices.Equal(tab.Other["odd"], []string{"no", "yes"}) || !slices.Equal(tab.Other["id"], []string{"a", "b"}) || len(tab.Other) != 2 {
		t.Errorf("other columns %v", tab.Other)
	}
}

// TestReadRowsRefusesWhatTrainingNeverSaw names file, line and column.
func TestReadRowsRefusesWhatTrainingNeverSaw(t *testing.T) {
	s := penguinSchema(t)
	header := "species,island,bill_length_mm,body_mass_g,sex,year,month\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"a column missing", "species,island\nAdelie,Dream\n", `lacks the model's columns ["bill_length_mm" "body_mass_g" "sex" "year" "month"]`},
		{"an unseen category", header + "Adelie,Dream,40,4000,male,2007,Mar\nEmperor,Dream,40,4000,male,2007,Mar\n", `line 3, column 1 (species): table: column "species": category "Emperor" was not in the training rows`},
		{"a word among numbers", header + "Adelie,Dream,forty,4000,male,2007,Mar\n", `line 2, column 3 (bill_length_mm): "forty": want a finite number`},
		{"a missing value", header + "Adelie,Dream,40,NA,male,2007,Mar\n", `line 2, column 4 (body_mass_g): a missing value "NA"`},
		{"infinity", header + "Adelie,Dream,40,inf,male,2007,Mar\n", `line 2, column 4 (body_mass_g): "inf": want a finite number`},
		{"no rows", header, "at least one row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadRows(writeFile(t, "new.csv", tc.text), s, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "new.csv") {
				t.Errorf("error %v, want one naming new.csv and containing %q", err, tc.want)
			}
		})
	}
	// A row with a missing value is dropped whatever else it holds (an
	// unseen category, a word among numbers).
	tab, err := ReadRows(writeFile(t, "new.csv", header+"Adelie,Dream,40,,male,2007,Mar\nEmperor,Dream,forty,4000,,2007,Mar\nAdelie,Dream,41,4100,male,2007,Mar\n"), s, Options{Missing: MissingDrop})
	if err != nil || tab.N != 1 || tab.Dropped != 2 || !slices.Equal(tab.Lines, []int{4}) {
		t.Errorf("dropping: %+v, %v; want one row, from line 4, and two dropped", tab, err)
	}
}

// TestReadRowsKeepsUnseenCategoriesWhenAsked: with Options.Unseen
// UnseenAnomalous a row with categories training never saw is kept, its
// categories by column in its place in Table.Unseen (coded 0; its Fields
// and UnseenSummary give its own words), the other rows read as without
// it, and a row's categories follow it through Rows; the default's error
// says how to keep them, and an unknown policy is refused by name.
func TestReadRowsKeepsUnseenCategoriesWhenAsked(t *testing.T) {
	s := penguinSchema(t)
	text := "species,island,bill_length_mm,body_mass_g,sex,year,month\n" +
		"Adelie,Dream,40,4000,male,2007,Mar\n" +
		"Emperor,Dream,40,4000,male,2007,Jul\n" +
		"Gentoo,Biscoe,41,4100,female,2008,Dec\n"
	path := writeFile(t, "new.csv", text)
	tab, err := ReadRows(path, s, Options{Unseen: UnseenAnomalous})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"species": "Emperor", "month": "Jul"}
	if tab.N != 3 || len(tab.Unseen) != 3 || tab.Unseen[0] != nil || !maps.Equal(tab.Unseen[1], want) || tab.Unseen[2] != nil {
		t.Fatalf("%d rows, unseen %q; want 3, %q in the second", tab.N, tab.Unseen, want)
	}
	if got, want := tab.Fields(1), []string{"Emperor", "Dream", "40", "4000", "male", "2007", "Jul"}; !slices.Equal(got, want) {
		t.Errorf("Fields(1) = %q, want %q", got, want)
	}
	if got, want := tab.UnseenSummary(1), "species=Emperor; month=Jul"; got != want || tab.UnseenSummary(0) != "" {
		t.Errorf("UnseenSummary(1) = %q, want %q; of row 0 %q", got, want, tab.UnseenSummary(0))
	}
	// species, island, sex, month codes: Gentoo 2, Biscoe 0, female 0, Dec 0;
	// row 2's unseen species and month are 0, its island Dream 2, sex male 1.
	if got, wantCodes := tab.Codes[4:], []int{0, 2, 1, 0, 2, 0, 0, 0}; !slices.Equal(got, wantCodes) {
		t.Errorf("codes of rows 2 and 3 %v, want %v", got, wantCodes)
	}
	if sub := tab.Rows([]int{2, 1}); len(sub.Unseen) != 2 || sub.Unseen[0] != nil || !maps.Equal(sub.Unseen[1], want) {
		t.Errorf("Rows(2, 1).Unseen = %q", sub.Unseen)
	}
	clean, err := ReadRows(writeFile(t, "clean.csv", "species,island,bill_length_mm,body_mass_g,sex,year,month\nAdelie,Dream,40,4000,male,2007,Mar\n"), s, Options{Unseen: UnseenAnomalous})
	if err != nil || clean.Unseen != nil {
		t.Errorf("a file with every category seen: Unseen %q, %v; want nil", clean.Unseen, err)
	}
	if _, err := ReadRows(path, s, Options{}); err == nil || !strings.Contains(err.Error(), `line 3, column 1 (species)`) || !strings.Contains(err.Error(), `Options.Unseen "anomalous"`) {
		t.Errorf("default: %v, want the unseen species named with the option that keeps it", err)
	}
	if _, err := ReadRows(path, s, Options{Unseen: "ignore"}); err == nil || !strings.Contains(err.Error(), `Options.Unseen "ignore"`) {
		t.Errorf("an unknown policy: %v", err)
	}
}

// TestParseRowsReadsRowsInMemory: a request's rows, columns in another
// order and an id beside them, give the numbers and codes read off the
// schema by hand (as TestReadRowsEncodesAgainstTheTrainingSchema's file
// does), numbered from 1; bad rows are refused naming the source, the row
// and the column.
func TestParseRowsReadsRowsInMemory(t *testing.T) {
	s := penguinSchema(t)
	header := []string{"id", "month", "year", "sex", "body_mass_g", "bill_length_mm", "island", "species"}
	tab, err := s.ParseRows("the request", header, [][]string{
		{"a", "Dec", "2009", "male", "4000", "40.5", "Dream", "Gentoo"},
		{"b", "Mar", " 2007", "female", "3000.5", "38", "Biscoe, north", "Adelie"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantNumbers := []float64{40.5, 4000, 2009, 38, 3000.5, 2007}
	wantCodes := []int{2, 2, 1, 0, 0, 1, 0, 3}
	if tab.N != 2 || !slices.Equal(tab.Numbers, wantNumbers) || !slices.Equal(tab.Codes, wantCodes) || !slices.Equal(tab.Lines, []int{1, 2}) || !slices.Equal(tab.Other["id"], []string{"a", "b"}) {
		t.Errorf("%d rows, numbers %v codes %v rows %v other %v; want 2, %v, %v, [1 2], ids a, b", tab.N, tab.Numbers, tab.Codes, tab.Lines, tab.Other, wantNumbers, wantCodes)
	}
	ordered := s.Header()
	good := []string{"Adelie", "Dream", "40", "4000", "male", "2007", "Mar"}
	with := func(column int, value string) []string {
		row := slices.Clone(good)
		row[column] = value
		return row
	}
	keep := Options{Unseen: UnseenAnomalous}
	kept, err := s.ParseRows("the request", ordered, [][]string{good, with(0, "Emperor"), with(6, "Smarch")}, keep)
	if err != nil {
		t.Fatal(err)
	}
	if kept.N != 3 || kept.Unseen[0] != nil || kept.Unseen[1]["species"] != "Emperor" || kept.Unseen[2]["month"] != "Smarch" || len(kept.Unseen[1])+len(kept.Unseen[2]) != 2 ||
		!slices.Equal(kept.Fields(1), with(0, "Emperor")) || !slices.Equal(kept.Fields(0), good) {
		t.Errorf("unseen kept: %d rows, unseen %v, fields %q, %q", kept.N, kept.Unseen, kept.Fields(0), kept.Fields(1))
	}
	for _, tc := range []struct {
		name    string
		header  []string
		records [][]string
		o       Options
		want    string
	}{
		{"a column missing", []string{"species", "island"}, [][]string{{"Adelie", "Dream"}}, Options{}, `lacks the model's columns ["bill_length_mm"`},
		{"a column twice", append(slices.Clone(ordered), "island"), [][]string{append(slices.Clone(good), "Biscoe")}, Options{}, `names the model's column "island" twice (columns 2 and 8)`},
		{"an unseen category", ordered, [][]string{good, with(0, "Emperor")}, Options{}, `the request, row 2, column 1 (species): table: column "species": category "Emperor" was not in the training rows (Adelie, Chinstrap, Gentoo)`},
		{"a word among numbers", ordered, [][]string{with(2, "forty")}, keep, `the request, row 1, column 3 (bill_length_mm): "forty": want a finite number`},
		{"a missing value", ordered, [][]string{good, good, with(3, "")}, keep, `the request, row 3, column 4 (body_mass_g): a missing value ""`},
		{"a short row", ordered, [][]string{good[:6]}, Options{}, `the request, row 1: 6 fields, want 7`},
		{"no rows", ordered, nil, Options{}, "the request: no rows"},
		{"rows dropped", ordered, [][]string{good}, Options{Missing: MissingDrop}, `the request: Options.Missing "drop": each row given is answered`},
		{"an unknown policy", ordered, [][]string{good}, Options{Unseen: "skip"}, `Options.Unseen "skip": want "error" or "anomalous"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.ParseRows("the request", tc.header, tc.records, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	_, err = s.ParseRows("the request", ordered, [][]string{with(6, "Smarch")}, Options{})
	if ce := new(CategoryError); !errors.As(err, &ce) || ce.Column != "month" || ce.Category != "Smarch" || len(ce.Known) != 4 {
		t.Errorf("an unseen month: %v; want a *CategoryError naming month and Smarch among its 4 known", err)
	}
}

// FuzzReadRows reads arbitrary bytes against the penguins' schema: never a
// panic, and rows read have finite numbers and codes within their columns.
func FuzzReadRows(f *testing.F) {
	f.Add([]byte(penguins))
	f.Add([]byte("x,month,year,sex,body_mass_g,bill_length_mm,island,species\n1,Dec,2009,male,4000,40.5,Dream,Gentoo\n"))
	s := penguinSchema(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "f.csv")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := ReadRows(p, s, Options{Missing: MissingDrop, Unseen: UnseenAnomalous})
		if err != nil {
			return
		}
		// Read strictly, the file fails exactly when a category is unseen.
		if _, err := ReadRows(p, s, Options{Missing: MissingDrop}); (err == nil) != (tab.Unseen == nil) {
			t.Fatalf("strict read: %v, with %d rows' unseen categories kept", err, len(tab.Unseen))
		}
		if tab.Unseen != nil && len(tab.Unseen) != tab.N {
			t.Fatalf("%d rows' unseen categories for %d rows", len(tab.Unseen), tab.N)
		}
		for i := range tab.Unseen {
			for name, word := range tab.Unseen[i] {
				if _, err := s.Code(name, word); err == nil {
					t.Fatalf("row %d: %s=%q kept as unseen, but training saw it", i, name, word)
				}
			}
		}
		if tab.N < 1 || len(tab.Numbers) != 3*tab.N || len(tab.Codes) != 4*tab.N || len(tab.Lines) != tab.N {
			t.Fatalf("%d rows, %d numbers, %d codes, %d lines", tab.N, len(tab.Numbers), len(tab.Codes), len(tab.Lines))
		}
		for _, v := range tab.Numbers {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("number %v", v)
			}
		}
		var categorical []Column
		for _, c := range s.Columns {
			if c.Kind == Categorical {
				categorical = append(categorical, c)
			}
		}
		for i, code := range tab.Codes {
			if c := categorical[i%len(categorical)]; code < 0 || code >= len(c.Categories) {
				t.Fatalf("code %d of column %s", code, c.Name)
			}
		}
		for name, fields := range tab.Other {
			if len(fields) != tab.N {
				t.Fatalf("column %s: %d fields for %d rows", name, len(fields), tab.N)
			}
		}
	})
}

// TestRowsAndColumn: a table's rows picked in another order, and each
// column's values, read against the rows' fields.
func TestRowsAndColumn(t *testing.T) {
	s := penguinSchema(t)
	tab, err := s.ParseRows("rows", s.Header(), [][]string{
		{"Adelie", "Dream", "40", "4000", "male", "2007", "Mar"},
		{"Gentoo", "Biscoe", "47.5", "5000", "female", "2009", "Dec"},
		{"Chinstrap", "Dream", "49", "3700", "male", "2008", "Jan"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	picked := tab.Rows([]int{2, 0})
	if picked.N != 2 || !slices.Equal(picked.Fields(0), tab.Fields(2)) || !slices.Equal(picked.Fields(1), tab.Fields(0)) || !slices.Equal(picked.Lines, []int{3, 1}) {
		t.Errorf("rows 3 and 1: %q, %q, lines %v", picked.Fields(0), picked.Fields(1), picked.Lines)
	}
	for c, col := range s.Columns {
		numbers, codes := tab.Column(c)
		for i := range tab.N {
			var got string
			if col.Kind == Numeric {
				got = strconv.FormatFloat(numbers[i], 'g', -1, 64)
			} else {
				got = col.Categories[codes[i]]
			}
			if want := tab.Fields(i)[c]; got != want {
				t.Errorf("column %s, row %d: %q, the row's field %q", col.Name, i+1, got, want)
			}
		}
	}
}

// TestEncodeRefusesNumbersFarPastTheRows: with bill length standardised as
// N(40, 2²), body mass as N(4000, 500²) and the year as N(2008, 1), a bill 10⁶ deviations out
// (2,000,040 mm) encodes and one just past it does not, nor a sentinel of
// 9.9e99 g; the errors name the file's line or the request's row, and the
// column.
func TestEncodeRefusesNumbersFarPastTheRows(t *testing.T) {
	s := penguinSchema(t)
	z := vectors.Standardizer{Mean: []float64{40, 4000, 2008}, Std: []float64{2, 500, 1}}
	header := s.Header() // species, island, bill_length_mm, body_mass_g, sex, year, month
	row := func(bill, mass string) []string {
		return []string{"Adelie", "Dream", bill, mass, "male", "2007", "Mar"}
	}
	for _, tc := range []struct {
		name    string
		records [][]string
		want    string // "" for none
	}{
		{"at the bound", [][]string{row("40", "4000"), row("2000040", "4000")}, ""},
		{"past it", [][]string{row("40", "4000"), row("2000042", "4000")}, `the request, row 2, column "bill_length_mm": 2.000042e+06 is 1e+06 standard deviations`},
		{"a sentinel", [][]string{row("40", "9.9e99")}, `the request, row 1, column "body_mass_g": 9.9e+99`},
	} {
		tab, err := s.ParseRows("the request", header, tc.records, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tab.Encode(z)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if de := new(DeviationError); err != nil && (!errors.As(err, &de) || de.Place != "the request, row "+strconv.Itoa(len(tc.records))) {
			t.Errorf("%s: %v, want a *DeviationError placed at the request's last row", tc.name, err)
		}
	}
	p := filepath.Join(t.TempDir(), "new.csv")
	if err := os.WriteFile(p, []byte(strings.Join(header, ",")+"\n"+strings.Join(row("40", "4000"), ",")+"\n"+strings.Join(row("-1e300", "4000"), ",")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := ReadRows(p, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Encode(z); err == nil || !strings.Contains(err.Error(), `new.csv, line 3, column "bill_length_mm": -1e+300`) {
		t.Errorf("a file's row: %v", err)
	}
	if _, err := tab.Rows([]int{1}).Encode(z); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("the row picked: %v, want it named by its line", err)
	}
	request, err := s.ParseRows("the request", header, [][]string{row("40", "4000"), row("40", "9.9e99")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := request.Rows([]int{1}).Encode(z); err == nil || !strings.Contains(err.Error(), "the request, row 2,") {
		t.Errorf("a request's row picked: %v, want it named as the request's row 2", err)
	}
	// A table read to train is encoded as it is, however far a row lies.
	training, err := Read(writeFile(t, "train.csv", "a,b\n1,x\n1e300,y\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := training.Encode(vectors.Standardizer{Mean: []float64{0}, Std: []float64{1}}); err != nil {
		t.Errorf("the file read to train: %v", err)
	}
}
