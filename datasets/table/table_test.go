package table

import (
	"compress/gzip"
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

// writeFile writes text as a file of name in a temporary folder, gzipped
// when the name ends in .gz.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(name, ".gz") {
		gz := gzip.NewWriter(f)
		defer gz.Close()
		gz.Write([]byte(text))
		return p
	}
	f.WriteString(text)
	return p
}

const penguins = "\ufeffspecies,island,bill_length_mm,body_mass_g,sex,year,month\n" +
	"Adelie,Torgersen,39.1,3750,male,2007,Mar\n" +
	"Adelie,\"Biscoe, north\",39.5,3800,female,2007,Dec\n" +
	"Gentoo,Biscoe,46.1,4500,female,2008,Jan\n" +
	"Chinstrap,Dream,46.5,3500,female,2009,Mar\n" +
	"Gentoo,Biscoe,50.0,5700,male,2009,Feb\n"

// TestReadInfersKindsAndEncodes reads a small penguin table (gzipped, a
// byte-order mark, a quoted field with a comma) and checks every column's
// kind, categories and codes, the numbers, the summary's offer of the
// integer column, and the options that override the inference.
func TestReadInfersKindsAndEncodes(t *testing.T) {
	months := []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	tab, err := Read(writeFile(t, "penguins.csv.gz", penguins), Options{Columns: map[string]ColumnOptions{
		"month": {Structure: Cyclical, Order: months}, "year": {Kind: Categorical, Structure: Ordinal}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{
		{Name: "species", Kind: Categorical, Categories: []string{"Adelie", "Chinstrap", "Gentoo"}, Structure: Uniform},
		{Name: "island", Kind: Categorical, Categories: []string{"Biscoe", "Biscoe, north", "Dream", "Torgersen"}, Structure: Uniform},
		{Name: "bill_length_mm", Kind: Numeric},
		{Name: "body_mass_g", Kind: Numeric},
		{Name: "sex", Kind: Categorical, Categories: []string{"female", "male"}, Structure: Uniform},
		{Name: "year", Kind: Categorical, Categories: []string{"2007", "2008", "2009"}, Structure: Ordinal},
		{Name: "month", Kind: Categorical, Categories: months, Structure: Cyclical},
	}
	for i, c := range tab.Schema.Columns {
		if c.Name != want[i].Name || c.Kind != want[i].Kind || c.Structure != want[i].Structure || !slices.Equal(c.Categories, want[i].Categories) {
			t.Errorf("column %d: %+v, want %+v", i+1, c, want[i])
		}
	}
	if tab.N != 5 || !slices.Equal(tab.Numbers, []float64{39.1, 3750, 39.5, 3800, 46.1, 4500, 46.5, 3500, 50, 5700}) {
		t.Errorf("%d rows, numbers %v", tab.N, tab.Numbers)
	}
	wantCodes := []int{0, 3, 1, 0, 2, 0, 1, 0, 0, 11, 2, 0, 0, 1, 0, 1, 2, 0, 2, 2, 2, 0, 1, 2, 1} // species, island, sex, year, month
	if !slices.Equal(tab.Codes, wantCodes) {
		t.Errorf("codes %v, want %v", tab.Codes, wantCodes)
	}
	plain, err := Read(writeFile(t, "p.csv", penguins), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := plain.Summary(); !strings.Contains(s, "year holds few distinct integers") || !strings.Contains(s, "species              categorical, uniform: Adelie, Chinstrap, Gentoo") {
		t.Errorf("summary:\n%s", s)
	}
	if k, err := tab.Schema.Code("month", "Feb"); k != 1 || err != nil {
		t.Errorf("Code(month, Feb) = %d, %v", k, err)
	}
	if _, err := tab.Schema.Code("species", "Emperor"); err == nil || !strings.Contains(err.Error(), `category "Emperor" was not in the training rows (Adelie, Chinstrap, Gentoo)`) {
		t.Errorf("an unseen category: %v", err)
	}
}

// TestReadRefusesBadTables: each bad table or option is refused, naming
// the file, line and column (or the option), before anything else.
func TestReadRefusesBadTables(t *testing.T) {
	ids := "id,x\n"
	for i := range 1200 {
		ids += "u" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26) + "," + string(rune('0'+i%10)) + "\n"
	}
	for _, tc := range []struct {
		name, text string
		o          Options
		want       string
	}{
		{"a word in a column of numbers", "a,b\n1,x\n2,y\nthree,z\n", Options{}, `line 4, column 1 (a): the word "three" in a column of numbers ("1" at line 2)`},
		{"declared numeric", "a,b\n1,x\nfour,y\n", Options{Columns: map[string]ColumnOptions{"a": {Kind: Numeric}}}, `line 3, column 1 (a): "four" is not a number`},
		{"an empty field", "a,b\n1,x\n,y\n", Options{}, `line 3, column 1 (a): a missing value ""`},
		{"NA", "a,b\n1,x\n2,NA\n", Options{}, `line 3, column 2 (b): a missing value "NA"`},
		{"one value", "a,b\n1,x\n2,x\n", Options{}, `column 2 (b): the one value "x" in all 2 rows`},
		{"too many categories", ids, Options{}, "column 1 (id) of"},
		{"a value outside the order", "a,b\n1,x\n2,w\n", Options{Columns: map[string]ColumnOptions{"b": {Structure: Ordinal, Order: []string{"x", "y"}}}}, `line 3, column 2 (b): "w" is not one of the order given`},
		{"an unknown structure", "a,b\n1,x\n2,y\n", Options{Columns: map[string]ColumnOptions{"b": {Structure: "tree"}}}, `structure "tree"`},
		{"an option's column not in the header", "a,b\n1,x\n2,y\n", Options{Drop: []string{"c"}}, `column "c" named in the options`},
		{"a repeated header name", "a,a\n1,x\n2,y\n", Options{}, `header name "a" empty or repeated`},
		{"rows of other widths", "a,b\n1,x\n2\n", Options{}, "line 3: 1 fields, want 2"},
		{"infinity", "a,b\n1,x\nInf,y\n", Options{}, `line 3, column 1 (a): "Inf": want a finite number`},
		{"no rows", "a,b\n", Options{}, "at least one row"},
		{"a bad Missing", "a,b\n1,x\n2,y\n", Options{Missing: "zero"}, `Options.Missing "zero"`},
		{"a negative SpikeShare", "a,b\n1,x\n2,y\n", Options{SpikeShare: -0.1}, `Options.SpikeShare -0.1: want a share`},
		{"a SpikeShare over 1", "a,b\n1,x\n2,y\n", Options{SpikeShare: 1.5}, `Options.SpikeShare 1.5`},
		{"a negative SkipRows", "a,b\n1,x\n2,y\n", Options{SkipRows: -2}, `Options.SkipRows -2: want 0 or more`},
		{"a negative MaxCategories", "a,b\n1,x\n2,y\n", Options{MaxCategories: -1}, `Options.MaxCategories -1`},
		{"a negative FewValues", "a,b\n1,x\n2,y\n", Options{FewValues: -3}, `Options.FewValues -3`},
		{"every column dropped", "a,b\n1,x\n2,y\n", Options{Drop: []string{"a", "b"}}, `every column of the header ["a" "b"] dropped`},
		{"every row dropped", "a,b\n1,\nNA,y\n", Options{Missing: MissingDrop}, `all 2 rows dropped for a missing value`},
		{"one row", "a,b\n1,x\n", Options{}, `one row: nothing to learn from`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "t.csv", tc.text)
			_, err := Read(p, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestReadDropsRowsWithMissingValuesWhenAsked: Options.Missing "drop"
// leaves those rows out and says how many; Options.Drop leaves a column
// out.
func TestReadDropsRowsWithMissingValuesWhenAsked(t *testing.T) {
	tab, err := Read(writeFile(t, "m.csv", "id,a,b\n1,1,x\n2,,y\n3,3,NA\n4,4,y\n5,2,x\n"), Options{Missing: MissingDrop, Drop: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	if tab.N != 3 || tab.Dropped != 2 || len(tab.Schema.Columns) != 2 || !slices.Equal(tab.Numbers, []float64{1, 4, 2}) || !strings.Contains(tab.Summary(), "3 rows (2 dropped for a missing value)") {
		t.Errorf("%d rows, %d dropped, columns %+v, numbers %v; summary %q", tab.N, tab.Dropped, tab.Schema.Columns, tab.Numbers, tab.Summary())
	}
}

// TestEncodeStandardisesAndOneHots: the penguins' rows encoded by hand —
// the two numeric columns standardised with the mean and deviation
// computed here, then each categorical column's one-hot block.
func TestEncodeStandardisesAndOneHots(t *testing.T) {
	tab, err := Read(writeFile(t, "p.csv", penguins), Options{Drop: []string{"year", "month"}})
	if err != nil {
		t.Fatal(err)
	}
	z := vectors.Fit(tab.NumericSet())
	got, err := tab.Encode(z)
	if err != nil {
		t.Fatal(err)
	}
	bill := []float64{39.1, 39.5, 46.1, 46.5, 50}
	var mean, variance float64
	for _, v := range bill {
		mean += v / 5
	}
	for _, v := range bill {
		variance += (v - mean) * (v - mean) / 5
	}
	// Row 2: Adelie, "Biscoe, north", 39.5, 3800, female.
	width := tab.Schema.Width() // 2 numbers + 3 species + 4 islands + 2 sexes
	row := got[width : 2*width]
	wantOneHot := []float32{1, 0, 0, 0, 1, 0, 0, 1, 0}
	if width != 11 || math.Abs(float64(row[0])-(39.5-mean)/math.Sqrt(variance)) > 1e-6 || !slices.Equal(row[2:], wantOneHot) {
		t.Errorf("width %d, row 2 %v; want 11 values, bill %v, one-hot %v", width, row, (39.5-mean)/math.Sqrt(variance), wantOneHot)
	}
	if _, err := tab.Encode(vectors.Standardizer{Mean: []float64{0}, Std: []float64{1}}); err == nil {
		t.Error("a standardiser of 1 column for 2: no error")
	}
}

// encodeDecode encodes tab's rows, standardised as vectors.Fit of its
// numbers, and decodes them back.
func encodeDecode(t testing.TB, tab *Table) (z vectors.Standardizer, encoded []float32, rows [][]string) {
	t.Helper()
	z = vectors.Fit(tab.NumericSet())
	encoded, err := tab.Encode(z)
	if err != nil {
		t.Fatal(err)
	}
	if rows, err = tab.Schema.Decode(encoded, z); err != nil {
		t.Fatal(err)
	}
	return z, encoded, rows
}

// TestDecodeInvertsEncode: the penguins encoded and decoded are the file's
// rows again (numbers to float32 precision, every category its word), in
// the file's column order.
func TestDecodeInvertsEncode(t *testing.T) {
	tab, err := Read(writeFile(t, "p.csv", penguins), Options{})
	if err != nil {
		t.Fatal(err)
	}
	z, encoded, rows := encodeDecode(t, tab)
	want := [][]string{
		{"Adelie", "Torgersen", "39.1", "3750", "male", "2007", "Mar"},
		{"Adelie", "Biscoe, north", "39.5", "3800", "female", "2007", "Dec"},
		{"Gentoo", "Biscoe", "46.1", "4500", "female", "2008", "Jan"},
		{"Chinstrap", "Dream", "46.5", "3500", "female", "2009", "Mar"},
		{"Gentoo", "Biscoe", "50", "5700", "male", "2009", "Feb"},
	}
	for r, row := range rows {
		for i, v := range row {
			if c := tab.Schema.Columns[i]; c.Kind == Numeric {
				got, _ := strconv.ParseFloat(v, 64)
				w, _ := strconv.ParseFloat(want[r][i], 64)
				if math.Abs(got-w) > 1e-5*math.Abs(w) {
					t.Errorf("row %d, %s: %s, want %s", r+1, c.Name, v, want[r][i])
				}
			} else if v != want[r][i] {
				t.Errorf("row %d, %s: %q, want %q", r+1, c.Name, v, want[r][i])
			}
		}
	}
	if !slices.Equal(tab.Schema.Header(), []string{"species", "island", "bill_length_mm", "body_mass_g", "sex", "year", "month"}) {
		t.Errorf("header %v", tab.Schema.Header())
	}
	if _, err := tab.Schema.Decode(encoded[:5], z); err == nil {
		t.Error("5 values: no error")
	}
}

// TestDecodeConformsNumbersToTheFile: a model's numbers come back within
// the file's range of each column, and whole for a column of whole
// numbers; a schema recorded before ranges existed decodes exactly.
func TestDecodeConformsNumbersToTheFile(t *testing.T) {
	tab, err := Read(writeFile(t, "t.csv", "age,gain,kind\n30,0,a\n41,0.5,b\n52,2500,a\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	age, gain := tab.Schema.Columns[0], tab.Schema.Columns[1]
	if !age.Integer || !slices.Equal(age.Range, []float64{30, 52}) || gain.Integer || !slices.Equal(gain.Range, []float64{0, 2500}) {
		t.Fatalf("age integer %v range %v, gain integer %v range %v; want true [30 52], false [0 2500]", age.Integer, age.Range, gain.Integer, gain.Range)
	}
	z := vectors.Standardizer{Mean: []float64{0, 0}, Std: []float64{1, 1}} // encoded numbers are the file's
	encoded := []float32{
		36.6, -12.25, 1, 0, // age rounds up, gain below 0
		29.2, 2600.5, 0, 1, // age below 30, gain above 2500
		44.4, 1000.25, 1, 0, // inside both ranges
	}
	for _, tc := range []struct {
		name   string
		schema Schema
		want   [][]string
	}{
		{"recorded now", tab.Schema, [][]string{{"37", "0", "a"}, {"30", "2500", "b"}, {"44", "1000.25", "a"}}},
		{"recorded before ranges", Schema{Columns: []Column{{Name: "age", Kind: Numeric}, {Name: "gain", Kind: Numeric}, tab.Schema.Columns[2]}},
			[][]string{{"36.599998474121094", "-12.25", "a"}, {"29.200000762939453", "2600.5", "b"}, {"44.400001525878906", "1000.25", "a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := tc.schema.Decode(encoded, z)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(rows, tc.want, slices.Equal) {
				t.Errorf("decoded %v, want %v", rows, tc.want)
			}
		})
	}
}

// gainsCSV is 20 rows of a column "gain" whose value 0 takes the first
// zeros rows and i·100 the others (so 21 − zeros distinct values), a
// column "hours" of 12 distinct values, 40 in its first 9 rows, and a
// category.
func gainsCSV(zeros int) string {
	var b strings.Builder
	b.WriteString("gain,hours,kind\n")
	for i := range 20 {
		gain, hours := 0, 40
		if i >= zeros {
			gain = i * 100
		}
		if i >= 9 {
			hours = 41 + i%11
		}
		b.WriteString(strconv.Itoa(gain) + "," + strconv.Itoa(hours) + "," + string(rune('a'+i%2)) + "\n")
	}
	return b.String()
}

// TestReadFindsSpikes: a numeric column's most frequent value is its spike
// when it holds at least SpikeShare of the rows and the column has more
// than FewValues distinct values — counted here from the rows as written.
func TestReadFindsSpikes(t *testing.T) {
	zero, forty := 0.0, 40.0
	for _, tc := range []struct {
		name               string
		zeros              int
		o                  Options
		wantGain, wantHour *float64
	}{
		{"both, at the default share", 5, Options{}, &zero, &forty},        // 5/20, 9/20 ≥ 0.1
		{"one value twice is a tenth", 2, Options{}, &zero, &forty},        // 2/20 = 0.1
		{"below a share of 0.3", 5, Options{SpikeShare: 0.3}, nil, &forty}, // 5/20 < 0.3 ≤ 9/20
		{"none at a share of 1", 5, Options{SpikeShare: 1}, nil, nil},
		{"too few distinct values", 12, Options{}, nil, &forty}, // 9 distinct gains ≤ 10
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := Read(writeFile(t, "g.csv", gainsCSV(tc.zeros)), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			same := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
			gain, hours := tab.Schema.Columns[0].Spike, tab.Schema.Columns[1].Spike
			if !same(gain, tc.wantGain) || !same(hours, tc.wantHour) {
				t.Errorf("spikes gain %v hours %v, want %v %v", deref(gain), deref(hours), deref(tc.wantGain), deref(tc.wantHour))
			}
			if tc.wantHour != nil && !strings.Contains(tab.Summary(), "45.0 % of the rows at 40") {
				t.Errorf("summary without the hours' spike:\n%s", tab.Summary())
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSpikesEncodeAndDecode: a spike's block follows the categorical
// columns' blocks, one-hot at 1 for the rows at the spike (checked
// against the file's rows), and Decode writes the spike for a row whose
// block leans to it whatever its number, the number (rounded and clamped)
// otherwise; the file's rows come back through both.
func TestSpikesEncodeAndDecode(t *testing.T) {
	tab := readGains(t)
	blocks := tab.Schema.Blocks()
	want := []Block{{Column: 2, At: 2, Categories: 2, Structure: Uniform}, {Column: 0, At: 4, Categories: 2, Structure: Uniform}, {Column: 1, At: 6, Categories: 2, Structure: Uniform}}
	if !slices.Equal(blocks, want) || tab.Schema.Width() != 8 {
		t.Fatalf("blocks %v, width %d; want %v, 8", blocks, tab.Schema.Width(), want)
	}
	_, encoded, rows := encodeDecode(t, tab)
	for i := range 20 {
		row := encoded[i*8 : (i+1)*8]
		gainAt, hoursAt := float32(0), float32(0)
		if i < 5 {
			gainAt = 1
		}
		if i < 9 {
			hoursAt = 1
		}
		if !slices.Equal(row[4:], []float32{1 - gainAt, gainAt, 1 - hoursAt, hoursAt}) {
			t.Errorf("row %d: spike blocks %v", i+1, row[4:])
		}
	}
	for i, row := range rows {
		if want := tab.Fields(i); !slices.Equal(row, want) {
			t.Errorf("row %d decoded %v, want %v", i+1, row, want)
		}
	}
	unit := vectors.Standardizer{Mean: []float64{0, 0}, Std: []float64{1, 1}}
	model := []float32{
		700.4, 44.6, 0.9, 0.1, 0.2, 0.8, 0.6, 0.4, // gain at its spike, hours off it
		-50, 40.2, 0.1, 0.9, 0.7, 0.3, 0.45, 0.55, // gain off (clamped to 0), hours at 40
	}
	decoded, err := tab.Schema.Decode(model, unit)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"0", "45", "a"}, {"0", "40", "b"}}; !slices.EqualFunc(decoded, want, slices.Equal) {
		t.Errorf("decoded %v, want %v", decoded, want)
	}
}

// TestLogJacobianCountsASpikeAsAProbability: on gainsCSV(5) (gain at 0 in
// rows 1–5, hours at 40 in rows 1–9), a number off its spike counts
// −log σ and one at it log √(2π) (SpreadSpikes' unit normal at its
// centre), worked by hand for σ = (100, 4).
func TestLogJacobianCountsASpikeAsAProbability(t *testing.T) {
	z := vectors.Standardizer{Mean: []float64{500, 42}, Std: []float64{100, 4}}
	tab, encoded := gainsEncoded(t, z)
	halfLog2π := 0.5 * math.Log(2*math.Pi)
	for _, c := range []struct {
		row  int
		want float64
	}{
		{0, 2 * halfLog2π},                 // both at their spikes
		{6, -math.Log(100) + halfLog2π},    // gain off, hours at 40
		{12, -math.Log(100) - math.Log(4)}, // both off
	} {
		w := tab.Schema.Width()
		if got := tab.Schema.LogJacobian(encoded[c.row*w:(c.row+1)*w], z); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("row %d: %v, want %v", c.row+1, got, c.want)
		}
	}
}

// TestOutOfRangeCountsNumbersDecodeWouldClamp: four rows of gainsCSV(5)
// (gain in [0, 1900], spike 0; hours in [40, 51], spike 40) with numbers
// moved by hand: a number past its range counts unless its row is at the
// column's spike, and a number on the edge does not.
func TestOutOfRangeCountsNumbersDecodeWouldClamp(t *testing.T) {
	unit := vectors.Standardizer{Mean: []float64{0, 0}, Std: []float64{1, 1}}
	tab, encoded := gainsEncoded(t, unit)
	w := tab.Schema.Width()
	var rows []float32
	for _, c := range []struct {
		row         int
		gain, hours float32
	}{
		{0, -300, 100},   // both at their spikes: neither counts
		{6, -1, 39},      // gain off and below 0: counts; hours at 40
		{12, 1900, 51.5}, // gain on its edge; hours off and above 51: counts
		{15, 1500, 45},
	} {
		row := slices.Clone(encoded[c.row*w : (c.row+1)*w])
		row[0], row[1] = c.gain, c.hours
		rows = append(rows, row...)
	}
	got := tab.Schema.OutOfRange(rows, unit)
	if want := map[string]float64{"gain": 0.25, "hours": 0.25}; !maps.Equal(got, want) {
		t.Errorf("out of range %v, want %v", got, want)
	}
	decoded, err := tab.Schema.Decode(rows, unit)
	if err != nil {
		t.Fatal(err)
	}
	if decoded[1][0] != "0" || decoded[2][1] != "51" {
		t.Errorf("decoded %v: want the counted numbers at their edges", decoded)
	}
}

// TestNumberBoxStandardisesTheRanges: gainsCSV(5)'s ranges [0, 1900] and
// [40, 51] standardised by hand, each number free where its spike's "at"
// category is (places 5 and 7 of the row, after kind's block at 2–3).
func TestNumberBoxStandardisesTheRanges(t *testing.T) {
	tab := readGains(t)
	lo, hi, freeAt := tab.Schema.NumberBox(vectors.Standardizer{Mean: []float64{900, 42}, Std: []float64{500, 4}})
	if !slices.Equal(lo, []float64{-1.8, -0.5}) || !slices.Equal(hi, []float64{2, 2.25}) || !slices.Equal(freeAt, []int{5, 7}) {
		t.Errorf("box %v … %v, free at %v; want [-1.8 -0.5] … [2 2.25], [5 7]", lo, hi, freeAt)
	}
}

// readGains reads gainsCSV(5) (gain at 0 in rows 1–5, hours at 40 in rows
// 1–9: two spiked numbers and a category).
func readGains(t *testing.T) *Table {
	t.Helper()
	tab, err := Read(writeFile(t, "g.csv", gainsCSV(5)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// gainsEncoded is readGains' table and its rows encoded with z.
func gainsEncoded(t *testing.T, z vectors.Standardizer) (*Table, []float32) {
	t.Helper()
	tab := readGains(t)
	encoded, err := tab.Encode(z)
	if err != nil {
		t.Fatal(err)
	}
	return tab, encoded
}
