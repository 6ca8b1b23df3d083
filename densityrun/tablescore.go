package densityrun

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/eval"
)

// TableScoreReportFile is the report ScoreTable writes beside its scores.
const TableScoreReportFile = "report.json"

// fitRows bound the rows whose columns' conditionals ScoreTable measures
// (TableScoreReport.ColumnFits): a number's takes 121 energies a row; 500
// rows put a PIT tenth's standard error at 0.013.
const fitRows = 500

// FlagLevel is the p-value at or below which ScoreTable counts a row as
// flagged (TableScoreReport.Flagged).
const FlagLevel = 0.01

// TableScoreOptions say which rows ScoreTable scores with which model.
type TableScoreOptions struct {
	// Run is a TrainTable run folder; Method the model in it (default
	// density.MixedMethods[0], energy discrepancy).
	Run, Method string
	// Data is the CSV file of new rows, with a header naming every column
	// the run trained on (its other columns are carried along); Read's
	// SkipRows, Missing and Unseen say how to read it (table.ReadRows).
	Data string
	Read table.Options
	// Label, when set, is a column of Data saying which rows are
	// anomalies: those whose value is one of Anomalies. The report then
	// has the energy's AUPRC with its 95 % bootstrap interval.
	Label     string
	Anomalies []string
	// Out is the output folder (default RUN/METHOD/scores-BASE, BASE
	// Data's base name without its extensions); Backend the GoMLX backend.
	Out, Backend string
	// Resamples of the AUPRC's bootstrap (default 1000), from Seed
	// (default 1).
	Resamples int
	Seed      int64
}

// TableScoreReport is what ScoreTable measured, as TableScoreReportFile
// holds it.
type TableScoreReport struct {
	Run    string `json:"run"`
	Method string `json:"method"`
	Step   int64  `json:"step"`
	Data   string `json:"data"`
	// N rows were scored; Dropped were left out for a missing value.
	N       int `json:"n"`
	Dropped int `json:"dropped,omitempty"`
	// Unseen rows hold a category training never saw (kept by
	// table.UnseenAnomalous): the model gives them probability 0, so their
	// energy is +Inf, ranked first. UnseenCategories lists those
	// categories as "column=value", sorted.
	Unseen           int      `json:"unseen,omitempty"`
	UnseenCategories []string `json:"unseen_categories,omitempty"`
	// Flagged rows have a p-value of at most FlagLevel against the run's
	// HeldOut held-out rows (TableModel.PValue): for rows drawn as the
	// training rows were, at most FlagLevel of them in expectation.
	Flagged int `json:"flagged"`
	HeldOut int `json:"held_out_rows"`
	// ColumnFits say how each column's conditional given the rest of the
	// row fits the first fitRows rows (TableModel.ColumnFits): a model's
	// joint law is right only where every conditional is, so on rows
	// drawn as the training rows were (the run's held-out rows) they show
	// which column a model gets wrong.
	ColumnFits []ColumnFit `json:"column_fits"`
	// Anomalies, AUPRC and its interval, when Label says which rows are
	// anomalies (ranked by energy, highest first).
	Label         string         `json:"label,omitempty"`
	Anomalies     int            `json:"anomalies,omitempty"`
	AUPRC         float64        `json:"auprc,omitempty"`
	AUPRCInterval *eval.Interval `json:"auprc_interval,omitempty"`
	// Out is the folder of ScoresFile and the report.
	Out string `json:"-"`
}

// FlaggedSummary says how many rows were flagged and how many, at most,
// rows like the training rows would give; with fewer than 1/FlagLevel − 1
// held-out rows no p-value can reach FlagLevel ((1+k)/(1+n) ≥ 1/(1+n)),
// and it says so.
func (r TableScoreReport) FlaggedSummary() string {
	s := fmt.Sprintf("%d rows at p ≤ %g against the run's %d held-out rows (for rows like the training rows', at most %g %% would be)", r.Flagged, FlagLevel, r.HeldOut, 100*FlagLevel)
	if least := 1 / float64(r.HeldOut+1); least > FlagLevel {
		s += fmt.Sprintf("; with %d held-out rows no p-value is below %.4f", r.HeldOut, least)
	}
	return s
}

func (o TableScoreOptions) withDefaults() (TableScoreOptions, error) {
	o.Method, o.Resamples, o.Seed = cmp.Or(o.Method, density.MixedMethods[0]), cmp.Or(o.Resamples, 1000), cmp.Or(o.Seed, 1)
	switch {
	case o.Run == "":
		return o, errors.New("Options.Run: required: a train-table run folder")
	case o.Data == "":
		return o, errors.New("Options.Data: required: the CSV file of rows to score")
	case !slices.Contains(density.MixedMethods, o.Method):
		return o, fmt.Errorf("Options.Method %q: want one of %v", o.Method, density.MixedMethods)
	case o.Label == "" && len(o.Anomalies) > 0:
		return o, errors.New("Options.Anomalies: given without Options.Label, the column to look them up in")
	case o.Label != "" && len(o.Anomalies) == 0:
		return o, fmt.Errorf("Options.Anomalies: required with Options.Label %q: the values that mark an anomaly", o.Label)
	case o.Resamples < 1:
		return o, fmt.Errorf("Options.Resamples %d: want ≥ 1", o.Resamples)
	}
	if err := o.Read.Check(); err != nil { // before the run is opened
		return o, err
	}
	if o.Out == "" {
		base := strings.TrimSuffix(filepath.Base(o.Data), ".gz")
		o.Out = filepath.Join(o.Run, o.Method, "scores-"+strings.TrimSuffix(base, filepath.Ext(base)))
	}
	return o, nil
}

// ScoreTable ranks the rows of a CSV file by a TrainTable model's energy,
// highest (least typical) first, in o.Out's ScoresFile, each with its
// p-value against the run's held-out rows (TableModel.PValue) and, for a
// run with a target, the target's likeliest category; when a label column
// says which rows are anomalies, it measures the ranking's AUPRC with its
// 95 % bootstrap interval. The run must have finished measuring the
// method (OpenTableModel). The file is read against the run's schema:
// a word in a numeric column or a missing value is an error naming file,
// line and column, and so is a category training never saw unless
// o.Read.Unseen is table.UnseenAnomalous: such a row has probability 0
// under the model, energy +Inf (ranked first, p-value the least), no
// log-density (−Inf) nor prediction, and its unseen categories in the
// ranked file's last column.
func ScoreTable(o TableScoreOptions) (TableScoreReport, error) {
	o, err := o.withDefaults()
	if err != nil {
		return TableScoreReport{}, err
	}
	var rec tableRecord
	if err := readJSON(filepath.Join(o.Run, TableFile), &rec); err != nil {
		return TableScoreReport{}, fmt.Errorf("Options.Run: %w (a train-table run folder?)", err)
	}
	tab, err := table.ReadRows(o.Data, rec.Schema, o.Read)
	if err != nil {
		return TableScoreReport{}, fmt.Errorf("Options.Data: %w", err)
	}
	anomalous, err := o.anomalies(tab)
	if err != nil {
		return TableScoreReport{}, err
	}
	b, err := backend.OpenForCommand(cmp.Or(o.Backend, "auto"))
	if err != nil {
		return TableScoreReport{}, err
	}
	defer b.Finalize()
	model, err := OpenTableModel(b, o.Run, o.Method)
	if err != nil {
		return TableScoreReport{}, fmt.Errorf("Options.Method %s: %w", o.Method, err)
	}
	encoded, err := model.Encode(tab)
	if err != nil {
		return TableScoreReport{}, err
	}
	energies, probs, err := model.Score(encoded)
	if err != nil {
		return TableScoreReport{}, err
	}
	r := TableScoreReport{Run: o.Run, Method: o.Method, Step: model.Step, Data: o.Data, N: tab.N, Dropped: tab.Dropped, Label: o.Label,
		HeldOut: model.HeldOut(), Out: o.Out}
	seen := markUnseen(tab, energies, &r)
	if anomalous != nil {
		for _, a := range anomalous {
			r.Anomalies += btoi(a)
		}
		if r.AUPRC, err = eval.AUPRC(energies, anomalous); err != nil {
			return r, err
		}
		interval, err := eval.AUPRCInterval(energies, anomalous, o.Resamples, uint64(o.Seed))
		if err != nil {
			return r, err
		}
		r.AUPRCInterval = &interval
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return r, fmt.Errorf("Options.Out: %w", err)
	}
	if len(seen) > 0 { // else every row has an unseen category: no conditional to fit
		if r.ColumnFits, err = model.ColumnFits(firstRows(encoded, model.Width(), seen, fitRows)); err != nil {
			return r, fmt.Errorf("the columns' conditionals: %w", err)
		}
	}
	header, rows := model.scoredRows(tab, encoded, energies, probs, &r)
	if o.Label != "" && !slices.Contains(rec.Schema.Header(), o.Label) {
		header = append(header, o.Label)
		for i := range rows {
			rows[i] = append(rows[i], tab.Other[o.Label][i])
		}
	}
	if err := writeRanked(filepath.Join(o.Out, ScoresFile), header, rows, energies); err != nil {
		return r, err
	}
	return r, atomicfile.WriteJSON(filepath.Join(o.Out, TableScoreReportFile), r)
}

// markUnseen gives the rows of tab with a category training never saw
// energy +Inf (UnseenEnergies) and counts them and their categories in r;
// it returns the other rows' indices.
func markUnseen(tab *table.Table, energies []float64, r *TableScoreReport) (seen []int) {
	seen = UnseenEnergies(tab, energies)
	categories := map[string]bool{}
	for _, row := range tab.Unseen {
		for column, word := range row {
			categories[column+"="+word] = true
		}
		r.Unseen += btoi(row != nil)
	}
	r.UnseenCategories = slices.Sorted(maps.Keys(categories))
	return seen
}

// UnseenEnergies sets to +Inf the energy of each of tab's rows that holds
// a category training never saw (table.Table.Unseen, read with
// table.UnseenAnomalous): the model gives such a row probability 0
// whatever its other values, while its encoding (a placeholder category)
// scores as some other row. It returns the other rows' indices.
func UnseenEnergies(tab *table.Table, energies []float64) (seen []int) {
	for i := range tab.N {
		if tab.Unseen != nil && tab.Unseen[i] != nil {
			energies[i] = math.Inf(1)
			continue
		}
		seen = append(seen, i)
	}
	return seen
}

// firstRows is the encoded rows at the first n of indices, each width
// wide.
func firstRows(encoded []float32, width int, indices []int, n int) []float32 {
	out := make([]float32, 0, min(n, len(indices))*width)
	for _, i := range indices[:min(n, len(indices))] {
		out = append(out, encoded[i*width:(i+1)*width]...)
	}
	return out
}

// scoredRows is the ranked file's header and rows (writeRanked's layout:
// each row's line first): the line, the energy's p-value, the row's
// log-likelihood when the run estimated log Z, the target's
// likeliest category and its probability when the model has a target
// (empty for a row with an unseen category), then the row's fields, and,
// when some row has a category training never saw, each row's such
// categories (table.Table.UnseenSummary). It counts the rows at p ≤
// FlagLevel in r.
func (m *TableModel) scoredRows(tab *table.Table, encoded []float32, energies, probs []float64, r *TableScoreReport) (header []string, rows [][]string) {
	header = []string{"rank", "line", "energy", "p_value"}
	if m.HasLogZ {
		header = append(header, "log_density")
	}
	k := len(m.TargetCategories)
	if k > 0 {
		header = append(header, "predicted_"+m.Target, "predicted_probability")
	}
	header = append(header, m.Schema.Header()...)
	if tab.Unseen != nil {
		header = append(header, "unseen")
	}
	rows = make([][]string, tab.N)
	for i := range rows {
		p := m.PValue(energies[i])
		if p <= FlagLevel {
			r.Flagged++
		}
		rows[i] = []string{strconv.Itoa(tab.Lines[i]), strconv.FormatFloat(p, 'g', 6, 64)}
		if m.HasLogZ {
			rows[i] = append(rows[i], strconv.FormatFloat(m.LogDensity(encoded[i*m.Width():(i+1)*m.Width()], energies[i]), 'g', 8, 64))
		}
		unseen := tab.UnseenSummary(i)
		switch {
		case k > 0 && unseen != "":
			rows[i] = append(rows[i], "", "")
		case k > 0:
			row := probs[i*k : (i+1)*k]
			c := slices.Index(row, slices.Max(row))
			rows[i] = append(rows[i], m.TargetCategories[c], strconv.FormatFloat(row[c], 'f', 4, 64))
		}
		rows[i] = append(rows[i], tab.Fields(i)...)
		if tab.Unseen != nil {
			rows[i] = append(rows[i], unseen)
		}
	}
	return header, rows
}

// anomalies says which of tab's rows the label column marks as
// anomalies; nil without a label.
func (o TableScoreOptions) anomalies(tab *table.Table) ([]bool, error) {
	if o.Label == "" {
		return nil, nil
	}
	values, ok := tab.Other[o.Label]
	if !ok {
		return nil, fmt.Errorf("Options.Label %q: not a column of %s apart from the model's (%v)", o.Label, o.Data, slices.Sorted(maps.Keys(tab.Other)))
	}
	out := make([]bool, len(values))
	n := 0
	for i, v := range values {
		out[i] = slices.Contains(o.Anomalies, v)
		n += btoi(out[i])
	}
	if n == 0 || n == len(out) {
		return nil, fmt.Errorf("Options.Anomalies %q: %d of the %d rows of %s have such a %s: an AUPRC needs anomalies and normal rows", o.Anomalies, n, len(out), o.Data, o.Label)
	}
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rankedEnergyDigits are the significant digits of the energies
// writeRanked writes.
const rankedEnergyDigits = 8

// writeRanked writes rows ranked by energy, highest (least typical)
// first, as a CSV: header, then each row's rank, its first field (where it
// came from), its energy and its other fields.
func writeRanked(path string, header []string, rows [][]string, energies []float64) error {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(energies[b], energies[a]) })
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(header)
		for rank, i := range order {
			cw.Write(slices.Concat([]string{strconv.Itoa(rank + 1), rows[i][0], strconv.FormatFloat(energies[i], 'g', rankedEnergyDigits, 64)}, rows[i][1:]))
		}
		cw.Flush()
		return cw.Error()
	})
}

// readRankedEnergies reads the energies of a file writeRanked wrote, in
// its order (highest first).
func readRankedEnergies(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("%s: empty, want a header and ranked rows", path)
	}
	energies := make([]float64, 0, len(records)-1)
	for i, rec := range records[1:] {
		v, err := strconv.ParseFloat(rec[2], 64)
		if err != nil || math.IsNaN(v) {
			return nil, fmt.Errorf("%s, line %d: energy %q: want a number", path, i+2, rec[2])
		}
		energies = append(energies, v)
	}
	return energies, nil
}
