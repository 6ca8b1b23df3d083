//go:build !unix

package training

import (
	"errors"
	"os"
)

// errLocked is lockFile's error when the lock file exists.
var errLocked = errors.New("locked")

// lockFile creates path, failing if it exists: without flock the lock is
// the file's existence, and a killed writer leaves it behind (remove it by
// hand once no process writes the folder).
func lockFile(path string) (*os.File, error) {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, errLocked
	}
	return file, err
}

// unlockFile closes and removes the lock file.
func unlockFile(file *os.File, path string) error {
	err := file.Close()
	if rerr := os.Remove(path); err == nil {
		err = rerr
	}
	return err
}
