package lebm

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// TestSeededScoresDependOnlyOnTheImageAndItsSeed checks AnomalyScoreSeeded
// against an independent computation — the whole chain unrolled in one
// graph, its noise drawn by a host loop from each image's PCG stream
// (starting latents first, then the steps in order) — and that an image's
// score is the same alone, in another order, after other work, and with
// the model's own random stream moved; another seed changes it.
func TestSeededScoresDependOnlyOnTheImageAndItsSeed(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig(t)
	cfg.TestPosteriorLangevin = losses.LangevinConfig{Steps: testChainBlock + 3, StepSize: 0.07}
	m := newModel(t, cfg)
	pixels := structuredImages()
	seeds := []uint64{11, 12, 13, 14}
	nz, steps := cfg.Generator.Nz, cfg.TestPosteriorLangevin.Steps

	z0 := make([]float64, testBatch*nz)
	noise := make([]float64, steps*testBatch*nz)
	for i, seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 0x6c65626d))
		for j := range nz {
			z0[i*nz+j] = r.NormFloat64()
		}
		for k := range steps {
			for j := range nz {
				noise[(k*testBatch+i)*nz+j] = r.NormFloat64()
			}
		}
	}
	want := runGraph(t, m.Context(), func(ctx *context.Context, x, z, xi *Node) *Node {
		posterior := func(z *Node) *Node { return PosteriorEnergy(ctx, cfg, x, z) }
		return PosteriorEnergy(ctx, cfg, x, losses.LangevinWithNoise(posterior, z, xi, cfg.TestPosteriorLangevin))
	}, imagesTensor(cfg, pixels), tensors.FromFlatDataAndDimensions(z0, testBatch, nz),
		tensors.FromFlatDataAndDimensions(noise, steps, testBatch, nz))[0]

	score := func(images []int, seeds []uint64) []float64 {
		t.Helper()
		const size = testSize * testSize
		var x []float64
		for _, i := range images {
			x = append(x, pixels[i*size:(i+1)*size]...)
		}
		y, err := m.AnomalyScoreSeeded(imagesTensor(cfg, x), seeds)
		if err != nil {
			t.Fatal(err)
		}
		return flatFloat64(t, y)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Errorf("%s: %.12g, want %.12g", what, got, want)
		}
	}
	for i, v := range score([]int{0, 1, 2, 3}, seeds) {
		near("batch of four", v, want[i])
	}
	if _, err := m.Generate(3); err != nil { // moves the model's random stream
		t.Fatal(err)
	}
	reordered := score([]int{3, 1, 0, 2}, []uint64{14, 12, 11, 13})
	for i, image := range []int{3, 1, 0, 2} {
		near("reordered after generating", reordered[i], want[image])
	}
	near("alone", score([]int{2}, []uint64{13})[0], want[2])
	if other := score([]int{2}, []uint64{99})[0]; math.Abs(other-want[2]) < 1e-6 {
		t.Errorf("another seed gives the same score %.9g", other)
	}
	if _, err := m.AnomalyScoreSeeded(imagesTensor(cfg, pixels), seeds[:3]); err == nil {
		t.Error("3 seeds for 4 images: no error")
	}
}

// TestImageSeedsHashTheSeedAndThePixels: equal images under one seed get
// one seed; a changed pixel or seed changes it.
func TestImageSeedsHashTheSeedAndThePixels(t *testing.T) {
	pixels := []float32{0, 0.5, 1, 0, 0.5, 1, 0, 0.5, 0.75}
	s := ImageSeeds(1, pixels, 3)
	if len(s) != 3 || s[0] != s[1] || s[0] == s[2] {
		t.Errorf("seeds %v: want the first two equal, the third different", s)
	}
	if other := ImageSeeds(2, pixels, 3); other[0] == s[0] {
		t.Errorf("seed 2 gives seed 1's image seed %d", s[0])
	}
}
