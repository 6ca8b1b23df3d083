package lebmrun

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/imagefolder"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/internal/progress"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// Names of the files Score writes into its output folder.
const (
	ScoresFile        = "scores.csv"
	ScoreReportFile   = "scores.json"
	MostAnomalousPlot = "most-anomalous.png"
	MostTypicalPlot   = "most-typical.png"
)

// ScoreOptions say which trained run scores which images, and where the
// results go.
type ScoreOptions struct {
	// Run is a train-lebm run folder; its checkpoint scores.
	Run string
	// Images is a folder of PNG and JPEG images, in any layout package
	// imagefolder reads (directly, or in class folders).
	Images string
	// Labels, when set, is a CSV file saying which images are anomalies:
	// a header, then rows "file,anomaly", file relative to Images and
	// anomaly 1/0, true/false or anomaly/normal; every image must have a
	// row.
	Labels string
	// AnomalousClasses, instead of Labels, names the class folders of
	// Images whose images are anomalies; the others are normal.
	AnomalousClasses []string
	// Out is the folder the results go to (default: the run's eval folder,
	// scores-BASE, BASE the base name of Images).
	Out string
	// Backend is the GoMLX backend (backend.Resolve's syntax; "" for auto).
	Backend string
	// Batch is the number of images scored at a time (0: 64).
	Batch int
	// Seed seeds the posterior chains (0: 1), so that a file's score does
	// not depend on what ran before.
	Seed int64
	// Enlarge accepts images smaller than the run's, enlarging them; a run
	// trained on a folder with Options.Enlarge always does.
	Enlarge bool
	// Show is the number of images in each picture (0: 16).
	Show int
	// Resamples is the number of bootstrap resamples of the AUPRC's
	// interval (0: 1000).
	Resamples int
}

// ScoreReport is what Score measured, as ScoreReportFile holds it.
type ScoreReport struct {
	Run        string `json:"run"`
	Checkpoint string `json:"checkpoint"`
	Step       int64  `json:"step"`
	Images     string `json:"images"`
	N          int    `json:"n"`
	Seed       int64  `json:"seed"`
	// Anomalies, AUPRC and its 95 % bootstrap interval are set when the
	// options say which images are anomalies.
	Anomalies     int            `json:"anomalies,omitempty"`
	AUPRC         float64        `json:"auprc,omitempty"`
	AUPRCInterval *eval.Interval `json:"auprc_interval,omitempty"`
	// Out is where the results were written.
	Out string `json:"out"`
}

// ScoredImage is one row of ScoresFile.
type ScoredImage struct {
	// File is relative to ScoreOptions.Images, with forward slashes.
	File string
	// Score is lebm.Model.AnomalyScore: higher is less typical of the
	// training images.
	Score float64
	// Anomaly is what the labels say (false when there are none).
	Anomaly bool
}

// withDefaults fills the zero fields that have a default and checks the
// others, naming the option at fault.
func (o ScoreOptions) withDefaults() (ScoreOptions, error) {
	o.Batch, o.Seed, o.Show, o.Resamples = cmp.Or(o.Batch, 64), cmp.Or(o.Seed, 1), cmp.Or(o.Show, 16), cmp.Or(o.Resamples, 1000)
	switch {
	case o.Run == "":
		return o, errors.New("lebmrun: ScoreOptions.Run, the train-lebm run folder, is required")
	case o.Images == "":
		return o, errors.New("lebmrun: ScoreOptions.Images, the folder of images to score, is required")
	case o.Labels != "" && len(o.AnomalousClasses) > 0:
		return o, errors.New("lebmrun: ScoreOptions.Labels and AnomalousClasses both say which images are anomalies: give one")
	case o.Batch < 1 || o.Show < 1 || o.Resamples < 1:
		return o, fmt.Errorf("lebmrun: ScoreOptions Batch %d, Show %d and Resamples %d must be ≥ 1", o.Batch, o.Show, o.Resamples)
	}
	if o.Out == "" {
		o.Out = filepath.Join(training.Folder{Dir: o.Run}.Eval(), "scores-"+filepath.Base(filepath.Clean(o.Images)))
	}
	return o, nil
}

// Score scores every image of a folder with a trained run's anomaly score,
// the score of the held-out-class protocol (lebm.Model.AnomalyScore), and
// writes into o.Out the images ranked from the least typical
// (ScoresFile), pictures of the least and the most typical
// (MostAnomalousPlot, MostTypicalPlot), and, when the options say which
// images are anomalies, the AUPRC with its 95 % bootstrap interval
// (ScoreReportFile). Every image is read and every label checked before
// the first is scored.
func Score(o ScoreOptions) (*ScoreReport, []ScoredImage, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	b, err := backend.OpenForCommand(cmp.Or(o.Backend, "auto"))
	if err != nil {
		return nil, nil, err
	}
	defer b.Finalize()
	ckpt := training.Folder{Dir: o.Run}.Checkpoints()
	model, err := lebm.Load(b, ckpt)
	if err != nil {
		return nil, nil, fmt.Errorf("Options.Run: %w", err)
	}
	h, _, c := model.Config().Generator.OutputShape()
	if split, err := imagefolder.Read(training.Folder{Dir: o.Run}.DataSplit(), ""); err == nil && split.Enlarge {
		o.Enlarge = true
	}
	set, err := imagefolder.List(o.Images, imagefolder.Options{Size: h, Channels: c, Enlarge: o.Enlarge})
	if err != nil {
		return nil, nil, fmt.Errorf("Options.Images: %w", err)
	}
	anomalous, err := o.anomalies(set)
	if err != nil {
		return nil, nil, err
	}
	if n := count(anomalous); anomalous != nil && (n == 0 || n == len(anomalous)) {
		return nil, nil, fmt.Errorf("the labels make %d of the %d images anomalies: an AUPRC needs both anomalies and normal images", n, len(anomalous))
	}
	images, err := datasets.LoadSource(set, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("Options.Images: %w", err)
	}
	scores, err := scoreImages(model, images, o.Batch, o.Seed)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]ScoredImage, images.N)
	for i := range rows {
		rows[i] = ScoredImage{File: set.RelPath(i), Score: scores[i], Anomaly: anomalous != nil && anomalous[i]}
	}
	report := &ScoreReport{Run: o.Run, Checkpoint: ckpt, Step: model.Step(), Images: o.Images, N: images.N, Seed: o.Seed, Out: o.Out}
	if anomalous != nil {
		if err := report.measureAUPRC(scores, anomalous, o.Resamples, uint64(o.Seed)); err != nil {
			return nil, nil, err
		}
	}
	order := make([]int, len(rows)) // the images from the highest score (least typical) down, ties in file order
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rows[b].Score, rows[a].Score) })
	ranked := make([]ScoredImage, len(rows))
	for r, i := range order {
		ranked[r] = rows[i]
	}
	if err := writeScores(o, images, order, ranked, report); err != nil {
		return nil, nil, err
	}
	return report, ranked, nil
}

// anomalies returns which images of set the options say are anomalies, or
// nil when they say nothing.
func (o ScoreOptions) anomalies(set *imagefolder.Set) ([]bool, error) {
	switch {
	case o.Labels != "":
		byFile, err := readAnomalyLabels(o.Labels)
		if err != nil {
			return nil, err
		}
		out := make([]bool, set.Len())
		for i := range out {
			v, ok := byFile[set.RelPath(i)]
			if !ok {
				return nil, fmt.Errorf("Options.Labels %s: no row for %s", o.Labels, set.RelPath(i))
			}
			out[i] = v
		}
		return out, nil
	case len(o.AnomalousClasses) > 0:
		classes := set.Classes()
		for _, c := range o.AnomalousClasses {
			if !slices.Contains(classes, c) {
				return nil, fmt.Errorf("Options.AnomalousClasses: %s has no class folder %q; its class folders are %v", o.Images, c, classes)
			}
		}
		out := make([]bool, set.Len())
		for i, l := range set.Labels() {
			out[i] = slices.Contains(o.AnomalousClasses, classes[l])
		}
		return out, nil
	}
	return nil, nil
}

// readAnomalyLabels reads a labels file: a header, then "file,anomaly"
// rows.
func readAnomalyLabels(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("Options.Labels: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 2
	r.TrimLeadingSpace = true
	if _, err := r.Read(); err != nil {
		return nil, fmt.Errorf("Options.Labels %s: %w (want a header, then rows \"file,anomaly\")", path, err)
	}
	out := map[string]bool{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("Options.Labels %s: %w", path, err)
		}
		line, _ := r.FieldPos(1)
		v, err := parseAnomaly(rec[1])
		if err != nil {
			return nil, fmt.Errorf("Options.Labels %s, line %d: %w", path, line, err)
		}
		if _, dup := out[rec[0]]; dup {
			return nil, fmt.Errorf("Options.Labels %s, line %d: a second row for %s", path, line, rec[0])
		}
		out[rec[0]] = v
	}
}

// parseAnomaly reads a label: 1/0, true/false or anomaly/normal.
func parseAnomaly(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "anomaly", "anomalous":
		return true, nil
	case "normal":
		return false, nil
	}
	v, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return false, fmt.Errorf("anomaly %q, want 1 or 0, true or false, anomaly or normal", s)
	}
	return v, nil
}

// scoreImages scores the images in batches of batch, showing progress
// with its rate and time to go. Each image's posterior chain is drawn from
// its own stream (lebm.ImageSeeds of seed and its pixels), so that its
// score does not depend on its batch: the scoring service gives it the same.
// The last batch is filled up with whatever the buffer holds, so that one
// compiled graph serves every batch; the extra rows' scores are dropped.
func scoreImages(model *lebm.Model, images *datasets.Images, batch int, seed int64) ([]float64, error) {
	size := images.ImageSize()
	scores := make([]float64, 0, images.N)
	pixels := make([]float32, batch*size)
	bar := progress.New("scored", images.N)
	for first := 0; first < images.N; first += batch {
		n := min(batch, images.N-first)
		copy(pixels, images.Pixels[first*size:(first+n)*size])
		x := tensors.FromFlatDataAndDimensions(pixels, batch, images.Height, images.Width, images.Channels)
		y, err := model.AnomalyScoreSeeded(x, lebm.ImageSeeds(seed, pixels, size))
		x.FinalizeAll()
		if err != nil {
			return nil, err
		}
		for _, v := range tensors.MustCopyFlatData[float32](y)[:n] {
			scores = append(scores, float64(v))
		}
		y.FinalizeAll()
		bar.Add(n)
	}
	return scores, nil
}

// measureAUPRC sets the AUPRC of the scores, anomalies positive, and its
// 95 % percentile-bootstrap interval over the images.
func (r *ScoreReport) measureAUPRC(scores []float64, anomalous []bool, resamples int, seed uint64) error {
	r.Anomalies = count(anomalous)
	auprc, err := eval.AUPRC(scores, anomalous)
	if err != nil {
		return err
	}
	interval, err := eval.AUPRCInterval(scores, anomalous, resamples, seed)
	if err != nil {
		return err
	}
	r.AUPRC, r.AUPRCInterval = auprc, &interval
	return nil
}

// writeScores writes the ranked scores, the two pictures and the report
// into o.Out; order[r] is the image ranked r-th.
func writeScores(o ScoreOptions, images *datasets.Images, order []int, ranked []ScoredImage, report *ScoreReport) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return fmt.Errorf("Options.Out: %w", err)
	}
	labelled := report.AUPRCInterval != nil
	err := atomicfile.Write(filepath.Join(o.Out, ScoresFile), func(w io.Writer) error {
		c := csv.NewWriter(w)
		header := []string{"rank", "file", "score"}
		if labelled {
			header = append(header, "anomaly")
		}
		c.Write(header)
		for rank, row := range ranked {
			rec := []string{strconv.Itoa(rank + 1), row.File, strconv.FormatFloat(row.Score, 'g', 8, 64)}
			if labelled {
				rec = append(rec, map[bool]string{true: "1", false: "0"}[row.Anomaly])
			}
			c.Write(rec)
		}
		c.Flush()
		return c.Error()
	})
	if err != nil {
		return err
	}
	show := min(o.Show, len(ranked))
	for _, p := range []struct {
		name  string
		which []int
	}{{MostAnomalousPlot, order[:show]}, {MostTypicalPlot, reversed(order[len(order)-show:])}} {
		picked, err := images.Subset(p.which)
		if err != nil {
			return err
		}
		cols := int(math.Ceil(math.Sqrt(float64(show))))
		if err := plots.WriteImageGrid(filepath.Join(o.Out, p.name), picked.Pixels, show, images.Height, images.Width, images.Channels, cols); err != nil {
			return err
		}
	}
	return atomicfile.WriteJSON(filepath.Join(o.Out, ScoreReportFile), report)
}

func reversed(s []int) []int {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// count is the number of true values.
func count(values []bool) int {
	n := 0
	for _, v := range values {
		if v {
			n++
		}
	}
	return n
}
