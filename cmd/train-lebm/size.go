package main

import (
	"fmt"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/lebm"
)

// runSize is how much a run trains.
type runSize struct {
	// trainSize is the number of training images used (0: all).
	trainSize, epochs, batch int
}

// paperSize is the paper's run: every training image, 200 epochs of 128.
var paperSize = runSize{trainSize: 0, epochs: 200, batch: 128}

// The default runs on CPU backends, sized from bench-lebm's step times to
// end within the hour on two cores while still showing every output
// (docs/first-hour.md has the runs; XLA CPU's takes about 22 minutes
// there, docs/xla.md). The run does not promise a time: the progress bar
// shows the time left from the steps measured.
var (
	xlaCPUSize   = runSize{trainSize: 0, epochs: 12, batch: 128}
	simpleGoSize = runSize{trainSize: 6400, epochs: 6, batch: 64}
)

const cpuDefaultNote = "default: the paper's on a CUDA GPU or with -paper, else a run sized for the CPU (see -paper)"

// sizeFor sets the run's size for the chosen backend when the user set
// none: the paper's on a CUDA GPU, a shorter run on XLA CPU and on
// SimpleGo. It returns a line saying what it chose, or "" when the flags
// decide.
func (o *options) sizeFor(choice backend.Choice) string {
	if o.paper || o.sized || choice.CUDA() || o.data == lebm.FolderData { // a folder of images has no CPU run measured for it
		return ""
	}
	name, size := "XLA CPU", xlaCPUSize
	if choice.Config == backend.SimpleGo {
		name, size = "SimpleGo", simpleGoSize
	}
	if o.presetBatch {
		size.batch = o.batch
	}
	o.runSize = size
	images := "every training image"
	if size.trainSize > 0 {
		images = fmt.Sprintf("the first %d training images", size.trainSize)
	}
	return fmt.Sprintf("run sized for %s: %s, %d epochs of batch %d (the progress bar shows the time left); -paper, or -epochs, -batch and -train-size, for the paper's full run",
		name, images, size.epochs, size.batch)
}
