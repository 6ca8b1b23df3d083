package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/lebmrun"

	"github.com/edlebm/edlebm/lebm"
)

// runMainEnv makes the test binary run the command itself (see TestMain),
// so that tests can kill a real training process.
const runMainEnv = "EDLEBM_TRAIN_LEBM_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command returns the training command with args as a child process.
func command(args []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}

// killFlags train 8 steps (2 epochs of 4) on SimpleGo with tiny chains,
// checkpointing after every step and writing pictures at every step, so
// that a kill can land between any two of the files a step writes. The
// property under test does not depend on the backend: SimpleGo spares each
// restart a compilation.
func killFlags(out string) []string {
	return []string{"-backend", "go", "-train-size", "32", "-batch", "8", "-epochs", "2",
		"-posterior-steps", "3", "-test-posterior-steps", "3", "-gen-steps", "3", "-grid", "1", "-recon", "1",
		"-checkpoint-every", "1ns", "-pictures-every", "1ns", "-out", out}
}

// withoutTimes drops each record's wall-clock seconds, the one field that
// differs between two runs of the same steps.
func withoutTimes(recs []lebmrun.Record) []lebmrun.Record {
	out := slices.Clone(recs)
	for i := range out {
		out[i].Seconds = 0
	}
	return out
}

// A run killed (SIGKILL) at random moments and started again each time
// ends with the same metrics.jsonl as a run never killed — every step once,
// in order, with the same values — and with its last checkpoint at the
// last step: metrics and checkpoints stay consistent after a kill at any
// moment. The step pictures of -pictures-every are there too.
func TestKilledAtRandomMomentsResumesConsistently(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	whole := filepath.Join(t.TempDir(), "whole")
	start := time.Now()
	if out, err := command(killFlags(whole)).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	duration := time.Since(start)
	want := withoutTimes(readMetrics(t, whole))
	if len(want) != 8 {
		t.Fatalf("the uninterrupted run wrote %d metrics lines, want 8", len(want))
	}
	for _, name := range []string{"samples-step000000002.png", "reconstructions-step000000007.png", "samples-epoch002.png"} {
		if _, err := os.Stat(filepath.Join(whole, name)); err != nil {
			t.Errorf("-pictures-every 1ns: %v", err)
		}
	}

	// Each run but the last (three kills) is killed at a random moment after it has
	// written one more metrics line: between the files of a step, or in
	// the middle of the next one.
	killed := filepath.Join(t.TempDir(), "killed")
	metrics := filepath.Join(killed, "metrics.jsonl")
	stepTime := duration / 8
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for {
		before := fileSize(metrics)
		cmd := command(killFlags(killed))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var kill <-chan time.Time
		if kills < 3 {
			kill = afterGrowth(metrics, before, time.Duration(rng.Float64()*float64(stepTime)))
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run after %d kills: %v", kills, err)
			}
		case <-kill:
			cmd.Process.Kill()
			<-done
			kills++
			continue
		}
		break
	}
	t.Logf("%d kills (uninterrupted run %.1f s)", kills, duration.Seconds())
	if got := withoutTimes(readMetrics(t, killed)); !slices.Equal(got, want) {
		t.Errorf("after %d kills metrics.jsonl holds\n%+v\nwant\n%+v", kills, got, want)
	}
	ckpt, err := lebm.LatestCheckpoint(filepath.Join(killed, "checkpoint"))
	if err != nil || filepath.Base(ckpt) != "step-000000008" {
		t.Errorf("last checkpoint %s (%v), want step-000000008", ckpt, err)
	}
}

// errCrash stands for a crash in TestCrashAfterAnyWriteResumesConsistently.
var errCrash = errors.New("crash")

// A run that crashes right after any of the files a step writes — its
// metrics line, or its checkpoint — and is started again ends with the same
// metrics.jsonl as a run that never crashed. (Kills at random moments hit
// the short gap between two writes too rarely to test this; here the crash
// lands in every such gap.)
func TestCrashAfterAnyWriteResumesConsistently(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	runWithCrash := func(out, after string, nth int) (crashed bool) {
		o, err := parseFlags(killFlags(out))
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		o.afterWrite = func(what string) {
			if what == after {
				if seen++; seen == nth {
					panic(errCrash)
				}
			}
		}
		defer func() {
			if r := recover(); r != nil {
				if r != errCrash {
					panic(r)
				}
				crashed = true
			}
		}()
		if err := run(o, make(chan os.Signal)); err != nil {
			t.Fatal(err)
		}
		return false
	}
	whole := filepath.Join(t.TempDir(), "whole")
	runWithCrash(whole, "", 0)
	want := withoutTimes(readMetrics(t, whole))

	crashed := filepath.Join(t.TempDir(), "crashed")
	for _, c := range []struct {
		after string
		nth   int
	}{{"metrics", 1}, {"checkpoint", 1}, {"metrics", 2}, {"checkpoint", 2}, {"metrics", 1}, {"checkpoint", 1}} {
		if !runWithCrash(crashed, c.after, c.nth) {
			t.Fatalf("the run ended before its %s write #%d", c.after, c.nth)
		}
	}
	if runWithCrash(crashed, "", 0) {
		t.Fatal("crashed without being asked to")
	}
	if got := withoutTimes(readMetrics(t, crashed)); !slices.Equal(got, want) {
		t.Errorf("after crashes metrics.jsonl holds\n%+v\nwant\n%+v", got, want)
	}
}

// fileSize is the size of path, 0 when it does not exist.
func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// afterGrowth fires delay after path has grown beyond size.
func afterGrowth(path string, size int64, delay time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	go func() {
		for fileSize(path) <= size {
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(delay)
		c <- time.Now()
	}()
	return c
}

// SIGTERM (what timeout, systemd or a container runtime send) and SIGINT
// stop training at the end of the current step with a checkpoint of it,
// exiting 0 within seconds; the metrics end at the same step.
func TestSignalsStopWithACheckpoint(t *testing.T) {
	testutil.RequireFashionMNIST(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append(killFlags(out), "-epochs", "1000")
			cmd := command(args)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
				if info, err := os.Stat(filepath.Join(out, "metrics.jsonl")); err == nil && info.Size() > 0 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("no step within 2 minutes")
				}
			}
			sent := time.Now()
			cmd.Process.Signal(sig)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit after %v: %v", sig, err)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 30 s after %v", sig)
			}
			t.Logf("stopped %.2f s after %v", time.Since(sent).Seconds(), sig)
			recs := readMetrics(t, out)
			ckpt, err := lebm.LatestCheckpoint(filepath.Join(out, "checkpoint"))
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 || filepath.Base(ckpt) != fmt.Sprintf("step-%09d", recs[len(recs)-1].Step) {
				t.Errorf("checkpoint %s, metrics end at %+v", ckpt, recs[max(0, len(recs)-1):])
			}
		})
	}
}
