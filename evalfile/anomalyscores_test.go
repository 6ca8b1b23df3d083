package evalfile

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestAnomalyScoresRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), AnomalyScoresFile)
	labels := []bool{false, true, false}
	columns := [][]float64{{1.5, -2, 1e300}, {0, math.Inf(1), 3.25}}
	if err := WriteAnomalyScores(path, labels, columns); err != nil {
		t.Fatal(err)
	}
	gotLabels, gotColumns, err := ReadAnomalyScores(path)
	if err != nil || !reflect.DeepEqual(gotLabels, labels) || !reflect.DeepEqual(gotColumns, columns) {
		t.Errorf("read back %v %v (%v), want %v %v", gotLabels, gotColumns, err, labels, columns)
	}
	if err := WriteAnomalyScores(path, labels, [][]float64{{1}}); err == nil || !strings.Contains(err.Error(), "1 scores for 3 images") {
		t.Errorf("short column: %v", err)
	}
	for _, c := range []struct{ name, content, mention string }{
		{"not ours", "a,b\n1,2\n", "want a header"},
		{"bad label", "image,anomalous,score_0\n0,2,1.5\n", "anomalous = \"2\""},
		{"bad score", "image,anomalous,score_0\n0,1,x\n", "row 1"},
		// Each header check on its own: a file that fails only one of them
		// is still rejected.
		{"empty", "", "want a header"},
		{"header only, no image", "image,anomalous,score_0\n", "want a header"},
		{"no score column", "image,anomalous\n0,1\n", "want a header"},
		{"first column not image", "img,anomalous,score_0\n0,1,2\n", "want a header"},
		{"second column not anomalous", "image,label,score_0\n0,1,2\n", "want a header"},
		// Rows are numbered from 1 after the header.
		{"bad label in the second row", "image,anomalous,score_0\n0,1,1.5\n1,x,2\n", "row 2: anomalous = \"x\""},
	} {
		p := filepath.Join(t.TempDir(), "s.csv")
		if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadAnomalyScores(p); err == nil || !strings.Contains(err.Error(), c.mention) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s and %q", c.name, err, p, c.mention)
		}
	}
}
