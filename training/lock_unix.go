//go:build unix

package training

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is lockFile's error when another open file holds the lock.
var errLocked = errors.New("locked")

// lockFile opens path, creating it, and takes its exclusive flock without
// waiting. A lock file that another process removed between our open and
// our lock is not the folder's lock any more: then it starts again.
func lockFile(path string) (*os.File, error) {
	for {
		file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = file.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, errLocked
			}
			return nil, err
		}
		held, err1 := file.Stat()
		named, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return file, nil
		}
		_ = file.Close()
		if err1 != nil {
			return nil, err1
		}
		if err2 != nil && !errors.Is(err2, os.ErrNotExist) {
			return nil, err2
		}
	}
}

// unlockFile removes the lock file while still holding it (so that no other
// process locks the removed file and takes itself for the writer, see
// lockFile), then lets go.
func unlockFile(file *os.File, path string) error {
	err := os.Remove(path)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}
