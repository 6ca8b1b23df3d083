package lebmrun

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/training"
)

// scoreFixture saves a fresh 28×28 grey model (3 test posterior steps) as
// a run, and writes 7 Fashion-MNIST test images into images/normal and 3
// into images/odd. It returns the run folder, the images folder and the
// images in the order Score lists them.
func scoreFixture(t *testing.T) (run, dir string, images *datasets.Images) {
	testutil.RequireFashionMNIST(t)
	cfg, err := lebm.DefaultConfig(lebm.FolderData)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Generator, err = lebm.ImageGenerator(28, 1); err != nil {
		t.Fatal(err)
	}
	cfg.Seed, cfg.TestPosteriorLangevin.Steps = 3, 3
	model, err := lebm.New(testutil.Backend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	run, dir = t.TempDir(), t.TempDir()
	if err := model.Save(training.Folder{Dir: run}.Checkpoints()); err != nil {
		t.Fatal(err)
	}
	images, err = byname.Load("fashion-mnist", mnist.DefaultFashionDir, "test", 10)
	if err != nil {
		t.Fatal(err)
	}
	normal, _ := images.Subset([]int{0, 1, 2, 3, 4, 5, 6})
	odd, _ := images.Subset([]int{7, 8, 9})
	testutil.WriteImagesAsPNG(t, filepath.Join(dir, "normal"), normal)
	testutil.WriteImagesAsPNG(t, filepath.Join(dir, "odd"), odd)
	return run, dir, images
}

// TestScoreRanksTheRunsAnomalyScores scores ten images in batches of four
// and checks every output against an independent computation: the scores
// against lebm.Model.AnomalyScoreSeeded on each image alone (its chain is
// its own: neither its batch nor the padding of the last may change it), the
// ranking and CSV against the scores, the AUPRC against eval.AUPRC.
func TestScoreRanksTheRunsAnomalyScores(t *testing.T) {
	run, dir, images := scoreFixture(t)
	report, ranked, err := Score(ScoreOptions{Run: run, Images: dir, AnomalousClasses: []string{"odd"}, Backend: testutil.BackendName(), Batch: 4, Show: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}

	model, err := lebm.Load(testutil.Backend(), training.Folder{Dir: run}.Checkpoints())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for k := range 10 { // each image alone: its score must not depend on its batch
		pixels := images.Pixels[k*784 : (k+1)*784]
		y, err := model.AnomalyScoreSeeded(tensors.FromFlatDataAndDimensions(pixels, 1, 28, 28, 1), lebm.ImageSeeds(7, pixels, 784))
		if err != nil {
			t.Fatal(err)
		}
		class, index := "normal", k
		if k >= 7 {
			class, index = "odd", k-7
		}
		want[class+"/0000"+strconv.Itoa(index)+".png"] = float64(tensors.MustCopyFlatData[float32](y)[0])
	}
	if len(ranked) != 10 || report.N != 10 || report.Anomalies != 3 {
		t.Fatalf("%d rows, report %+v; want 10 images, 3 anomalies", len(ranked), report)
	}
	var scores []float64
	var labels []bool
	for i, r := range ranked {
		if w, ok := want[r.File]; !ok || math.Abs(r.Score-w) > 1e-5*(1+math.Abs(w)) {
			t.Errorf("%s: score %v, want %v, the image's score alone", r.File, r.Score, w)
		}
		if i > 0 && r.Score > ranked[i-1].Score {
			t.Errorf("rank %d scores %v, above rank %d's %v", i+1, r.Score, i, ranked[i-1].Score)
		}
		if r.Anomaly != strings.HasPrefix(r.File, "odd/") {
			t.Errorf("%s: anomaly %v", r.File, r.Anomaly)
		}
		scores, labels = append(scores, r.Score), append(labels, r.Anomaly)
	}
	if auprc, _ := eval.AUPRC(scores, labels); report.AUPRC != auprc || report.AUPRCInterval == nil ||
		!(report.AUPRCInterval.Lo <= auprc && auprc <= report.AUPRCInterval.Hi) {
		t.Errorf("AUPRC %v in %+v, want eval.AUPRC's %v inside its interval", report.AUPRC, report.AUPRCInterval, auprc)
	}

	rows := testutil.ReadCSV(t, filepath.Join(report.Out, ScoresFile))
	if !slices.Equal(rows[0], []string{"rank", "file", "score", "anomaly"}) || len(rows) != 11 {
		t.Fatalf("scores.csv: header %v and %d rows", rows[0], len(rows)-1)
	}
	for i, r := range rows[1:] {
		score, _ := strconv.ParseFloat(r[2], 64)
		if r[0] != strconv.Itoa(i+1) || r[1] != ranked[i].File || testutil.MaxRelativeDiff([]float64{score}, []float64{ranked[i].Score}, 1) > 1e-7 || r[3] != map[bool]string{true: "1", false: "0"}[ranked[i].Anomaly] {
			t.Errorf("scores.csv row %d: %v, want %+v", i+1, r, ranked[i])
		}
	}
	for _, name := range []string{MostAnomalousPlot, MostTypicalPlot, ScoreReportFile} {
		if _, err := os.Stat(filepath.Join(report.Out, name)); err != nil {
			t.Error(err)
		}
	}
	if want := filepath.Join(run, training.EvalDir, "scores-"+filepath.Base(dir)); report.Out != want {
		t.Errorf("results in %s, want %s", report.Out, want)
	}
}

// TestScoreRefusesBadLabels checks that labels that do not fit the images
// are refused, naming the file, line or class, before anything is scored
// or written.
func TestScoreRefusesBadLabels(t *testing.T) {
	run, dir, _ := scoreFixture(t)
	labels := func(text string) string {
		p := filepath.Join(t.TempDir(), "labels.csv")
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	var all strings.Builder
	all.WriteString("file,anomaly\n")
	for i := range 7 {
		all.WriteString("normal/0000" + strconv.Itoa(i) + ".png,0\n")
	}
	for _, tc := range []struct {
		name string
		o    ScoreOptions
		want []string
	}{
		{"a missing row", ScoreOptions{Labels: labels(all.String())}, []string{"no row for odd/00000.png"}},
		{"a bad value", ScoreOptions{Labels: labels(all.String() + "odd/00000.png,maybe\n")}, []string{"line 9", `anomaly "maybe"`}},
		{"a second row", ScoreOptions{Labels: labels(all.String() + "normal/00000.png,1\n")}, []string{"line 9", "a second row for normal/00000.png"}},
		{"no anomalies", ScoreOptions{Labels: labels(all.String() + "odd/00000.png,0\nodd/00001.png,normal\nodd/00002.png,false\n")}, []string{"0 of the 10 images anomalies"}},
		{"an unknown class", ScoreOptions{AnomalousClasses: []string{"cats"}}, []string{`no class folder "cats"`, "[normal odd]"}},
		{"labels twice", ScoreOptions{Labels: "x.csv", AnomalousClasses: []string{"odd"}}, []string{"give one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Run, o.Images, o.Backend, o.Batch = run, dir, testutil.BackendName(), 4
			_, _, err := Score(o)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("error %v, want one saying %q", err, w)
				}
			}
			if o.Labels != "" && tc.name != "labels twice" && !strings.Contains(err.Error(), o.Labels) && tc.name != "no anomalies" {
				t.Errorf("error %v does not name %s", err, o.Labels)
			}
			if _, err := os.Stat(training.Folder{Dir: run}.Eval()); err == nil {
				t.Errorf("%s was written", training.Folder{Dir: run}.Eval())
			}
		})
	}
}
