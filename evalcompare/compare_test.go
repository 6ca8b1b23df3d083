package evalcompare

import (
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/evalfile"
)

// checkContains fails t for each of wants that comparison.md's text md
// lacks.
func checkContains(t *testing.T, md []byte, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison.md lacks %q:\n%s", want, md)
		}
	}
}

// compareIn runs Compare on args with resamples bootstrap resamples
// into a new folder and returns the folder and its comparison.md.
func compareIn(t *testing.T, args []string, resamples int) (out string, md []byte) {
	t.Helper()
	out = t.TempDir()
	returned, err := Compare(Options{Reports: args, Out: out, Bootstrap: resamples})
	if err != nil {
		t.Fatal(err)
	}
	md, err = os.ReadFile(filepath.Join(out, "comparison.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != returned {
		t.Errorf("Compare returned\n%s\nbut wrote\n%s", returned, md)
	}
	return out, md
}

// writeReport saves r as an eval folder's summary.json and returns the folder.
func writeReport(t *testing.T, r evalfile.Report) string {
	t.Helper()
	dir := t.TempDir()
	if r.Checkpoint == "" {
		r.Checkpoint = filepath.Join(dir, "checkpoint")
	}
	if err := atomicfile.WriteJSON(filepath.Join(dir, evalfile.ReportFile), r); err != nil {
		t.Fatal(err)
	}
	return dir
}

// anomalyReport is a report of method on held-out class with the given
// per-snapshot AUPRCs, 100 images scored of which positives anomalous.
func anomalyReport(method string, class, positives int, auprcs ...float64) evalfile.Report {
	mean := 0.0
	for _, a := range auprcs {
		mean += a / float64(len(auprcs))
	}
	return evalfile.Report{Data: "fashion-mnist", Method: method, Step: 300, AnomalyHeldOut: class, AnomalyImages: 100,
		AnomalyPositives: positives, AnomalyAUPRC: mean, AnomalyAUPRCs: auprcs}
}

func TestAnomalyComparison(t *testing.T) {
	args := []string{
		writeReport(t, anomalyReport("ed", 4, 40, 0.5, 0.7)),
		writeReport(t, anomalyReport("cd", 4, 40, 0.4)),
		writeReport(t, anomalyReport("ed", 1, 25, 0.2, 0.3, 0.4)),
		"CD-long=" + writeReport(t, anomalyReport("cd", 1, 25, 0.9)),
	}
	out, md := compareIn(t, args, 0)
	// Classes sorted; columns by first appearance; the snapshot range in
	// brackets; chance = positives / images; ed's mean (0.6 + 0.3) / 2;
	// cd and CD-long each have one class of two.
	checkContains(t, md,
		"| held-out class | ed | cd | CD-long | chance (anomaly share) |",
		"| 1 | 0.300 (0.200–0.400) | — | 0.900 | 0.250 |",
		"| 4 | 0.600 (0.500–0.700) | 0.400 | — | 0.400 |",
		"| mean | **0.450** | **0.400** (1 of 2 classes) | **0.900** (1 of 2 classes) | |",
		"0.600 (4; 100; 2)",
	)
	// Only the metrics the reports hold get columns.
	for _, absent := range []string{"FID", "recon. MSE", "R̂"} {
		if strings.Contains(string(md), absent) {
			t.Errorf("comparison.md has a %q column, but no report holds it:\n%s", absent, md)
		}
	}
	f, err := os.Open(filepath.Join(out, "anomaly_auprc.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() != 800 {
		t.Errorf("anomaly_auprc.png: %v, want an 800-pixel-wide PNG", err)
	}
}

// TestReportLinksAreRelative checks the report column: a link from the
// comparison's folder to each report, as a relative path, so that both
// can move together (into docs/results/…).
func TestReportLinksAreRelative(t *testing.T) {
	r := evalfile.Report{Checkpoint: "ckpt", Data: "fashion-mnist", Method: "ed", Step: 3, ReconstructionImages: 10, ReconstructionMSE: 0.1, AnomalyHeldOut: -1}
	out := t.TempDir()
	run1 := filepath.Join(out, "ed-s1", "eval")
	if err := os.MkdirAll(run1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteJSON(filepath.Join(run1, evalfile.ReportFile), r); err != nil {
		t.Fatal(err)
	}
	elsewhere := writeReport(t, r)
	if _, err := Compare(Options{Reports: []string{run1, filepath.Join(elsewhere, evalfile.ReportFile)}, Out: out}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "comparison.md"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(out, elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.ToSlash(filepath.Join(rel, evalfile.ReportFile))
	for _, want := range []string{"| ed | [ed-s1/eval](ed-s1/eval) |", "| ed | [" + outside + "](" + outside + ") |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison.md lacks %q:\n%s", want, md)
		}
	}
}

func TestMetricsOnlyComparison(t *testing.T) {
	r := evalfile.Report{Data: "fashion-mnist", Method: "sm", Step: 12, ReconstructionImages: 500, ReconstructionMSE: 0.10743,
		Chains: 8, ChainSteps: 500, RHat: 1.284, SplitRHat: 1.339, AnomalyHeldOut: -1, Classifier: "clf", FIDSamples: 5000, ClassifierFID: 105.96}
	out, md := compareIn(t, []string{writeReport(t, r)}, 0)
	if want := "| sm |"; !strings.Contains(string(md), want) || !strings.Contains(string(md), "| fashion-mnist | 12 | 0.1074 (500) | 105.96 (5000) | 1.28 / 1.34 (8 × 500) |") {
		t.Errorf("comparison.md:\n%s\nwant the sm row with its data, step, MSE, classifier-FID and R̂", md)
	}
	if strings.Contains(string(md), "held-out class") {
		t.Errorf("comparison.md has an anomaly table without anomaly results:\n%s", md)
	}
	if _, err := os.Stat(filepath.Join(out, "anomaly_auprc.png")); !os.IsNotExist(err) {
		t.Errorf("anomaly_auprc.png written without anomaly results (%v)", err)
	}
	if strings.Contains(string(md), "proposals accepted") {
		t.Errorf("comparison.md has a generation column for Langevin generation alone:\n%s", md)
	}
	// Exact generation beside the paper's Langevin: the column appears,
	// with "—" for the Langevin run.
	mala := r
	mala.Method, mala.GenerationSampler, mala.GenerationAcceptance = "ed", "mala", 0.9904
	_, md = compareIn(t, []string{writeReport(t, r), writeReport(t, mala)}, 0)
	for _, want := range []string{"generation (proposals accepted)", "| mala (0.990) |", "(8 × 500) | — |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison.md lacks %q:\n%s", want, md)
		}
	}
}

func TestBadInput(t *testing.T) {
	ed4 := writeReport(t, anomalyReport("ed", 4, 40, 0.5))
	old := anomalyReport("", 4, 40, 0.5)
	mnist := anomalyReport("cd", 1, 40, 0.5)
	mnist.Data = "mnist"
	notReport := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(notReport, []byte(`{"loss": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		args      []string
		resamples int
		mention   []string
	}{
		{"no arguments", nil, 0, []string{"no reports"}},
		{"negative resamples", []string{ed4}, -1, []string{"Options.Bootstrap -1"}},
		{"missing report", []string{"ed=" + filepath.Join(ed4, "nothing")}, 0, []string{"nothing", "no such file"}},
		{"not a report", []string{notReport}, 0, []string{notReport, "not an eval-lebm"}},
		{"empty label", []string{"=" + ed4}, 0, []string{"empty label"}},
		{"same class and label twice", []string{ed4, writeReport(t, anomalyReport("ed", 4, 40, 0.6))}, 0, []string{"held-out class 4", `"ed"`, ed4}},
		{"two data sets", []string{ed4, writeReport(t, mnist)}, 0, []string{"mnist", "fashion-mnist", "one data set"}},
		{"no method, no label", []string{writeReport(t, old)}, 0, []string{"names no method", "LABEL="}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compare(Options{Reports: c.args, Out: t.TempDir(), Bootstrap: c.resamples})
			for _, m := range c.mention {
				if err == nil || !strings.Contains(err.Error(), m) {
					t.Errorf("error %v, want one mentioning %q", err, m)
				}
			}
		})
	}
}

// scoredReport writes an anomaly report of method on class 1 with its
// scores file: one snapshot scoring the images, the AUPRC computed from them.
func scoredReport(t *testing.T, method string, labels []bool, scores []float64) string {
	t.Helper()
	auprc, err := eval.AUPRC(scores, labels)
	if err != nil {
		t.Fatal(err)
	}
	positives := 0
	for _, l := range labels {
		if l {
			positives++
		}
	}
	r := anomalyReport(method, 1, positives, auprc)
	r.AnomalyImages = len(labels)
	dir := writeReport(t, r)
	if err := evalfile.WriteAnomalyScores(filepath.Join(dir, evalfile.AnomalyScoresFile), labels, [][]float64{scores}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBootstrapIntervals(t *testing.T) {
	// 40 images, every third an anomaly. "ed" ranks every anomaly first;
	// "cd" scores by a fixed pseudo-random pattern, "sm" exactly as "cd".
	labels := make([]bool, 40)
	perfect, noisy := make([]float64, 40), make([]float64, 40)
	for i := range labels {
		labels[i] = i%3 == 0
		noisy[i] = float64((i * 17) % 23)
		if labels[i] {
			perfect[i] = 100 + noisy[i]
		} else {
			perfect[i] = noisy[i]
		}
	}
	args := []string{scoredReport(t, "ed", labels, perfect), scoredReport(t, "cd", labels, noisy), scoredReport(t, "sm", labels, noisy)}
	_, md := compareIn(t, args, 500)
	cdAUPRC, _ := eval.AUPRC(noisy, labels)
	checkContains(t, md,
		// A perfect ranking stays perfect in every resample.
		"| 1 | 1.000 [1.000, 1.000] |",
		// ed − cd: the reports' difference, its interval above 0 (bold);
		// cd − sm: identical scores differ by exactly 0 in every paired
		// resample (unpaired resamples would not), so not bold.
		fmt.Sprintf("| 1 | **%+.3f [", 1-cdAUPRC),
		" +0.000 [+0.000, +0.000] |\n",
		"Brackets: 95 % bootstrap intervals over the scored images (500 resamples).",
	)
	// cd's interval holds its AUPRC.
	var v, lo, hi float64
	row := string(md)[strings.Index(string(md), "| 1 | 1.000 [1.000, 1.000] |")+len("| 1 | 1.000 [1.000, 1.000] |"):]
	if _, err := fmt.Sscanf(row, " %f [%f, %f]", &v, &lo, &hi); err != nil || math.Abs(v-cdAUPRC) > 5e-4 || !(lo <= v && v <= hi && lo < hi) {
		t.Errorf("cd cell %q (%v): want %.3f inside a non-empty interval", row[:30], err, cdAUPRC)
	}

	// A scores file that does not match its report is an error.
	bad := scoredReport(t, "ed", labels, perfect)
	if err := evalfile.WriteAnomalyScores(filepath.Join(bad, evalfile.AnomalyScoresFile), labels, [][]float64{perfect, perfect}); err != nil {
		t.Fatal(err)
	}
	if _, err := Compare(Options{Reports: []string{bad}, Out: t.TempDir(), Bootstrap: 10}); err == nil || !strings.Contains(err.Error(), "2 score columns") {
		t.Errorf("mismatched scores file: error %v, want one naming the 2 score columns", err)
	}
}

// epochReport is a report of method for the run folder run (its
// checkpoint's parent) with a reconstruction MSE and classifier-FID
// (intervals included) and per-epoch results of the given MSEs and FIDs.
func epochReport(method, run string, mse, fid float64, epochMSE, epochFID []float64) evalfile.Report {
	r := evalfile.Report{Checkpoint: filepath.Join("runs", run, "checkpoint"), Data: "fashion-mnist", Method: method, Step: 9360,
		ReconstructionImages: 1000, ReconstructionMSE: mse, ReconstructionMSEInterval: &eval.Interval{Lo: mse - 0.001, Hi: mse + 0.002},
		Classifier: "clf", FIDSamples: 5000, ClassifierFID: fid, ClassifierFIDInterval: &eval.Interval{Lo: fid - 1, Hi: fid + 2},
		Chains: 8, ChainSteps: 2000, RHat: 1.01, SplitRHat: 1.02, AnomalyHeldOut: -1}
	for i := range epochMSE {
		r.Epochs = append(r.Epochs, evalfile.EpochReport{Epoch: int64(i + 1), Step: int64(468 * (i + 1)), ReconstructionMSE: epochMSE[i], ClassifierFID: epochFID[i], RHat: 1.5})
	}
	return r
}

func TestSeedsAndEpochCurves(t *testing.T) {
	args := []string{
		writeReport(t, epochReport("ed", "ed-s1", 0.04, 16, []float64{0.09, 0.05}, []float64{40, 20})),
		writeReport(t, epochReport("cd", "cd-s1", 0.05, 35, []float64{0.1, 0.06}, []float64{60, 0})), // epoch 2's FID not measured
		writeReport(t, epochReport("ed", "ed-s2", 0.06, 18, nil, nil)),
	}
	out, md := compareIn(t, args, 0)
	rel, err := filepath.Rel(out, args[0])
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, md,
		// Intervals in brackets.
		"| ed | ["+rel+"]("+rel+") | fashion-mnist | 9360 | 0.0400 [0.0390, 0.0420] (1000) | 16.00 [15.00, 18.00] (5000) |",
		// ed's two seeds: means (0.04 + 0.06) / 2 and (16 + 18) / 2 with their ranges; cd's one.
		"| label | runs | recon. MSE | classifier-FID | R̂ |",
		"| ed | 2 | 0.0500 (0.0400–0.0600) | 17.00 (16.00–18.00) | 1.010 (1.010–1.010) |",
		"| cd | 1 | 0.0500 | 35.00 | 1.010 |",
		// Per-epoch tables: runs with per-epoch results only, named by
		// label and run folder; a measure missing at an epoch is a dash.
		"| epoch | ed (ed-s1) | cd (cd-s1) |",
		"| 1 | 0.0900 | 0.1000 |",
		"| 2 | 0.0500 | 0.0600 |",
		"| 1 | 40.00 | 60.00 |",
		"| 2 | 20.00 | — |",
		"| 2 | 1.500 | 1.500 |",
	)
	for _, name := range []string{"epochs_reconstruction_mse.png", "epochs_classifier_fid.png", "epochs_r_hat.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
	if _, err := os.Stat(filepath.Join(out, "epochs_fid.png")); !os.IsNotExist(err) {
		t.Errorf("epochs_fid.png written, but no report measured the FID (%v)", err)
	}
}
