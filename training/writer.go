package training

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Writer is this process's hold on a run folder: while it is held, Claim
// refuses the folder to every other process (and to a second Claim in
// this one), so that two runs started on the same folder cannot both write
// its checkpoints and metrics.
type Writer struct {
	file *os.File
	path string
}

// Holder describes the process that holds a run folder; it is what the
// lock file holds while the folder is claimed.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host,omitempty"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// BusyError is Claim's error for a folder that another writer holds.
type BusyError struct {
	Dir string
	// Holder is the other writer, as far as its lock file tells (zero if
	// it could not be read).
	Holder Holder
}

// Error says which folder is held, by which process and command, and how
// to go on.
func (e *BusyError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("run folder %s is in use by another process (%s is locked); stop it first, or choose another folder", e.Dir, LockFile)
	}
	host := ""
	if name, err := os.Hostname(); err == nil && h.Host != "" && h.Host != name {
		host = " on " + h.Host
	}
	return fmt.Sprintf("run folder %s is in use by process %d%s (%s), writing since %s; stop it first, or choose another folder",
		e.Dir, h.PID, host, h.Command, h.Since.Local().Format("2006-01-02 15:04:05"))
}

// Claim makes this process the folder's one writer, creating the folder if
// needed. It fails with a *BusyError naming the holder when another writer
// holds the folder. The hold is the operating system's lock on the lock
// file (flock where there is one), so it ends with the process however that
// ends: a run that was killed never blocks its resumption. Release ends the
// hold earlier.
func (f Folder) Claim() (*Writer, error) {
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("run folder %s: %w", f.Dir, err)
	}
	path := f.Path(LockFile)
	file, err := lockFile(path)
	if errors.Is(err, errLocked) {
		busy := &BusyError{Dir: f.Dir}
		if data, err := os.ReadFile(path); err == nil {
			_ = json.Unmarshal(data, &busy.Holder) // a holder still writing it: the message says less
		}
		return nil, busy
	}
	if err != nil {
		return nil, fmt.Errorf("run folder %s: locking %s: %w", f.Dir, LockFile, err)
	}
	host, _ := os.Hostname()
	holder := Holder{PID: os.Getpid(), Host: host, Command: strings.Join(os.Args, " "), Since: time.Now().UTC()}
	data, err := json.Marshal(holder)
	if err == nil {
		err = writeAll(file, append(data, '\n'))
	}
	if err != nil {
		_ = unlockFile(file, path)
		return nil, fmt.Errorf("run folder %s: writing %s: %w", f.Dir, LockFile, err)
	}
	return &Writer{file: file, path: path}, nil
}

// ClaimIfExists claims the folder when it exists already — a run to
// resume claims it before reading its checkpoint — and returns nil, nil
// when it does not, so that a new run can make it (by Claim) only once it
// knows it will write there.
func (f Folder) ClaimIfExists() (*Writer, error) {
	if _, err := os.Stat(f.Dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return f.Claim()
}

// Release ends the hold and removes the lock file. Releasing a nil or
// released Writer does nothing.
func (w *Writer) Release() error {
	if w == nil || w.file == nil {
		return nil
	}
	err := unlockFile(w.file, w.path)
	w.file = nil
	return err
}

// writeAll replaces the file's contents with data.
func writeAll(file *os.File, data []byte) error {
	if err := file.Truncate(0); err != nil {
		return err
	}
	if _, err := file.WriteAt(data, 0); err != nil {
		return err
	}
	return file.Sync()
}
