package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/download"
	"github.com/edlebm/edlebm/datasets/imagefolder"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/nets"
	"github.com/edlebm/edlebm/training"
)

// options are the command's settings: the model configuration plus what
// the run does around it.
type options struct {
	cfg lebm.Config

	data, dataDir, out, backend string
	download                    bool
	// imageSize, channels and testFraction shape and split a folder of
	// images (-data folder).
	imageSize, channels int
	testFraction        float64
	// streamAboveMiB is lebmrun.Options.StreamAbove in MiB.
	streamAboveMiB float64
	enlarge        bool
	runSize
	// paper asks for the paper's full run on any backend; sized tells
	// whether -epochs, -batch or -train-size was given. Without either, a
	// CPU backend gets a run of its size (see sizeFor).
	paper, sized bool
	// presetBatch tells that -preset chose the batch size, which a run
	// sized for the CPU keeps.
	presetBatch     bool
	anomalyHoldout  int
	gridN, reconN   int
	keepEpochs      int
	checkpointEvery time.Duration
	picturesEvery   time.Duration
	// stopAfter ends this invocation after that many steps (0: never),
	// checkpointed, for runs sliced into sessions; running again resumes.
	stopAfter int64
	// devices is the number of devices to train data-parallel on (0:
	// every device on CUDA, one elsewhere).
	devices int
	// afterWrite is lebmrun.Options.AfterWrite, for tests.
	afterWrite func(what string)
}

func parseFlags(args []string) (options, error) {
	var o options
	fs, model := declareFlags(&o)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := setFlags(fs)
	if err := o.checkFolderFlags(set); err != nil {
		return o, err
	}
	cfg, err := model.config(o.data, o.imageSize, o.channels)
	if err != nil {
		// Name the flag at fault: the one whose value fails on its own.
		return o, flagcheck.Blame(fs, err, []string{"data"}, func(args []string) error {
			var alone options
			fs, model := declareFlags(&alone)
			if err := fs.Parse(args); err != nil {
				return err
			}
			if err := alone.checkFolderFlags(setFlags(fs)); err != nil {
				return err
			}
			_, err := model.config(alone.data, alone.imageSize, alone.channels)
			return err
		})
	}
	cfg.AnomalyHoldout = o.anomalyHoldout
	o.cfg = cfg
	o.sized = set["epochs"] || set["batch"] || set["train-size"]
	if *model.preset == lebm.PresetPangCD && !set["batch"] {
		o.batch, o.presetBatch = lebm.PangCDBatch, true
	}
	if o.dataDir == "" && o.data == "fashion-mnist" {
		o.dataDir = mnist.DefaultFashionDir
	}
	if o.out == "" {
		o.out = filepath.Join("runs", o.data+"-"+cfg.Method)
		if o.data == lebm.FolderData && o.dataDir != "" {
			o.out = filepath.Join("runs", filepath.Base(o.dataDir)+"-"+cfg.Method)
		}
	}
	if o.dataDir == "" && o.data == lebm.FolderData && !fileExists(training.Folder{Dir: o.out}.DataSplit()) {
		return o, fmt.Errorf("flag -data-dir: required for -data %s (or -data %s:PATH): the folder of your PNG and JPEG images (optional only when resuming a run, whose %s names it)", o.data, o.data, training.DataSplitFile)
	}
	if o.dataDir == "" && o.data != lebm.FolderData {
		return o, fmt.Errorf("flag -data-dir: required for -data %s: the folder holding %s%s", o.data, byname.FolderContents(o.data), downloadHint(o.data))
	}
	// The run layer checks the rest of the values (lebmrun.Options); these
	// flags' zero would be its default there, but is no flag value.
	return o, flagcheck.Check(
		flagcheck.Rule{Name: "grid", Value: o.gridN, OK: o.gridN >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "recon", Value: o.reconN, OK: o.reconN >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "checkpoint-every", Value: o.checkpointEvery, OK: o.checkpointEvery > 0, Want: "> 0"},
		flagcheck.Rule{Name: "pictures-every", Value: o.picturesEvery, OK: o.picturesEvery > 0, Want: "> 0"},
		flagcheck.Rule{Name: "stream-above-mib", Value: o.streamAboveMiB, OK: o.streamAboveMiB > 0, Want: "> 0"},
	)
}

// declareFlags declares the command's flags, writing the run's settings
// into o and returning the model's.
func declareFlags(o *options) (*flag.FlagSet, modelSettings) {
	fs := flag.NewFlagSet("train-lebm", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "fashion-mnist", fmt.Sprintf("data set: %v, or %q for a folder of your own PNG and JPEG images (-data-dir, or -data %s:PATH)", byname.Names, lebm.FolderData, lebm.FolderData))
	fs.IntVar(&o.imageSize, "image-size", 32, fmt.Sprintf("-data %s: the side of the square images, %v: each image is resized so that its shorter side is this, and centre-cropped; the paper's generator of that size", lebm.FolderData, imagefolder.Sizes))
	fs.Float64Var(&o.streamAboveMiB, "stream-above-mib", lebmrun.DefaultStreamAbove>>20, fmt.Sprintf("-data %s: decode the training images batch by batch as they are needed, not all before training, when they would take more than this many MiB in memory", lebm.FolderData))
	fs.BoolVar(&o.enlarge, "enlarge", false, fmt.Sprintf("-data %s: accept images smaller than -image-size, enlarging them (bilinear); without it they are an error", lebm.FolderData))
	fs.IntVar(&o.channels, "channels", 3, fmt.Sprintf("-data %s: 3 (colour) or 1 (grey)", lebm.FolderData))
	fs.Float64Var(&o.testFraction, "test-fraction", imagefolder.DefaultTestFraction, fmt.Sprintf("-data %s: the fraction of the images held out for testing, chosen by -seed, when the folder has no %s/ and %s/ subfolders (the split is recorded in OUT/%s)", lebm.FolderData, imagefolder.TrainDir, imagefolder.TestDir, training.DataSplitFile))
	fs.StringVar(&o.dataDir, "data-dir", "", "the data set's files: IDX folder (mnist, fashion-mnist; default Debian's "+mnist.DefaultFashionDir+
		" for fashion-mnist), folder of train_32x32.mat/test_32x32.mat (svhn), cifar-10-binary.tar.gz or its folder (cifar10), CelebA root with img_align_celeba/ or its zip and list_eval_partition.txt (celeba64, celeba128)")
	fs.BoolVar(&o.download, "download", false, "download the data set's official files into -data-dir first (svhn, cifar10, mnist, fashion-mnist; checksums verified, resumable)")
	fs.StringVar(&o.out, "out", "", "output folder for checkpoints, pictures and metrics (default runs/DATA-METHOD)")
	fs.StringVar(&o.backend, "backend", "auto", backend.FlagUsage)
	fs.IntVar(&o.epochs, "epochs", paperSize.epochs, "epochs to train (a resumed run continues up to this many); "+cpuDefaultNote)
	fs.IntVar(&o.batch, "batch", paperSize.batch, "batch size; "+cpuDefaultNote)
	fs.IntVar(&o.trainSize, "train-size", paperSize.trainSize, "use only the first N training images (0: all); "+cpuDefaultNote)
	fs.BoolVar(&o.paper, "paper", false, "train the paper's full run (every image, 200 epochs of 128) on any backend, not only on a CUDA GPU")
	fs.IntVar(&o.anomalyHoldout, "anomaly-holdout", -1, "anomaly-detection protocol: pool train and test, hold this class out, train on 80 % of the rest (seed 42); -1: off")
	fs.IntVar(&o.gridN, "grid", 64, "generated images in each sample grid")
	fs.IntVar(&o.reconN, "recon", 32, "test images in each reconstruction grid")
	fs.IntVar(&o.keepEpochs, "keep-epochs", 0, "also snapshot the model at the end of each epoch into OUT/"+training.EpochsDir+", keeping the last N (eval-lebm averages anomaly AUPRC over them); 0: off")
	fs.DurationVar(&o.checkpointEvery, "checkpoint-every", 10*time.Minute, "also checkpoint this often within an epoch")
	fs.DurationVar(&o.picturesEvery, "pictures-every", 5*time.Minute, "besides each epoch's grids, write sample and reconstruction grids this often within an epoch (files named by step)")
	fs.IntVar(&o.devices, "devices", 0, "train data-parallel over this many devices, each batch split between them (0: every device on CUDA, one elsewhere; on XLA CPU, the plugin is asked for that many devices); -batch must be a multiple of it")
	fs.Int64Var(&o.stopAfter, "stop-after", 0, "checkpoint and exit after this many steps of this invocation, even mid-epoch; run the same command again to go on (0: run to the end)")
	return fs, modelFlags(fs)
}

// setFlags is the set of flags the user gave.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// modelSettings are flags that override the data set's default Config
// when given: -preset, then the short flags of lebm's settings table and
// -set (lebm.DeclareFlags).
type modelSettings struct {
	preset *string
	apply  func(*lebm.Config) error
}

// defaultSeed makes runs reproducible unless -seed 0 asks for a random
// seed (lebm's own default).
const defaultSeed = 1

func modelFlags(fs *flag.FlagSet) modelSettings {
	help, _ := lebm.DefaultConfig("svhn") // what -h shows
	help.Seed, help.Prior.Init = defaultSeed, nets.InitPyTorch
	return modelSettings{
		preset: fs.String("preset", lebm.PresetPaper, fmt.Sprintf("settings the other flags start from: %q the paper's, %q Pang et al.'s CD-LEBM baseline (method cd, prior lr 2e-5, lr decay 0.998 per epoch, batch %d)", lebm.PresetPaper, lebm.PresetPangCD, lebm.PangCDBatch)),
		apply:  lebm.DeclareFlags(fs, help),
	}
}

// config returns the data set's default configuration (of -preset) with
// the flags the user set applied, then -set, validated. A folder of images
// gets the generator of their size and channels.
func (s modelSettings) config(data string, imageSize, channels int) (lebm.Config, error) {
	if _, err := lebm.DefaultConfig(data); err != nil {
		return lebm.Config{}, fmt.Errorf("flag -data: %w", err)
	}
	cfg, err := lebm.PresetConfig(data, *s.preset)
	if err != nil {
		return cfg, fmt.Errorf("flag -preset: %w", err)
	}
	if data == lebm.FolderData {
		if cfg.Generator, err = lebm.ImageGenerator(imageSize, channels); err != nil {
			return cfg, fmt.Errorf("flags -image-size and -channels: %w", err)
		}
	}
	cfg.Seed = defaultSeed
	return cfg, s.apply(&cfg)
}

// downloadHint tells how to fetch data set name, when -download can.
func downloadHint(name string) string {
	if _, ok := download.Registry[name]; ok {
		return "; add -download to fetch the official files into it (checksums verified)"
	}
	return ""
}

// checkFolderFlags reads -data folder:PATH and refuses the flags of a
// folder of images for a named data set.
func (o *options) checkFolderFlags(set map[string]bool) error {
	if dir, ok := strings.CutPrefix(o.data, lebm.FolderData+":"); ok {
		if set["data-dir"] {
			return fmt.Errorf("flag -data %s: names the folder, and so does -data-dir %s: give one", o.data, o.dataDir)
		}
		o.data, o.dataDir = lebm.FolderData, dir
	}
	if o.data == lebm.FolderData {
		return flagcheck.Check(
			flagcheck.Rule{Name: "test-fraction", Value: o.testFraction, OK: o.testFraction > 0 && o.testFraction < 1, Want: "in (0, 1)"},
			flagcheck.Rule{Name: "stream-above-mib", Value: o.streamAboveMiB, OK: o.streamAboveMiB*(1<<20) >= 1, Want: "at least a byte"})
	}
	if !slices.Contains(byname.Names, o.data) {
		return fmt.Errorf("flag -data %s: no loader for it; the data sets this command reads are %v, and %s:PATH for a folder of your own images", o.data, byname.Names, lebm.FolderData)
	}
	for _, name := range []string{"image-size", "channels", "test-fraction", "stream-above-mib", "enlarge"} {
		if set[name] {
			return fmt.Errorf("flag -%s: only for -data %s; %s has its own images", name, lebm.FolderData, o.data)
		}
	}
	return nil
}

// fileExists reports whether p names an existing file.
func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
