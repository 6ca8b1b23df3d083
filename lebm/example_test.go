package lebm_test

import (
	"fmt"
	"os"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/training"
)

// Training a latent EBM prior model with an energy-discrepancy prior update
// on Fashion-MNIST (Debian's dataset-fashion-mnist package), generating
// images from it and saving it where Load (or train-lebm -out) resumes it.
// The paper's settings, with shorter Langevin chains so that eight steps
// run in seconds.
func Example() {
	b, _, err := backend.Open("auto") // XLA on a GPU or the CPU, else SimpleGo
	if err != nil {
		panic(err)
	}
	defer b.Finalize()

	cfg, err := lebm.DefaultConfig("fashion-mnist") // method ED, t = 0.25, M = 16, w = 1
	if err != nil {
		panic(err)
	}
	cfg.PosteriorLangevin.Steps, cfg.GenerationLangevin.Steps, cfg.Seed = 5, 20, 1
	model, err := lebm.New(b, cfg)
	if err != nil {
		panic(err)
	}
	const batch = 16
	images, err := mnist.LoadHead(mnist.DefaultFashionDir, "train", 8*batch) // pixels in [−1, 1]
	if err != nil {
		panic(err)
	}
	var first, last lebm.StepMetrics
	for i := range 8 {
		x := tensors.FromFlatDataAndDimensions(images.Pixels[i*batch*images.ImageSize():(i+1)*batch*images.ImageSize()],
			batch, images.Height, images.Width, images.Channels)
		metrics, err := model.TrainStep(x)
		if err != nil {
			panic(err)
		}
		if i == 0 {
			first = metrics
		}
		last = metrics
	}
	fmt.Printf("step %d: reconstruction error below step 1's: %v\n", last.Step, last.ReconstructionMSE < first.ReconstructionMSE)

	generated, err := model.Generate(9)
	if err != nil {
		panic(err)
	}
	pixels := tensors.MustCopyFlatData[float32](generated)
	fmt.Printf("generated %v, pixels in [−1, 1]: %v\n", generated.Shape().Dimensions, slices.Min(pixels) >= -1 && slices.Max(pixels) <= 1)

	dir, err := os.MkdirTemp("", "lebm-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	run := training.Folder{Dir: dir} // the layout train-lebm -out resumes from
	if err := model.Save(run.Checkpoints()); err != nil {
		panic(err)
	}
	resumed, err := lebm.Load(b, run.Checkpoints())
	if err != nil {
		panic(err)
	}
	fmt.Printf("resumed at step %d\n", resumed.Step())
	// Output:
	// step 8: reconstruction error below step 1's: true
	// generated [9 28 28 1], pixels in [−1, 1]: true
	// resumed at step 8
}
