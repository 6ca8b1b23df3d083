package lebmeval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/schollz/progressbar/v3"
	"gonum.org/v1/gonum/mat"

	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/evalfile"
	"github.com/edlebm/edlebm/fid"
	"github.com/edlebm/edlebm/internal/progress"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// generateSamples draws n images from the model (its prior chains, then
// the generator), batch at a time, and returns them with the fraction of
// the chains' proposals accepted.
func generateSamples(model *lebm.Model, n, batch int) (*datasets.Images, float64, error) {
	h, w, c := model.Config().Generator.OutputShape()
	samples := &datasets.Images{Name: "generated", N: n, Height: h, Width: w, Channels: c}
	bar := progress.New("generated", n)
	var acceptance float64
	for done := 0; done < n; {
		x, err := model.Generate(min(batch, n-done))
		if err != nil {
			return nil, 0, err
		}
		samples.Pixels = append(samples.Pixels, tensors.MustCopyFlatData[float32](x)...)
		x.FinalizeAll()
		prev := done
		done = len(samples.Pixels) / (h * w * c)
		bar.Add(done - prev)
		acceptance += model.GenerationAcceptance() * float64(done-prev) / float64(n)
	}
	return samples, acceptance, nil
}

// sampleGridN is the number of samples in samples.png, 8 a row.
const sampleGridN = 64

// writeSampleGrid writes samples.png into out: the first sampleGridN
// samples, 8 a row.
func writeSampleGrid(samples *datasets.Images, out string) error {
	shown := min(sampleGridN, samples.N)
	return plots.WriteImageGrid(filepath.Join(out, evalfile.SamplesPicture), samples.Pixels[:shown*samples.ImageSize()], shown,
		samples.Height, samples.Width, samples.Channels, 8)
}

// checkFIDSamples refuses fewer samples than feature dimensions: their
// covariance would be singular.
func checkFIDSamples(n, dim int, what string) error {
	if n <= dim {
		return fmt.Errorf("Options.FIDSamples %d: want more samples than the %d %s feature dimensions for a usable covariance", n, dim, what)
	}
	return nil
}

// sampleMetrics are the FIDs computed on generated samples, their networks
// loaded and checked before the (slow) sampling.
type sampleMetrics struct {
	o         Options
	inception *fid.Network // nil: no FID
	// statsPath is where the Inception training statistics are cached;
	// mu and sigma hold them when the cache existed, nil to compute them.
	statsPath string
	mu        []float64
	sigma     *mat.SymDense
	clf       *classifier.Model
	clfMu     []float64 // the classifier's training statistics
	clfSigma  *mat.SymDense
}

// loadSampleMetrics loads what -inception and -classifier name and checks
// them against the generator's h×w×c images and the number of samples.
func loadSampleMetrics(b backends.Backend, o Options, h, w, c int) (*sampleMetrics, error) {
	m := &sampleMetrics{o: o}
	var err error
	if o.Inception != "" {
		if m.inception, err = fid.Load(b, o.Inception); err != nil {
			return nil, fmt.Errorf("Options.Inception: %w", err)
		}
		if err := checkFIDSamples(o.FIDSamples, m.inception.FeatureDim(), "Inception"); err != nil {
			return nil, fmt.Errorf("Options.Inception: %w", err)
		}
		if err := m.loadInceptionStats(); err != nil {
			return nil, err
		}
	}
	if o.Classifier != "" {
		if err := m.loadClassifier(b, h, w, c); err != nil {
			return nil, fmt.Errorf("Options.Classifier: %w", err)
		}
	}
	return m, nil
}

func (m *sampleMetrics) loadClassifier(b backends.Backend, h, w, c int) error {
	clf, err := classifier.Load(b, training.Folder{Dir: m.o.Classifier}.Checkpoints())
	if err != nil {
		return err
	}
	cfg := clf.Config()
	mu, sigma, err := evalfile.LoadStats(filepath.Join(m.o.Classifier, classifier.StatsFile))
	if err != nil {
		return err
	}
	if len(mu) != cfg.FeatureDim() {
		return fmt.Errorf("%s has %d-d statistics but the classifier's features are %d-d; rerun train-classifier", classifier.StatsFile, len(mu), cfg.FeatureDim())
	}
	if cfg.Height != h || cfg.Width != w || cfg.Channels != c {
		return fmt.Errorf("the classifier takes %d×%d×%d images, the checkpoint's generator makes %d×%d×%d", cfg.Height, cfg.Width, cfg.Channels, h, w, c)
	}
	if err := checkFIDSamples(m.o.FIDSamples, len(mu), "classifier"); err != nil {
		return err
	}
	m.clf, m.clfMu, m.clfSigma = clf, mu, sigma
	return nil
}

// compute fills s's FIDs of samples and, with intervals, their bootstrap
// intervals (-bootstrap and -fid-bootstrap resamples).
func (m *sampleMetrics) compute(samples *datasets.Images, s *evalfile.Report, intervals bool) error {
	s.FIDSamples = samples.N
	resamples, fidResamples := 0, 0
	if intervals {
		resamples, fidResamples = m.o.Bootstrap, m.o.FIDBootstrap
	}
	if m.inception != nil {
		if err := m.inceptionFID(samples, s, fidResamples); err != nil {
			return fmt.Errorf("Options.Inception: %w", err)
		}
		fmt.Printf("FID %.4f (%d samples)\n", s.FID, samples.N)
	}
	if m.clf != nil {
		ev, err := m.clf.Evaluate(samples, m.o.Batch)
		if err != nil {
			return fmt.Errorf("Options.Classifier: %w", err)
		}
		if s.ClassifierFID, err = eval.FrechetDistanceToStats(ev.Features, m.clfMu, m.clfSigma); err != nil {
			return fmt.Errorf("Options.Classifier: %w", err)
		}
		if s.ClassifierFIDInterval, err = fidInterval(ev.Features, m.clfMu, m.clfSigma, resamples, ""); err != nil {
			return fmt.Errorf("Options.Classifier: %w", err)
		}
		s.Classifier = m.o.Classifier
		fmt.Printf("classifier-FID %.4f (%d samples)\n", s.ClassifierFID, samples.N)
	}
	return nil
}

// inceptionFID is the FID proper: the samples' pool3 features against the
// training split's, whose statistics are cached (-fid-stats, by default in
// the user's cache folder under a name holding the data set, the number of
// training images and the weights' SHA-256).
func (m *sampleMetrics) inceptionFID(samples *datasets.Images, s *evalfile.Report, resamples int) error {
	o, net := m.o, m.inception
	if m.mu == nil {
		var err error
		if m.mu, m.sigma, err = trainingStats(net, o, m.statsPath); err != nil {
			return err
		}
	}
	features, err := withBar(net, "Inception features of the samples", func() ([]float64, error) { return net.Features(samples, o.Batch) })
	if err != nil {
		return err
	}
	s.Inception, s.FIDStats = o.Inception, m.statsPath
	if s.FID, err = eval.FrechetDistanceToStats(features, m.mu, m.sigma); err != nil {
		return err
	}
	s.FIDBootstrap = resamples
	s.FIDInterval, err = fidInterval(features, m.mu, m.sigma, resamples, "FID bootstrap")
	return err
}

// fidInterval is the bootstrap interval of the samples' FID (resamples of
// their features), nil for no resamples; with what, a progress bar of that
// name counts the resamples.
func fidInterval(features, mu []float64, sigma mat.Symmetric, resamples int, what string) (*eval.Interval, error) {
	if resamples == 0 {
		return nil, nil
	}
	var each func()
	if what != "" {
		bar := progress.New(what, resamples)
		each = func() { bar.Add(1) }
	}
	iv, err := eval.FrechetDistanceIntervalEach(features, mu, sigma, resamples, bootstrapSeed, each)
	return &iv, err
}

// loadInceptionStats finds the training statistics' cache and reads it if
// it exists, or checks that -fid-train-n images are enough to compute
// them: either way before the slow sampling.
func (m *sampleMetrics) loadInceptionStats() error {
	o, dim := m.o, m.inception.FeatureDim()
	m.statsPath = o.FIDStats
	if m.statsPath == "" {
		var err error
		if m.statsPath, err = defaultFIDStatsPath(o); err != nil {
			return err
		}
	}
	mu, sigma, err := evalfile.LoadStats(m.statsPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if o.FIDTrainN > 0 && o.FIDTrainN <= dim {
			return fmt.Errorf("Options.FIDTrainN %d: want more training images than the %d Inception feature dimensions (or 0: all)", o.FIDTrainN, dim)
		}
		return nil
	case err != nil:
		return fmt.Errorf("Options.FIDStats: %w", err)
	case len(mu) != dim:
		return fmt.Errorf("Options.FIDStats %s: %d-d statistics, but the network's features are %d-d", m.statsPath, len(mu), dim)
	}
	m.mu, m.sigma = mu, sigma
	return nil
}

// trainingStats computes the Inception statistics of the training split
// and caches them in path.
func trainingStats(net *fid.Network, o Options, path string) ([]float64, *mat.SymDense, error) {
	train, err := lebmrun.LoadImages(o.Run, o.Data, o.DataDir, "train", o.FIDTrainN)
	if err != nil {
		return nil, nil, fmt.Errorf("training statistics: %w", err)
	}
	train = train.Head(o.FIDTrainN)
	if err := checkFIDSamples(train.N, net.FeatureDim(), "Inception"); err != nil {
		return nil, nil, fmt.Errorf("training statistics of %s (Options.FIDTrainN): %w", train.Name, err)
	}
	features, err := withBar(net, "Inception features of "+train.Name, func() ([]float64, error) { return net.Features(train, o.Batch) })
	if err != nil {
		return nil, nil, err
	}
	mu, sigma, err := eval.GaussianStatsFlat(features, net.FeatureDim())
	if err != nil {
		return nil, nil, fmt.Errorf("training statistics of %s: %w", train.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	if err := evalfile.SaveStats(path, mu, sigma); err != nil {
		return nil, nil, err
	}
	fmt.Printf("cached the training statistics (%d images) in %s\n", train.N, path)
	return mu, sigma, nil
}

// withBar runs fn with a progress bar fed by net's Progress.
func withBar(net *fid.Network, what string, fn func() ([]float64, error)) ([]float64, error) {
	var bar *progressbar.ProgressBar
	net.Progress = func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
				progressbar.OptionShowIts(), progressbar.OptionSetItsString("images"), progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(200*time.Millisecond))
		}
		_ = bar.Set(done)
	}
	defer func() { net.Progress = nil }()
	features, err := fn()
	if bar != nil {
		_ = bar.Finish()
		fmt.Println()
	}
	return features, err
}

// defaultFIDStatsPath names the statistics cache by what they depend on.
func defaultFIDStatsPath(o Options) (string, error) {
	f, err := os.Open(o.Inception)
	if err != nil {
		return "", fmt.Errorf("Options.Inception: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("Options.Inception %s: %w", o.Inception, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the FID training statistics (set Options.FIDStats): %w", err)
	}
	n := "all"
	if o.FIDTrainN > 0 {
		n = fmt.Sprint(o.FIDTrainN)
	}
	return filepath.Join(cache, "edlebm", "fid", fmt.Sprintf("%s-train-%s-%s.stats", o.Data, n, hex.EncodeToString(h.Sum(nil))[:12])), nil
}
