package evalfile

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"

	"github.com/edlebm/edlebm/plots"
)

// AnomalyScoresFile is the name cmd/eval-lebm gives the anomaly scores
// beside its Report: enough to recompute or bootstrap the AUPRC.
const AnomalyScoresFile = "anomaly_scores.csv"

// WriteAnomalyScores writes, atomically, a CSV with a row per scored image:
// its index, 1 if anomalous else 0, and its score under each checkpoint
// (one column of scores per checkpoint, all as long as labels).
func WriteAnomalyScores(path string, labels []bool, columns [][]float64) error {
	header := []string{"image", "anomalous"}
	for i, c := range columns {
		if len(c) != len(labels) {
			return fmt.Errorf("eval: anomaly scores %s: column %d has %d scores for %d images", path, i, len(c), len(labels))
		}
		header = append(header, fmt.Sprintf("score_%d", i))
	}
	rows := make([][]float64, len(labels))
	for i, anomalous := range labels {
		rows[i] = []float64{float64(i), 0}
		if anomalous {
			rows[i][1] = 1
		}
		for _, c := range columns {
			rows[i] = append(rows[i], c[i])
		}
	}
	return plots.WriteCSV(path, header, rows)
}

// ReadAnomalyScores reads a file WriteAnomalyScores wrote.
func ReadAnomalyScores(path string) (labels []bool, columns [][]float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("eval: anomaly scores: %w", err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("eval: anomaly scores %s: %w", path, err)
	}
	if len(records) < 2 || len(records[0]) < 3 || records[0][0] != "image" || records[0][1] != "anomalous" {
		return nil, nil, fmt.Errorf("eval: anomaly scores %s: want a header image,anomalous,score_0,… and a row per image", path)
	}
	columns = make([][]float64, len(records[0])-2)
	for i, r := range records[1:] {
		switch r[1] {
		case "0", "1":
			labels = append(labels, r[1] == "1")
		default:
			return nil, nil, fmt.Errorf("eval: anomaly scores %s: row %d: anomalous = %q, want 0 or 1", path, i+1, r[1])
		}
		for c := range columns {
			v, err := strconv.ParseFloat(r[2+c], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("eval: anomaly scores %s: row %d: %w", path, i+1, err)
			}
			columns[c] = append(columns[c], v)
		}
	}
	return labels, columns, nil
}
