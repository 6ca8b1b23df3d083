package training

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// holdEnv makes the test binary a helper process that claims the folder it
// names, says so on stdout, and waits to be killed.
const holdEnv = "RUNS_TEST_HOLD_FOLDER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		if _, err := (Folder{Dir: dir}).Claim(); err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestClaimRefusesASecondWriterInTheSameProcess(t *testing.T) {
	f := Folder{Dir: filepath.Join(t.TempDir(), "run")} // Claim creates it
	w, err := f.Claim()
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Claim()
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("second Claim: got %v, want a *BusyError", err)
	}
	if busy.Holder.PID != os.Getpid() || busy.Dir != f.Dir {
		t.Errorf("BusyError names process %d and folder %s, want %d and %s", busy.Holder.PID, busy.Dir, os.Getpid(), f.Dir)
	}
	if !strings.Contains(err.Error(), f.Dir) || !strings.Contains(err.Error(), os.Args[0]) {
		t.Errorf("message %q should name the folder and the holder's command %s", err, os.Args[0])
	}
	if err := w.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.Path(LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after Release: %v, want it removed", err)
	}
	again, err := f.Claim()
	if err != nil {
		t.Fatalf("Claim after Release: %v", err)
	}
	if err := again.Release(); err != nil {
		t.Fatal(err)
	}
	if err := again.Release(); err != nil {
		t.Errorf("second Release: %v, want nothing done", err)
	}
	var none *Writer
	if err := none.Release(); err != nil {
		t.Errorf("Release of nil: %v", err)
	}
}

// TestClaimAgainstAnotherProcess runs a helper process that claims the
// folder: Claim here is refused, naming the helper; once the helper is
// killed (no chance to release), Claim succeeds over its leftover lock file.
func TestClaimAgainstAnotherProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("without flock a killed writer's lock file stays (lock_other.go)")
	}
	f := Folder{Dir: t.TempDir()}
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), holdEnv+"="+f.Dir)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("helper said %q (%v), want \"held\"", line, err)
	}

	_, err = f.Claim()
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Claim while the helper holds the folder: got %v, want a *BusyError", err)
	}
	if busy.Holder.PID != helper.Process.Pid {
		t.Errorf("BusyError names process %d, want the helper %d", busy.Holder.PID, helper.Process.Pid)
	}
	if age := time.Since(busy.Holder.Since); age < 0 || age > time.Minute {
		t.Errorf("holder since %s: not the helper's start", busy.Holder.Since)
	}

	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	if _, err := os.Stat(f.Path(LockFile)); err != nil {
		t.Fatalf("the killed helper's lock file: %v, want it left behind", err)
	}
	w, err := f.Claim()
	if err != nil {
		t.Fatalf("Claim after the holder was killed: %v", err)
	}
	if err := w.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestClaimOnAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Folder{Dir: path}.Claim()
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Claim on a file: %v, want an error naming %s", err, path)
	}
}

func TestClaimIfExists(t *testing.T) {
	missing := Folder{Dir: filepath.Join(t.TempDir(), "new")}
	w, err := missing.ClaimIfExists()
	if w != nil || err != nil {
		t.Errorf("ClaimIfExists of a missing folder: %v, %v; want nil, nil", w, err)
	}
	if _, err := os.Stat(missing.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ClaimIfExists made the folder (%v)", err)
	}
	existing := Folder{Dir: t.TempDir()}
	w, err = existing.ClaimIfExists()
	if w == nil || err != nil {
		t.Fatalf("ClaimIfExists of an existing folder: %v, %v; want a hold", w, err)
	}
	defer w.Release()
	var busy *BusyError
	if _, err := existing.ClaimIfExists(); !errors.As(err, &busy) {
		t.Errorf("a second ClaimIfExists: %v, want a *BusyError", err)
	}
}
