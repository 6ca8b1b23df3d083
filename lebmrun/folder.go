package lebmrun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/imagefolder"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/training"
)

// DefaultStreamAbove is the size in bytes of a folder's training images
// (as float32) above which a run decodes them batch by batch as it trains
// instead of holding them in memory (Options.StreamAbove).
const DefaultStreamAbove = 2 << 30

// loadFolder reads the run's split of a folder of images (recorded in the
// run folder, or made now and returned to be recorded), decodes its test
// images, and serves its training images from memory or, when they would
// take more than o.StreamAbove bytes, decoded as they are needed. In memory,
// every image is decoded before the first step, so a damaged file stops
// the run before it trains; streamed, the step that needs it stops the
// run, its last checkpoint kept.
func loadFolder(o Options, folder training.Folder) (runData, error) {
	split, isNew, err := openSplit(o, folder)
	if err != nil {
		return runData{}, err
	}
	trainSet, _ := split.Set("train")
	testSet, _ := split.Set("test")
	trainSet = trainSet.Head(o.TrainSize)
	anomaly := o.Config.AnomalyHoldout >= 0
	if !anomaly {
		testSet = testSet.Head(o.Recon)
	}
	test, err := datasets.LoadSource(testSet, 0)
	if err != nil {
		return runData{}, err
	}
	data := runData{test: test}
	if isNew {
		data.newSplit = split
	}
	h, w, c := trainSet.Shape()
	if anomaly || int64(trainSet.Len())*int64(h*w*c*4) <= o.StreamAbove {
		fmt.Printf("decoding %d training images…\n", trainSet.Len())
		train, err := datasets.LoadSource(trainSet, 0)
		if err != nil {
			return runData{}, err
		}
		if train, data.test, err = checkSets(o, train, test); err != nil {
			return runData{}, err
		}
		in, err := inMemoryBatches(o, train, data.test)
		in.newSplit = data.newSplit
		return in, err
	}
	if _, _, err := checkSets(o, nil, test); err != nil {
		return runData{}, err
	}
	fmt.Printf("training images decoded batch by batch: %d of them would take more than %.4g MiB\n", trainSet.Len(), float64(o.StreamAbove)/(1<<20))
	stream, err := datasets.NewStream(trainSet, datasets.StreamOptions{BatchSize: o.Batch, Seed: uint64(o.Config.Seed)})
	if err != nil {
		return runData{}, fmt.Errorf("Options.Batch: %w", err)
	}
	data.batches, data.trainN = stream, stream.Len()
	return data, nil
}

// openSplit returns the split recorded in the run folder, with its images
// in o.DataDir when given, or a new split of o.DataDir (isNew).
func openSplit(o Options, folder training.Folder) (split *imagefolder.Split, isNew bool, err error) {
	recorded := folder.DataSplit()
	if _, err := os.Stat(recorded); err == nil {
		if split, err = imagefolder.Read(recorded, o.DataDir); err != nil {
			return nil, false, err
		}
		h, _, c := o.Config.Generator.OutputShape()
		if split.Size != h || split.Channels != c {
			return nil, false, fmt.Errorf("%s: the run's images are %d×%d with %d channels, but the generator makes %d×%d with %d", recorded, split.Size, split.Size, split.Channels, h, h, c)
		}
		fmt.Printf("images: %d for training, %d held out, in %s (the split recorded in %s)\n", len(split.Train.Paths), len(split.Test.Paths), split.Root, recorded)
		return split, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	if o.DataDir == "" {
		return nil, false, fmt.Errorf("Options.DataDir: required for Options.Config.Data %s: the folder of your PNG and JPEG images", o.Config.Data)
	}
	h, _, c := o.Config.Generator.OutputShape()
	split, err = imagefolder.New(o.DataDir, imagefolder.Options{Size: h, Channels: c, TestFraction: o.TestFraction, Seed: uint64(o.Config.Seed), Enlarge: o.Enlarge})
	if err != nil {
		return nil, false, fmt.Errorf("Options.DataDir: %w", err)
	}
	if n := len(split.Skipped); n > 0 {
		fmt.Printf("skipped, not .png, .jpg or .jpeg: %d file(s): %s\n", n, strings.Join(split.Skipped[:min(n, 3)], ", ")+map[bool]string{true: ", …"}[n > 3])
	}
	how := fmt.Sprintf("%.0f %% held out at random (seed %d)", 100*split.TestFraction, split.Seed)
	if split.TestFraction == 0 {
		how = "as its train/ and test/ folders say"
	}
	fmt.Printf("images: %d for training, %d held out, %s; %d×%d, %d channels\n", len(split.Train.Paths), len(split.Test.Paths), how, h, h, c)
	return split, true, nil
}

// LoadImages reads set ("train" or "test") of a run's data set, the first
// limit images when limit > 0: for a folder of images (data
// lebm.FolderData), the images the run's recorded split names, in dataDir
// when given, else where the split says they are; for a named data set,
// byname.Load from dataDir.
func LoadImages(runDir, data, dataDir, set string, limit int) (*datasets.Images, error) {
	if data != lebm.FolderData {
		return byname.Load(data, dataDir, set, limit)
	}
	split, err := imagefolder.Read(training.Folder{Dir: runDir}.DataSplit(), dataDir)
	if err != nil {
		return nil, err
	}
	images, err := split.Set(set)
	if err != nil {
		return nil, err
	}
	return datasets.LoadSource(images.Head(limit), 0)
}
