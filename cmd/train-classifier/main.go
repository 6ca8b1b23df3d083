// Command train-classifier trains the small Fashion-MNIST (or MNIST)
// classifier whose features eval-lebm uses for classifier-FID, and caches
// the training set's feature statistics beside it:
//
//	go run ./cmd/train-classifier -out runs/classifier-fashion-mnist
//
// It writes, in -out (lebmrun.TrainClassifier): checkpoint/ (resumable: a
// stopped run continues from its last step), metrics.jsonl,
// classifier.StatsFile (mean and covariance of the training
// images' features, evalfile.SaveStats format) and summary.json (test accuracy,
// the test split's classifier-FID against the training statistics — the
// floor a perfect generator would reach with that many samples).
package main

import (
	"errors"
	"flag"
	"log"
	"os"
	"strings"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/classifier"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/training"
)

type options struct {
	// stop ends the run after the step it receives in, saved
	// (training.Steps); nil: never.
	stop                  <-chan os.Signal
	dataDir, out, backend string
	// set are GoMLX context settings of the classifier (-set).
	set                   string
	epochs, batch, trainN int
}

func main() {
	var o options
	flag.StringVar(&o.dataDir, "data-dir", mnist.DefaultFashionDir, "MNIST-format folder (train and test IDX files)")
	flag.StringVar(&o.out, "out", "runs/classifier-fashion-mnist", "output folder")
	flag.IntVar(&o.epochs, "epochs", 5, "training epochs")
	flag.IntVar(&o.batch, "batch", 128, "batch size")
	flag.IntVar(&o.trainN, "train-n", 0, "use only the first N training images (0: all)")
	flag.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	flag.StringVar(&o.set, "set", "", "GoMLX context settings of the classifier: \"classifier_hidden=256,64;learning_rate=3e-4\" or \"file:settings.txt\"; the settings: "+
		strings.Join(classifier.SettingNames(), ", "))
	flag.Parse()
	o.stop = training.StopSignals()
	if err := run(o); err != nil && !errors.Is(err, training.ErrStopped) {
		log.Fatalf("train-classifier: %v", err)
	}
}

// run trains the classifier of o (lebmrun.TrainClassifier).
func run(o options) error {
	err := lebmrun.TrainClassifier(lebmrun.ClassifierOptions{DataDir: o.dataDir, Out: o.out, Backend: o.backend, Set: o.set,
		Epochs: o.epochs, Batch: o.batch, TrainN: o.trainN, Stop: o.stop})
	return flagcheck.Flags{"DataDir": "data-dir", "Out": "out", "Backend": "backend", "Set": "set", "Epochs": "epochs", "Batch": "batch", "TrainN": "train-n"}.Explain(err)
}
