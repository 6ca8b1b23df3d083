// Command train-lebm trains a latent-space energy-based prior model (a
// generator with an EBM prior over its latents) with an energy-discrepancy,
// contrastive-divergence or score-matching prior update.
//
// With no flags it trains on Fashion-MNIST from Debian's dataset-fashion-mnist
// package with the paper's settings, on XLA/CUDA when a plugin is
// installed, else on XLA CPU when its plugin is, else on SimpleGo; on the
// CPU backends the run is shortened to end within the hour on two cores
// (-paper for the paper's 200 epochs). Every
// epoch it writes a sample grid and a reconstruction grid (PNG), appends
// per-step metrics to metrics.jsonl, redraws the loss curves, and
// checkpoints; a stopped run resumes from its last checkpoint
// when started again with the same -out.
//
//	go run ./cmd/train-lebm -method ed -epochs 20 -out runs/fmnist-ed
package main

import (
	"errors"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/lebmrun"
)

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		log.Fatalf("train-lebm: %v", err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	if err := run(o, stop); err != nil {
		log.Fatalf("train-lebm: %v", err)
	}
}

// run trains the run of o, sized for its backend when the flags leave
// that open (lebmrun resolves the backend, then asks sizeFor).
func run(o options, stop <-chan os.Signal) error {
	resize := func(choice backend.Choice, lo *lebmrun.Options) string {
		note := o.sizeFor(choice)
		lo.Epochs, lo.Batch, lo.TrainSize = o.epochs, o.batch, o.trainSize
		return note
	}
	err := lebmrun.Train(lebmrun.Options{
		Config: o.cfg, DataDir: o.dataDir, TestFraction: o.testFraction, Enlarge: o.enlarge, StreamAbove: int64(o.streamAboveMiB * (1 << 20)), Download: o.download, Out: o.out, Backend: o.backend,
		Epochs: o.epochs, Batch: o.batch, TrainSize: o.trainSize, Grid: o.gridN, Recon: o.reconN,
		KeepEpochs: o.keepEpochs, CheckpointEvery: o.checkpointEvery, PicturesEvery: o.picturesEvery,
		StopAfter: o.stopAfter, Devices: o.devices, Stop: stop, AfterWrite: o.afterWrite, Resize: resize,
	})
	return optionFlags.Explain(err)
}

// optionFlags names the flag that sets each of lebmrun.Options' fields, for
// the run layer's errors.
var optionFlags = flagcheck.Flags{
	"Config.Data": "data", "Config.AnomalyHoldout": "anomaly-holdout", "DataDir": "data-dir", "TestFraction": "test-fraction",
	"Enlarge": "enlarge", "Download": "download", "Out": "out", "Backend": "backend", "Epochs": "epochs", "Batch": "batch",
	"TrainSize": "train-size", "Grid": "grid", "Recon": "recon", "KeepEpochs": "keep-epochs", "CheckpointEvery": "checkpoint-every",
	"PicturesEvery": "pictures-every", "StopAfter": "stop-after", "Devices": "devices",
}
