package evalfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/atomicfile"
)

func TestReadReportRoundTrip(t *testing.T) {
	want := Report{
		Checkpoint: "runs/x/checkpoint", Data: "fashion-mnist", Method: "cd", Step: 300,
		TestPosteriorSteps: 100, TestPosteriorStepSize: 0.1, GenerationSteps: 500, GenerationStepSize: 0.2,
		ReconstructionImages: 64, ReconstructionMSE: 0.1, Chains: 2, ChainSteps: 100, RHat: 1.1, SplitRHat: 1.2,
		FinalMeanEnergy: -3, AnomalyHeldOut: 4, AnomalyImages: 640, AnomalyPositives: 230, AnomalyAUPRC: 0.5,
		AnomalyAUPRCs: []float64{0.4, 0.6}, AnomalyCheckpoints: []string{"a", "b"},
		Classifier: "clf", FIDSamples: 5000, ClassifierFID: 12, Inception: "w.pth", FIDStats: "s.stats", FID: 30,
	}
	dir := t.TempDir()
	if err := atomicfile.WriteJSON(filepath.Join(dir, ReportFile), want); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Join(dir, ReportFile)} {
		got, err := ReadReport(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("ReadReport(%s) = %+v, want %+v", path, *got, want)
		}
	}
}

func TestReadReportRejectsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content string
		mention       []string
	}{
		{"not json", "step 3", []string{"not an eval-lebm summary.json"}},
		{"another json", `{"checkpoint": "c", "loss": 3}`, []string{"not an eval-lebm", "loss"}},
		{"no checkpoint", `{"step": 3}`, []string{"no \"checkpoint\""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadReport(path)
			for _, m := range append(c.mention, path) {
				if err == nil || !strings.Contains(err.Error(), m) {
					t.Errorf("error %v, want one mentioning %q", err, m)
				}
			}
		})
	}
	if _, err := ReadReport(filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing report: error %v, want \"no such file\"", err)
	}
}

func TestReportHasAnomaly(t *testing.T) {
	for _, c := range []struct {
		r    Report
		want bool
	}{
		{Report{AnomalyHeldOut: -1}, false},
		{Report{AnomalyHeldOut: 0}, false},
		{Report{AnomalyHeldOut: 0, AnomalyAUPRCs: []float64{0.3}}, true},
		{Report{AnomalyHeldOut: -1, AnomalyAUPRCs: []float64{0.3}}, false},
	} {
		if got := c.r.HasAnomaly(); got != c.want {
			t.Errorf("%+v.HasAnomaly() = %v, want %v", c.r, got, c.want)
		}
	}
}

// TestReadReportAnomalyHeldOutDefault checks that a report without
// "anomaly_held_out" reads as -1 (no anomaly evaluation, as the field's doc
// says) while an explicit class 0 is kept.
func TestReadReportAnomalyHeldOutDefault(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content string
		want          int
	}{
		{"absent", `{"checkpoint": "c", "step": 3}`, -1},
		{"absent with AUPRCs", `{"checkpoint": "c", "anomaly_auprcs": [0.5]}`, -1},
		{"class 0", `{"checkpoint": "c", "anomaly_held_out": 0, "anomaly_auprcs": [0.5]}`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := ReadReport(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.AnomalyHeldOut != c.want {
				t.Errorf("AnomalyHeldOut = %d, want %d", r.AnomalyHeldOut, c.want)
			}
			if got, want := r.HasAnomaly(), c.want >= 0; got != want {
				t.Errorf("HasAnomaly() = %v, want %v", got, want)
			}
		})
	}
}
