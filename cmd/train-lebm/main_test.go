package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
	gomlxplots "github.com/gomlx/gomlx/ui/plots"

	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/download"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/training"
)

// quickFlags train the mnist-size model on a slice of Fashion-MNIST fast
// enough for CI, with learning rates raised so 40 steps show learning.
func quickFlags(out string, epochs string, extra ...string) []string {
	return append([]string{"-backend", testutil.BackendName(), "-train-size", "64", "-batch", "16", "-epochs", epochs,
		"-posterior-steps", "5", "-lr-gen", "2e-3", "-lr-prior", "1e-3", "-gen-steps", "20",
		"-grid", "4", "-recon", "4", "-test-posterior-steps", "5", "-out", out}, extra...)
}

func runCommand(t *testing.T, args []string) error {
	t.Helper()
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	return run(o, make(chan os.Signal))
}

// readMetrics reads the metrics log of the run folder out, or the file out.
func readMetrics(t *testing.T, out string) []lebmrun.Record {
	t.Helper()
	path := out
	if info, err := os.Stat(out); err == nil && info.IsDir() {
		path = filepath.Join(out, "metrics.jsonl")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []lebmrun.Record
	dec := json.NewDecoder(f)
	for dec.More() {
		var r lebmrun.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x / float64(len(v))
	}
	return s
}

// End to end on real Fashion-MNIST images: the reconstruction error falls
// well below its starting value, the pictures and checkpoints appear, and a
// second run resumes where the first stopped.
func TestTrainOnFashionMNISTSliceAndResume(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	out := t.TempDir()
	if err := runCommand(t, quickFlags(out, "10", "-keep-epochs", "3")); err != nil {
		t.Fatal(err)
	}
	snapshots, err := lebm.Checkpoints(filepath.Join(out, "epochs"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range snapshots {
		names = append(names, filepath.Base(p))
	}
	if want := []string{"step-000000032", "step-000000036", "step-000000040"}; !slices.Equal(names, want) {
		t.Errorf("-keep-epochs 3 left snapshots %v, want the last three epochs' %v", names, want)
	}
	recs := readMetrics(t, out)
	if len(recs) != 40 {
		t.Fatalf("metrics.jsonl has %d steps, want 40 (10 epochs of 4 batches)", len(recs))
	}
	var train, test []float64
	for _, r := range recs {
		train = append(train, r.ReconstructionMSE)
		if r.TestReconstructionMSE > 0 {
			test = append(test, r.TestReconstructionMSE)
		}
	}
	start, end := mean(train[:2]), mean(train[len(train)-4:])
	t.Logf("training reconstruction MSE %.3f → %.3f; test %.3f → %.3f", start, end, test[0], test[len(test)-1])
	if end > 0.4*start {
		t.Errorf("training reconstruction MSE went from %.3f to %.3f; want it below 40%% of the start", start, end)
	}
	if len(test) != 10 || test[len(test)-1] > 0.6*test[0] {
		t.Errorf("test reconstruction MSE per epoch %v: want 10 values ending below 60%% of the first", test)
	}
	for _, name := range []string{"samples-epoch010.png", "reconstructions-epoch010.png", "losses.png", "energies.png", "report.html", "checkpoint/LATEST"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}

	if err := runCommand(t, quickFlags(out, "11")); err != nil {
		t.Fatal(err)
	}
	recs = readMetrics(t, out)
	var steps []int64
	for _, r := range recs {
		steps = append(steps, r.Step)
	}
	want := make([]int64, 44)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(steps, want) {
		t.Errorf("after resuming for one more epoch the metrics hold steps %v, want 1..44", steps)
	}
	checkGoMLXTools(t, out, recs)
}

// checkGoMLXTools reads the run's latest checkpoint with GoMLX's own
// tools: checkpoints.Load finds every variable lebm.Load does, and
// gomlxplots.LoadPointsFromCheckpoint the curves of recs (whose training
// steps, under 400, are plotted one point each).
func checkGoMLXTools(t *testing.T, out string, recs []lebmrun.Record) {
	t.Helper()
	latest, err := lebm.LatestCheckpoint(filepath.Join(out, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.New()
	if _, err := checkpoints.Load(ctx).Dir(latest).Immediate().Done(); err != nil {
		t.Fatalf("GoMLX's checkpoints.Load of %s: %v", latest, err)
	}
	model, err := lebm.Load(testutil.Backend(), filepath.Join(out, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	count := func(c *context.Context) (n int) {
		for range c.IterVariables() {
			n++
		}
		return n
	}
	if got, want := count(ctx), count(model.Context()); got != want || got == 0 {
		t.Errorf("GoMLX's checkpoints.Load found %d variables in %s, lebm.Load %d", got, latest, want)
	}

	points, err := gomlxplots.LoadPointsFromCheckpoint(latest)
	if err != nil {
		t.Fatal(err)
	}
	curves := map[string][][2]float64{}
	for _, p := range points {
		curves[p.MetricName] = append(curves[p.MetricName], [2]float64{p.Step, p.Value})
	}
	var train, test [][2]float64
	for _, r := range recs {
		train = append(train, [2]float64{float64(r.Step), r.ReconstructionMSE})
		if r.TestReconstructionMSE > 0 {
			test = append(test, [2]float64{float64(r.Step), r.TestReconstructionMSE})
		}
	}
	for name, want := range map[string][][2]float64{"Train: reconstruction MSE": train, "Test: reconstruction MSE": test} {
		if got := curves[name]; !slices.Equal(got, want) {
			t.Errorf("plot points %q: %v, want metrics.jsonl's %v", name, got, want)
		}
	}
	if n := len(curves["Train: prior loss"]); n != len(recs) {
		t.Errorf("%d prior-loss plot points, want %d", n, len(recs))
	}
}

// A run stopped in the middle of an epoch (-stop-after) and started again
// goes on exactly as if it had never stopped: every step's metrics — the
// losses, energies and reconstruction errors, which depend on the
// parameters, both Adams' moments, the random state and the batch order —
// equal an uninterrupted run's, bit for bit, through the end of the epoch
// and the epoch's test reconstruction.
//
// The stopped run reads the same images written out as a folder of PNGs
// (-data folder, train/ and test/ subfolders), as a user with their own
// images would, and resumes from the split recorded in its folder, without
// -data-dir, decoding its images batch by batch (-stream-above-mib):
// training from the folder, in memory or streamed, is training from the
// IDX files, step for step.
func TestStopMidEpochAndResumeEqualsUninterrupted(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	whole, sliced := t.TempDir(), t.TempDir()
	if err := runCommand(t, quickFlags(whole, "2")); err != nil {
		t.Fatal(err)
	}
	images := t.TempDir()
	for _, split := range []struct {
		name string
		n    int
	}{{"train", 64}, {"test", 4}} {
		im, err := byname.Load("fashion-mnist", mnist.DefaultFashionDir, split.name, split.n)
		if err != nil {
			t.Fatal(err)
		}
		testutil.WriteImagesAsPNG(t, filepath.Join(images, split.name), im)
	}
	folderFlags := func(data string, extra ...string) []string {
		return quickFlags(sliced, "2", append([]string{"-data", data, "-image-size", "28", "-channels", "1"}, extra...)...)
	}
	// 4 batches per epoch: step 6 is in the middle of the second epoch.
	if err := runCommand(t, folderFlags("folder:"+images, "-stop-after", "6")); err != nil {
		t.Fatal(err)
	}
	if n := len(readMetrics(t, sliced)); n != 6 {
		t.Fatalf("-stop-after 6 ran %d steps", n)
	}
	sliced6 := t.TempDir()
	if err := os.CopyFS(sliced6, os.DirFS(sliced)); err != nil {
		t.Fatal(err)
	}
	// Resumed, the images are decoded batch by batch (datasets.Stream).
	if err := runCommand(t, folderFlags("folder", "-stream-above-mib", "0.01")); err != nil {
		t.Fatal(err)
	}
	want, got := readMetrics(t, whole), readMetrics(t, sliced)
	if len(want) != 8 || len(got) != 8 {
		t.Fatalf("%d and %d steps, want 8 each", len(want), len(got))
	}
	for i := range want {
		want[i].Seconds, got[i].Seconds = 0, 0
		if got[i] != want[i] {
			t.Errorf("step %d after a stop at step 6:\n got %+v\nwant %+v", i+1, got[i], want[i])
		}
	}
	if want[7].TestReconstructionMSE == 0 {
		t.Error("the last step has no test reconstruction error: the epoch did not end there")
	}

	// Checkpoints do not depend on the device count: the run stopped at
	// step 6 on one device goes on on 2 for a step, then on 1 again,
	// following the uninterrupted single-device run up to the order of
	// float32 sums (data-parallel steps are the single-device steps,
	// partitioned).
	sliced = sliced6
	for _, run := range [][]string{
		folderFlags("folder", "-devices", "2", "-stop-after", "1"),
		folderFlags("folder"),
	} {
		if err := runCommand(t, run); err != nil {
			t.Fatalf("%q: %v", run, err)
		}
	}
	got = readMetrics(t, sliced6)
	if len(got) != 8 {
		t.Fatalf("%d steps, want 8", len(got))
	}
	worst := 0.0
	for i := range want {
		w, g := want[i], got[i]
		worst = math.Max(worst, testutil.MaxRelativeDiff(
			[]float64{g.GeneratorLoss, g.PriorLoss, g.ReconstructionMSE, g.TestReconstructionMSE},
			[]float64{w.GeneratorLoss, w.PriorLoss, w.ReconstructionMSE, w.TestReconstructionMSE}, 1e-3))
		if worst > 5e-3 { // float32 sums in another order, amplified by the Langevin chains
			t.Fatalf("step %d after changes of device count:\n got %+v\nwant %+v", i+1, g, w)
		}
	}
	t.Logf("largest relative difference from the single-device run: %.2g", worst)
}

func TestBadInputIsAClearErrorAndOverwritesNothing(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	// A data folder of 32×32 images: the wrong size for the mnist generator.
	wrongSize := t.TempDir()
	for _, split := range []struct{ images, labels string }{
		{"train-images-idx3-ubyte", "train-labels-idx1-ubyte"}, {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"},
	} {
		testutil.WriteBlankIDX(t, filepath.Join(wrongSize, split.images), 8, 32, 32)
		testutil.WriteBlankIDX(t, filepath.Join(wrongSize, split.labels), 8)
	}
	// A finished run whose checkpoint later runs must not overwrite.
	trained := t.TempDir()
	if err := runCommand(t, quickFlags(trained, "1")); err != nil {
		t.Fatal(err)
	}
	ckpt, err := lebm.LatestCheckpoint(filepath.Join(trained, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	bins, _ := filepath.Glob(filepath.Join(ckpt, "*.bin"))

	cases := []struct {
		name    string
		args    []string
		damage  func()
		mention []string
	}{
		{"missing data folder", quickFlags(t.TempDir(), "1", "-data-dir", "/no/such/folder"), nil,
			[]string{"-data-dir", "/no/such/folder"}},
		{"wrong image size", quickFlags(t.TempDir(), "1", "-data-dir", wrongSize), nil,
			[]string{"32×32×1", "28×28×1"}},
		{"unknown data set", quickFlags(t.TempDir(), "1", "-data", "imagenet"), nil, []string{"-data", "imagenet"}},
		{"svhn without its files", quickFlags(t.TempDir(), "1", "-data", "svhn", "-data-dir", t.TempDir()), nil, []string{"-data-dir", "train_32x32.mat", "does not exist"}},
		{"anomaly hold-out class that does not exist", quickFlags(t.TempDir(), "1", "-anomaly-holdout", "12"), nil,
			[]string{"-anomaly-holdout", "held-out class 12"}},
		{"bad ED setting", quickFlags(t.TempDir(), "1", "-ed-t", "-1"), nil, []string{"t (perturbation variance) = -1"}},
		{"unknown compute dtype", quickFlags(t.TempDir(), "1", "-compute-dtype", "float16"), nil, []string{"ComputeDType", "float16"}},
		{"batch that does not split over the devices", quickFlags(t.TempDir(), "1", "-devices", "3"), nil,
			[]string{"flag -batch 16", "does not split over 3 devices"}},
		{"more devices than the backend has", quickFlags(t.TempDir(), "1", "-backend", "go", "-devices", "2"), nil,
			[]string{"flag -devices 2", "has 1 device(s)"}},
		{"checkpoint of another architecture", quickFlags(trained, "2", "-ed-m", "4"), nil,
			[]string{"different model", "this run asks for lebm_ed_m=4", "the checkpoint has lebm_ed_m=16"}},
		{"corrupt checkpoint", quickFlags(trained, "2"), func() { os.Truncate(bins[0], 100) },
			[]string{"corrupt", ckpt}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.damage != nil {
				c.damage()
			}
			before, _ := os.ReadDir(filepath.Join(trained, "checkpoint"))
			err := runCommand(t, c.args)
			if err == nil {
				t.Fatalf("no error")
			}
			for _, m := range c.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			after, _ := os.ReadDir(filepath.Join(trained, "checkpoint"))
			if len(before) != len(after) {
				t.Errorf("the checkpoint folder changed from %v to %v", before, after)
			}
		})
	}
}

// TestResumesARunOfAnEarlierVersion: a run folder that train-lebm wrote at
// commit 98af0f0 (testdata/make-fixture.sh: a tiny model on SimpleGo,
// stopped after its first epoch) resumes with today's command to exactly
// the steps of that version's run trained without stopping: its
// checkpoint, settings, random state and metrics log all still read.
func TestResumesARunOfAnEarlierVersion(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	fixture := filepath.Join("testdata", "run-98af0f0")
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "uninterrupted.jsonl")); err != nil {
		t.Fatal(err)
	}
	err := runCommand(t, []string{"-backend", "go", "-train-size", "32", "-batch", "16", "-epochs", "2",
		"-posterior-steps", "3", "-test-posterior-steps", "3", "-gen-steps", "3", "-grid", "4", "-recon", "4",
		"-set", "lebm_generator_layers=8,4,1,0,8,3,2,1,8,4,2,1,1,4,2,1;lebm_prior_hidden=16,16", "-out", out})
	if err != nil {
		t.Fatal(err)
	}
	got, want := readMetrics(t, out), readMetrics(t, filepath.Join(fixture, "uninterrupted.jsonl"))
	if len(got) != 4 || len(want) != 4 {
		t.Fatalf("%d steps resumed, %d uninterrupted; want 4 of each", len(got), len(want))
	}
	// Steps 1 and 2 are the stopped run's own records, times included: the
	// run went on from its checkpoint rather than starting over (which, from
	// the same seed, would give the same values).
	for i, kept := range readMetrics(t, fixture) {
		if got[i] != kept {
			t.Errorf("step %d: %+v, want the stopped run's record %+v", i+1, got[i], kept)
		}
	}
	for i := range got {
		got[i].Seconds, want[i].Seconds = 0, 0
		if got[i] != want[i] {
			t.Errorf("step %d: resumed %+v, uninterrupted at 98af0f0 %+v", i+1, got[i], want[i])
		}
	}
}

// TestOneWriterPerRunFolder: a run started on a folder that another
// process writes (here this test, holding it as a running train-lebm
// would) is refused, naming that process, and writes nothing there.
func TestOneWriterPerRunFolder(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	out := t.TempDir()
	holder, err := training.Folder{Dir: out}.Claim()
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	err = runCommand(t, quickFlags(out, "1"))
	if err == nil {
		t.Fatal("a second writer was let in")
	}
	for _, m := range []string{"flag -out", out, fmt.Sprintf("in use by process %d", os.Getpid())} {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %q", err, m)
		}
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != training.LockFile {
		t.Errorf("the refused run left %v in the folder, want only the holder's %s", entries, training.LockFile)
	}
}

// TestMissingDataDirSaysWhatItHolds: without -data-dir (only
// Fashion-MNIST has a default), the error of each latent-EBM data set names the files the folder must
// hold — every official file of the download registry — and offers
// -download exactly where it can fetch them.
func TestMissingDataDirSaysWhatItHolds(t *testing.T) {
	for _, name := range byname.Names {
		if _, err := lebm.DefaultConfig(name); err != nil || name == "fashion-mnist" {
			continue // not a latent-EBM data set, or one with a default folder
		}
		t.Run(name, func(t *testing.T) {
			_, err := parseFlags([]string{"-data", name})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, "flag -data-dir") || !strings.Contains(msg, "required for -data "+name) {
				t.Errorf("error %q does not name the flag and the data set", msg)
			}
			files, fetchable := download.Registry[name]
			for _, f := range files {
				if !strings.Contains(msg, strings.TrimSuffix(f.Name, ".gz")) {
					t.Errorf("error %q does not name the official file %s", msg, f.Name)
				}
			}
			if strings.Contains(msg, "-download") != fetchable {
				t.Errorf("error %q: offers -download %v, want %v", msg, !fetchable, fetchable)
			}
			if byname.FolderContents(name) == "" {
				t.Errorf("no folder description for %s", name)
			}
		})
	}
}

// Mistakes a user makes are reported before any data is read — each case
// points -data-dir at a folder that does not exist, so an error about the
// data would mean the check came too late — naming the flag as typed and
// its value, quoting no more than the start of a bad file, and creating no
// folder.
func TestMistakesAreNamedBeforeLoadingAndCreateNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("not a folder"), 0o644)
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 83_000)...)
	badImages := t.TempDir() // a folder of images, one of them text
	fashion, err := byname.Load("fashion-mnist", mnist.DefaultFashionDir, "test", 3)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteImagesAsPNG(t, badImages, fashion)
	os.WriteFile(filepath.Join(badImages, "00001.png"), []byte("a note, not a picture"), 0o644)
	for _, c := range []struct {
		name    string
		args    []string
		prepare func(out string) // files the run folder holds before
		mention []string
	}{
		{"NaN learning rate", []string{"-lr-gen", "NaN"}, nil, []string{"flag -lr-gen NaN", "must be a finite number > 0"}},
		{"zero epochs", []string{"-epochs", "0"}, nil, []string{"flag -epochs 0: must be ≥ 1"}},
		{"negative grid", []string{"-grid", "-3"}, nil, []string{"flag -grid -3: must be ≥ 1"}},
		{"batch over the data set", []string{"-batch", "100000"}, nil, []string{"flag -batch 100000", "60000 training images"}},
		{"batch over -train-size", []string{"-batch", "64", "-train-size", "32"}, nil, []string{"flag -train-size 32", "-batch 64"}},
		{"ED setting", []string{"-ed-t", "-1"}, nil, []string{"flag -ed-t -1", "t (perturbation variance) = -1"}},
		{"unknown -set name", []string{"-set", "lebm_bogus=1"}, nil, []string{"flag -set lebm_bogus=1", `"lebm_bogus" is not known`}},
		{"bad -set value", []string{"-set", "lebm_ed_m=0"}, nil, []string{"flag -set lebm_ed_m=0", "M = 0"}},
		{"negative device count", []string{"-devices", "-1"}, nil, []string{"flag -devices -1: must be ≥ 0"}},
		{"-out a file", []string{"-out", file}, nil, []string{"flag -out " + file, "not a folder"}},
		{"image size for a named data set", []string{"-image-size", "64"}, nil, []string{"flag -image-size: only for -data folder"}},
		{"image size without a generator", []string{"-data", "folder", "-image-size", "48"}, nil, []string{"-image-size", "no generator for 48×48 images"}},
		{"grey and colour", []string{"-data", "folder", "-channels", "2"}, nil, []string{"-channels", "generator of 2 channels"}},
		{"test fraction", []string{"-data", "folder", "-test-fraction", "1"}, nil, []string{"flag -test-fraction 1: must be in (0, 1)"}},
		{"two image folders", []string{"-data", "folder:/elsewhere"}, nil, []string{"flag -data folder:/elsewhere: names the folder, and so does -data-dir /no/such/data"}},
		{"no image folder", []string{"-data", "folder"}, nil, []string{"flag -data-dir", "/no/such/data"}},
		{"a text file named .png", []string{"-data", "folder", "-data-dir", badImages, "-image-size", "28", "-channels", "1"}, nil,
			[]string{"flag -data-dir", filepath.Join(badImages, "00001.png"), "not a PNG or JPEG file"}},
		{"LATEST a picture", nil, func(out string) {
			os.MkdirAll(filepath.Join(out, "checkpoint"), 0o755)
			os.WriteFile(filepath.Join(out, "checkpoint", "LATEST"), png, 0o644)
		}, []string{"LATEST is corrupt", `\x89PNG`}},
		{"LATEST naming a file", nil, func(out string) {
			os.MkdirAll(filepath.Join(out, "checkpoint"), 0o755)
			os.WriteFile(filepath.Join(out, "checkpoint", "LATEST"), []byte("step-000000005\n"), 0o644)
			os.WriteFile(filepath.Join(out, "checkpoint", "step-000000005"), nil, 0o644)
		}, []string{"step-000000005, which is a file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			if c.prepare != nil {
				c.prepare(out)
			}
			before := listTree(t, filepath.Dir(out))
			args := append([]string{"-backend", "go", "-data-dir", "/no/such/data", "-out", out}, c.args...)
			err := runCommand(t, args)
			if err == nil {
				t.Fatal("no error")
			}
			for _, m := range c.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if len(err.Error()) > 600 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			if after := listTree(t, filepath.Dir(out)); !slices.Equal(before, after) {
				t.Errorf("files before %v, after %v", before, after)
			}
		})
	}
}

// listTree lists the paths under dir.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		paths = append(paths, path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// -set reaches every setting by its context name and is applied after the
// short flags.
func TestSetChangesContextSettings(t *testing.T) {
	o, err := parseFlags([]string{"-ed-t", "0.3", "-set", "lebm_ed_t=0.5;lebm_prior_hidden=64,32;lebm_posterior_step_size=0.05"})
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.ED.T != 0.5 || !slices.Equal(o.cfg.Prior.Hidden, []int{64, 32}) || o.cfg.PosteriorLangevin.StepSize != 0.05 {
		t.Errorf("config %+v: want ED t 0.5 (-set over -ed-t), prior hidden [64 32], posterior step 0.05", o.cfg)
	}
}
