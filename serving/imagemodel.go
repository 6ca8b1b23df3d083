package serving

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"image/png"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets/imagefile"
	"github.com/edlebm/edlebm/datasets/imagefolder"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/plots"
	"github.com/edlebm/edlebm/training"
)

// ModelOptions say which trained run an ImageModel serves and how.
type ModelOptions struct {
	// Run is a train-lebm, train-vectors or train-table run folder; its
	// latest checkpoint serves.
	Run string
	// Backend is the GoMLX backend (backend.Resolve's syntax; "" for auto).
	Backend string
	// Seed seeds each image's posterior chain with lebm.ImageSeeds (0: 1,
	// score-images' default), so that an image gets score-images' score.
	Seed int64
	// BatchSizes are the batch sizes compiled (default 1, 8 and 64); a
	// request may hold at most the largest's images.
	BatchSizes []int
	// MaxWait is how long a batch waits for more requests after its first
	// (default 5 ms).
	MaxWait time.Duration
	// Samples is the number of generated samples in the samples picture
	// (default 64).
	Samples int
	// Enlarge accepts images smaller than the run's, enlarging them; a run
	// trained on a folder with enlarging always does.
	Enlarge bool
	// MaxPixels bounds the pixels an image's header may declare (default
	// imagefile.DefaultMaxPixels).
	MaxPixels int
	// Method is the method of a train-vectors or train-table run served
	// (its folder; default DefaultMethod, or med for a table).
	Method string
	// Observe, when set, is told of every batch (BatcherOptions.Observe).
	Observe func(op string, rows, size int, took time.Duration, err error)
}

// Defaults of ModelOptions.
const (
	DefaultMaxWait = 5 * time.Millisecond
	DefaultSamples = 64
)

// DefaultBatchSizes are ModelOptions.BatchSizes' default.
var DefaultBatchSizes = []int{1, 8, 64}

func (o ModelOptions) withDefaults() (ModelOptions, error) {
	o.Seed, o.MaxWait, o.Samples = cmp.Or(o.Seed, 1), cmp.Or(o.MaxWait, DefaultMaxWait), cmp.Or(o.Samples, DefaultSamples)
	o.MaxPixels = cmp.Or(o.MaxPixels, imagefile.DefaultMaxPixels)
	if len(o.BatchSizes) == 0 {
		o.BatchSizes = DefaultBatchSizes
	}
	switch {
	case o.Run == "":
		return o, fmt.Errorf("Options.Run: the train-lebm run folder to serve is required")
	}
	return o, flagcheck.CheckOptions(
		flagcheck.Rule{Name: "BatchSizes", Value: o.BatchSizes, OK: slices.Min(o.BatchSizes) >= 1 && slices.Max(o.BatchSizes) <= 4096, Want: "sizes from 1 to 4096"},
		flagcheck.Rule{Name: "MaxWait", Value: o.MaxWait, OK: o.MaxWait >= 0, Want: "≥ 0"},
		flagcheck.Rule{Name: "Samples", Value: o.Samples, OK: o.Samples >= 1 && o.Samples <= 1024, Want: "from 1 to 1024"},
		flagcheck.Rule{Name: "MaxPixels", Value: o.MaxPixels, OK: o.MaxPixels >= 1, Want: "≥ 1"})
}

// An ImageModel serves a trained latent EBM: anomaly scores and
// reconstructions of images, batched across callers, and generated
// samples. It is safe for concurrent use: the model is called under one
// lock, by the batchers' goroutines and the samples' generation.
type ImageModel struct {
	o                       ModelOptions
	lock                    *modelLock // the model computes under it
	model                   *lebm.Model
	height, width, channels int
	checkpoint              string
	step                    int64
	scores, reconstructions *Batcher[float32]
	samplesOnce             sync.Once
	samplesPNG              []byte
	samplesErr              error
}

// OpenImageModel loads the run's checkpoint; Warm compiles its batch sizes.
// A missing or damaged checkpoint is an error naming it.
func OpenImageModel(o ModelOptions) (*ImageModel, error) {
	o, lock, err := o.open("")
	if err != nil {
		return nil, err
	}
	m := &ImageModel{o: o, lock: lock, checkpoint: training.Folder{Dir: o.Run}.Checkpoints()}
	if m.model, err = lebm.Load(lock.backend, m.checkpoint); err != nil {
		lock.close()
		return nil, fmt.Errorf("Options.Run: %w", err)
	}
	m.step = m.model.Step()
	m.height, m.width, m.channels = m.model.Config().Generator.OutputShape()
	if split, err := imagefolder.Read(training.Folder{Dir: o.Run}.DataSplit(), ""); err == nil && split.Enlarge {
		m.o.Enlarge = true
	}
	size := m.ImageSize()
	if m.scores, err = NewBatcher(m.scoreBatch, o.batcher("score", size, 1)); err != nil {
		m.Close()
		return nil, err
	}
	if m.reconstructions, err = NewBatcher(m.reconstructBatch, o.batcher("reconstruct", size, size)); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Shape is the height, width and channels of the run's images.
func (m *ImageModel) Shape() (height, width, channels int) { return m.height, m.width, m.channels }

// ImageSize is the values of one image.
func (m *ImageModel) ImageSize() int { return m.height * m.width * m.channels }

// MaxImages is the most images one call may have.
func (m *ImageModel) MaxImages() int { return m.scores.MaxRows() }

// Step is the training step of the checkpoint served.
func (m *ImageModel) Step() int64 { return m.step }

// Seed is the seed of the images' posterior chains.
func (m *ImageModel) Seed() int64 { return m.o.Seed }

// NewDecoder returns a decoder of uploaded images into the run's shape, with
// the run's bounds; each goroutine needs its own.
func (m *ImageModel) NewDecoder() *imagefile.Decoder {
	d := imagefile.NewDecoder(m.height, m.channels)
	d.MaxPixels = m.o.MaxPixels
	if m.o.Enlarge {
		d.Accept = func(w, h int) error { return nil }
	}
	return d
}

// Warm computes a batch of every size, so that every graph is compiled
// before the first request.
func (m *ImageModel) Warm() error { return m.scores.warm(make([]float32, m.ImageSize())) }

// Score returns the anomaly scores of n images (pixels as imagefile decodes
// them, n × ImageSize values): lebm.Model.AnomalyScoreSeeded with
// lebm.ImageSeeds of the seed, as score-images computes them.
func (m *ImageModel) Score(ctx context.Context, pixels []float32, n int) ([]float64, error) {
	out, err := m.scores.Do(ctx, pixels, n)
	if err != nil {
		return nil, err
	}
	scores := make([]float64, n)
	for i, v := range out {
		scores[i] = float64(v)
	}
	return scores, nil
}

// Reconstruct returns G(z) of n images for posterior samples z.
func (m *ImageModel) Reconstruct(ctx context.Context, pixels []float32, n int) ([]float32, error) {
	return m.reconstructions.Do(ctx, pixels, n)
}

func (m *ImageModel) scoreBatch(pixels []float32, size int) ([]float32, error) {
	return m.imageBatch(pixels, size, func(x *tensors.Tensor) (*tensors.Tensor, error) {
		return m.model.AnomalyScoreSeeded(x, lebm.ImageSeeds(m.o.Seed, pixels, m.ImageSize()))
	})
}

func (m *ImageModel) reconstructBatch(pixels []float32, size int) ([]float32, error) {
	return m.imageBatch(pixels, size, m.model.Reconstruct)
}

// imageBatch computes a batch of size images under the model's lock.
func (m *ImageModel) imageBatch(pixels []float32, size int, compute func(x *tensors.Tensor) (*tensors.Tensor, error)) (out []float32, err error) {
	x := tensors.FromFlatDataAndDimensions(pixels, size, m.height, m.width, m.channels)
	defer x.FinalizeAll()
	err = m.lock.run(func() error {
		y, err := compute(x)
		if err != nil {
			return err
		}
		defer y.FinalizeAll()
		out = tensors.MustCopyFlatData[float32](y)
		return nil
	})
	return out, err
}

// SamplesPNG returns a picture of Samples generated images, drawn once.
func (m *ImageModel) SamplesPNG() ([]byte, error) {
	m.samplesOnce.Do(func() {
		var pixels []float32
		if m.samplesErr = m.lock.run(func() error {
			y, err := m.model.Generate(m.o.Samples)
			if err != nil {
				return err
			}
			defer y.FinalizeAll()
			pixels = tensors.MustCopyFlatData[float32](y)
			return nil
		}); m.samplesErr == nil {
			m.samplesPNG, m.samplesErr = EncodeGrid(pixels, m.o.Samples, m.height, m.width, m.channels, 8)
		}
	})
	return m.samplesPNG, m.samplesErr
}

// EncodeGrid is a PNG of n images in a grid of cols columns
// (plots.ImageGrid).
func EncodeGrid(pixels []float32, n, height, width, channels, cols int) ([]byte, error) {
	img, err := plots.ImageGrid(pixels, n, height, width, channels, cols)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Close stops the batchers (after the batch each is computing) and frees
// the backend.
func (m *ImageModel) Close() { closeModel(m.lock, m.scores, m.reconstructions) }

// Scored is one image of /v1/score's answer.
type Scored struct {
	// File is the uploaded file's name ("body" for a bare image body).
	File string `json:"file"`
	// Score is the image's anomaly score (higher: less typical).
	Score float64 `json:"score"`
	// Reconstruction, with ?reconstruct=1, is a PNG data URL of G(z).
	Reconstruction string `json:"reconstruction,omitempty"`
}

// ScoreAnswer is /v1/score's answer for images.
type ScoreAnswer struct {
	Step   int64    `json:"step"`
	Seed   int64    `json:"seed"`
	Images []Scored `json:"images"`
}

func (m *ImageModel) info() Info {
	return Info{Kind: "images", Backend: m.lock.described, Step: m.step, Seed: m.o.Seed, Height: m.height, Width: m.width, Channels: m.channels,
		MaxItems: m.MaxImages(), BatchSizes: m.scores.sizes}
}

func (m *ImageModel) answerScore(r *http.Request) (any, error) {
	images, err := decodeUpload(r, m)
	if err != nil {
		return nil, err
	}
	n := len(images.names)
	scores, err := m.Score(r.Context(), images.pixels, n)
	if err != nil {
		return nil, err
	}
	answer := ScoreAnswer{Step: m.step, Seed: m.o.Seed, Images: make([]Scored, n)}
	for i, v := range scores {
		answer.Images[i] = Scored{File: images.names[i], Score: v}
	}
	if r.URL.Query().Get("reconstruct") != "1" {
		return answer, nil
	}
	recon, err := m.Reconstruct(r.Context(), images.pixels, n)
	if err != nil {
		return nil, err
	}
	size := m.ImageSize()
	for i := range answer.Images {
		png, err := EncodeGrid(recon[i*size:(i+1)*size], 1, m.height, m.width, m.channels, 1)
		if err != nil {
			return nil, err
		}
		answer.Images[i].Reconstruction = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	}
	return answer, nil
}

func (m *ImageModel) answerSamples() (string, []byte, error) {
	png, err := m.SamplesPNG()
	return "image/png", png, err
}
