package main

import (
	"fmt"
	"path/filepath"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/plots"
)

// classifierFID generates o.fidSamples images in batches, writes a grid of
// the first 64 and compares their classifier features with the training
// statistics cached beside the classifier.
func classifierFID(b backends.Backend, model *lebm.Model, o options, out string, s *summary) error {
	clf, err := classifier.Load(b, filepath.Join(o.classifierDir, "checkpoint"))
	if err != nil {
		return err
	}
	mu, sigma, err := eval.LoadStats(filepath.Join(o.classifierDir, classifier.StatsFile))
	if err != nil {
		return err
	}
	if len(mu) != clf.Config().FeatureDim() {
		return fmt.Errorf("%s has %d-d statistics but the classifier's features are %d-d; rerun train-classifier", classifier.StatsFile, len(mu), clf.Config().FeatureDim())
	}
	h, w, c := model.Config().Generator.OutputShape()
	if cfg := clf.Config(); cfg.Height != h || cfg.Width != w || cfg.Channels != c {
		return fmt.Errorf("the classifier takes %d×%d×%d images, the checkpoint's generator makes %d×%d×%d", cfg.Height, cfg.Width, cfg.Channels, h, w, c)
	}
	if o.fidSamples <= len(mu) {
		return fmt.Errorf("-fid-samples %d: want more samples than the %d feature dimensions for a usable covariance", o.fidSamples, len(mu))
	}
	samples := &datasets.Images{Name: "generated", N: o.fidSamples, Height: h, Width: w, Channels: c}
	for len(samples.Pixels) < o.fidSamples*h*w*c {
		n := min(o.batch, o.fidSamples-len(samples.Pixels)/(h*w*c))
		x, err := model.Generate(n)
		if err != nil {
			return err
		}
		samples.Pixels = append(samples.Pixels, tensors.MustCopyFlatData[float32](x)...)
		x.FinalizeAll()
		fmt.Printf("\rgenerated %d/%d", len(samples.Pixels)/(h*w*c), o.fidSamples)
	}
	fmt.Println()
	if err := plots.WriteImageGrid(filepath.Join(out, "samples.png"), samples.Pixels[:min(64, o.fidSamples)*h*w*c], min(64, o.fidSamples), h, w, c, 8); err != nil {
		return err
	}
	ev, err := clf.Evaluate(samples, o.batch)
	if err != nil {
		return err
	}
	s.Classifier, s.FIDSamples = o.classifierDir, o.fidSamples
	s.ClassifierFID, err = eval.FrechetDistanceToStats(ev.Features, mu, sigma)
	return err
}
