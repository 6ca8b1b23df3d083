package runreport

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// writeGrid writes a small picture at path, dated at.
func writeGrid(t *testing.T, path string, at time.Time) {
	t.Helper()
	if err := plots.WriteImageGrid(path, make([]float32, 4*4*3), 1, 4, 4, 3, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// The report links the newest grids, the curves and the evaluation's
// pictures — every link a file in the run folder, no remote resource, no
// script — shows the evaluation beside the paper's numbers for the same
// data set and method, lists the settings, and escapes what it shows.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	old, recent := time.Now().Add(-time.Hour), time.Now()
	writeGrid(t, filepath.Join(dir, "samples-epoch001.png"), old)
	writeGrid(t, filepath.Join(dir, "samples-step000000900.png"), recent)
	writeGrid(t, filepath.Join(dir, "reconstructions-epoch001.png"), recent)
	writeGrid(t, filepath.Join(dir, "losses.png"), recent)
	evalDir := filepath.Join(dir, "eval")
	os.Mkdir(evalDir, 0o755)
	writeGrid(t, filepath.Join(evalDir, "samples.png"), recent)
	s := evalfile.Report{Checkpoint: "c", Data: "svhn", Method: "ed", Step: 900, ReconstructionImages: 1000, ReconstructionMSE: 0.0123,
		FIDSamples: 5000, FID: 41.5, Chains: 8, ChainSteps: 2000, RHat: 1.01, SplitRHat: 1.02, AnomalyHeldOut: -1,
		GenerationSampler: "hmc", GenerationLeapfrogSteps: 5, GenerationAcceptance: 0.8125}
	if err := atomicfile.WriteJSON(filepath.Join(evalDir, evalfile.ReportFile), s); err != nil {
		t.Fatal(err)
	}
	cfg, err := lebm.DefaultConfig("svhn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.SMVariant = "<fisher & co>" // must come out escaped
	run := Run{Dir: dir, Config: cfg, Step: 900, Total: 1800}
	run.Load()
	if run.Eval == nil {
		t.Fatal("Load found no evaluation in eval/")
	}
	if err := Write(run); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, training.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	for _, want := range []string{
		"<title>ED-LEBM on svhn</title>", "step 900 of 1800 (50 %)",
		`src="samples-step000000900.png"`, `src="reconstructions-epoch001.png"`, `src="losses.png"`, `src="eval/samples.png"`,
		"<td class=\"num\">0.0123</td><td class=\"num\">0.006</td>", // MSE beside the paper's ED-LEBM on SVHN
		"<td class=\"num\">41.50</td><td class=\"num\">28.1</td>",   // FID beside the paper's
		"<td>ED.M</td><td>16</td>", "&lt;fisher &amp; co&gt;",
		"generation chains (hmc, 5 leapfrog steps): proposals accepted</td><td class=\"num\">0.812</td>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	if strings.Contains(html, "samples-epoch001.png") {
		t.Error("report links the older sample grid")
	}
	if regexp.MustCompile(`(?i)<script|https?://|src="/`).MatchString(html) {
		t.Error("report has a script, a remote resource or an absolute link")
	}
	for _, m := range regexp.MustCompile(`src="([^"]+)"`).FindAllStringSubmatch(html, -1) {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("link %s: %v", m[1], err)
		}
	}
}

// A run without pictures or evaluation yet says so; an anomaly run of
// MNIST shows the paper's AUPRC for its held-out digit, and a data set the
// paper has no numbers for says that.
func TestReportEarlyAndAnomalyRuns(t *testing.T) {
	dir := t.TempDir()
	cfg, err := lebm.DefaultConfig("mnist")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Method, cfg.AnomalyHoldout = "cd", 4
	if err := Write(Run{Dir: dir, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, training.ReportFile))
	for _, want := range []string{"CD-LEBM on mnist, class 4 held out", "No pictures yet", "No curves yet", "Not evaluated yet"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("early report lacks %q", want)
		}
	}
	s := evalfile.Report{Checkpoint: "c", Data: "mnist", Method: "cd", AnomalyHeldOut: 4, AnomalyImages: 2000, AnomalyAUPRC: 0.5,
		AnomalyAUPRCs: []float64{0.49, 0.51}}
	rows, note := evalRows(s, cfg)
	if got := rows[len(rows)-2]; got.Ours != "0.500 (mean of 2 checkpoints)" || got.Paper != "0.630 ± 0.02" {
		t.Errorf("anomaly row %+v, want ours 0.500 over 2 checkpoints beside the paper's CD-LEBM 0.630 ± 0.02 for digit 4", got)
	}
	if !strings.Contains(note, "MNIST anomaly table") {
		t.Errorf("note %q", note)
	}
	s.Data = "fashion-mnist"
	if _, note := evalRows(s, cfg); !strings.Contains(note, "no numbers for this data set") {
		t.Errorf("fashion-mnist note %q", note)
	}
}
