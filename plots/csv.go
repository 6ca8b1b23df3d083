package plots

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/edlebm/edlebm/atomicfile"
)

// WriteCSV atomically writes a CSV file with one header line and one line
// per row. Values are written in the shortest form that parses back to the
// same float64 (NaN and ±Inf as "NaN", "+Inf", "-Inf", which
// strconv.ParseFloat reads). Every row must have len(header) values.
func WriteCSV(path string, header []string, rows [][]float64) error {
	for i, row := range rows {
		if len(row) != len(header) {
			return fmt.Errorf("plots: csv %s: row %d has %d values, want %d (one per header column)",
				path, i, len(row), len(header))
		}
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		record := make([]string, len(header))
		for _, row := range rows {
			for j, v := range row {
				record[j] = strconv.FormatFloat(v, 'g', -1, 64)
			}
			if err := cw.Write(record); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}
