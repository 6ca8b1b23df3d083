package serving_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/serving"
	"github.com/edlebm/edlebm/training"
)

// A trained latent EBM scoring images from Go: OpenImageModel loads a
// train-lebm run folder (here one saved by the example itself), Score
// scores a batch — safe from any number of goroutines, each call gathered
// with the others into batches of the compiled sizes — and NewHandler
// serves the same model over HTTP from a server of the caller's.
func ExampleOpenImageModel() {
	run, err := os.MkdirTemp("", "serving-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(run)
	saveUntrainedRun(run) // stands for: go run ./cmd/train-lebm -out RUN

	model, err := serving.OpenImageModel(serving.ModelOptions{Run: run, BatchSizes: []int{1, 4}})
	if err != nil {
		panic(err)
	}
	defer model.Close()
	images, err := mnist.LoadHead(mnist.DefaultFashionDir, "test", 3) // pixels in [−1, 1], as imagefile decodes files
	if err != nil {
		panic(err)
	}
	scores, err := model.Score(context.Background(), images.Pixels, images.N)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d scores, finite: %v\n", len(scores), !math.IsNaN(scores[0]+scores[1]+scores[2]))

	handler, err := serving.NewHandler(model, serving.Options{})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/score", "application/json", strings.NewReader("{}"))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("JSON to an image model:", resp.Status)
	// Output:
	// 3 scores, finite: true
	// JSON to an image model: 415 Unsupported Media Type
}

// saveUntrainedRun saves a fresh Fashion-MNIST model with short chains as
// a run folder.
func saveUntrainedRun(dir string) {
	cfg, err := lebm.DefaultConfig("fashion-mnist")
	if err != nil {
		panic(err)
	}
	cfg.TestPosteriorLangevin.Steps, cfg.Seed = 3, 1
	b, _, err := backend.Open("auto")
	if err != nil {
		panic(err)
	}
	defer b.Finalize()
	model, err := lebm.New(b, cfg)
	if err != nil {
		panic(err)
	}
	if err := model.Save(training.Folder{Dir: dir}.Checkpoints()); err != nil {
		panic(err)
	}
}
