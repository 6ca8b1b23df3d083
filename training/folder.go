// Package training owns what a training run keeps between invocations:
// its folder (Folder: the name of every file and folder in it), the rule
// that one process writes it at a time (Folder.Claim), its metrics log
// (Log), which resumes with the checkpoint, and the resumable training
// loop every trainer runs on (Steps).
//
// A train-lebm run folder holds
//
//	checkpoint/               the model, resumable (package checkpoint's layout)
//	metrics.jsonl             one record per training step
//	losses.png, energies.png  the curves drawn from it
//	samples-TAG.png           sample grids, TAG = EpochTag(e) or StepTag(s)
//	reconstructions-TAG.png   test images beside their reconstructions
//	report.html               the page a person opens
//	epochs/                   end-of-epoch snapshots (train-lebm -keep-epochs)
//	eval/                     eval-lebm's output: evalfile.ReportFile and its pictures
//	writer.lock               held by the one process writing the folder
//	data-split.json           for a folder of the user's images, which are
//	                          trained on and which held out (imagefolder.Split)
//
// The other training commands keep their checkpoint/, metrics.jsonl and
// losses.png in a folder per model (train-toy's OUT/DATA/METHOD, say), and
// writer.lock in the folder they claim. Every one of them trains with
// Steps, the resumable loop.
package training

import (
	"fmt"
	"path/filepath"
)

// Names of the entries of a run folder, relative to it.
const (
	CheckpointDir = "checkpoint"
	MetricsFile   = "metrics.jsonl"
	LossesPlot    = "losses.png"
	EnergiesPlot  = "energies.png"
	ReportFile    = "report.html"
	EvalDir       = "eval"
	// EpochsDir holds end-of-epoch snapshots, a checkpoint folder each
	// (lebm.Model.SaveKeeping, lebm.Checkpoints).
	EpochsDir = "epochs"
	LockFile  = "writer.lock"
	// DataSplitFile records, for a run on a folder of the user's images,
	// which images it trains on and which it holds out.
	DataSplitFile = "data-split.json"

	samplesPrefix         = "samples-"
	reconstructionsPrefix = "reconstructions-"
	pictureSuffix         = ".png"
)

// Pictures of samples and reconstructions, whatever their tag: patterns for
// filepath.Glob relative to the run folder.
const (
	SamplesPattern         = samplesPrefix + "*" + pictureSuffix
	ReconstructionsPattern = reconstructionsPrefix + "*" + pictureSuffix
)

// EpochTag tags the pictures written at the end of an epoch (epoch counts
// from 1): "epoch001".
func EpochTag(epoch int64) string { return fmt.Sprintf("epoch%03d", epoch) }

// StepTag tags the pictures written within an epoch, at a global step:
// "step000000123". Its nine digits sort in step order up to a billion.
func StepTag(step int64) string { return fmt.Sprintf("step%09d", step) }

// Folder is a run folder.
type Folder struct {
	// Dir is the folder's path.
	Dir string
}

// Path is the path of name, one of this package's names, in the folder.
func (f Folder) Path(name string) string { return filepath.Join(f.Dir, name) }

// Checkpoints is the folder of the run's checkpoints.
func (f Folder) Checkpoints() string { return f.Path(CheckpointDir) }

// Metrics is the path of the run's metrics, one JSON record per step.
func (f Folder) Metrics() string { return f.Path(MetricsFile) }

// Report is the path of the run's report page.
func (f Folder) Report() string { return f.Path(ReportFile) }

// Epochs is the folder of the run's end-of-epoch snapshots.
func (f Folder) Epochs() string { return f.Path(EpochsDir) }

// DataSplit is the path of the run's record of its images' split.
func (f Folder) DataSplit() string { return f.Path(DataSplitFile) }

// Eval is the folder eval-lebm writes into by default.
func (f Folder) Eval() string { return f.Path(EvalDir) }

// Samples is the path of the sample grid tagged tag.
func (f Folder) Samples(tag string) string { return f.Path(samplesPrefix + tag + pictureSuffix) }

// Reconstructions is the path of the reconstruction grid tagged tag.
func (f Folder) Reconstructions(tag string) string {
	return f.Path(reconstructionsPrefix + tag + pictureSuffix)
}
