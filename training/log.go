package training

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/edlebm/edlebm/atomicfile"
)

// Log is a run's metrics file (MetricsFile): one JSON record per training
// step, appended as training goes. A record goes out before the checkpoint
// of its step, so a run killed between the two resumes from the previous
// checkpoint and OpenLog drops the records past it, where the other order
// would lose records for good.
type Log[R any] struct {
	file    *os.File
	encoder *json.Encoder
	path    string
}

// OpenLog opens the log at path for a run whose checkpoint is at step upTo
// (0 for a new run): it returns the records of steps up to upTo, in file
// order, rewrites the file without the later ones (the steps the resumed
// run will redo), and appends after them. step reads a record's step. A
// line cut short by a crash ends the records read: it and whatever follows
// are dropped.
func OpenLog[R any](path string, upTo int64, step func(R) int64) (*Log[R], []R, error) {
	kept, err := readLog(path, upTo, step)
	if err != nil {
		return nil, nil, err
	}
	if kept != nil {
		if err := writeLog(path, kept); err != nil {
			return nil, nil, err
		}
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics log: %w", err)
	}
	return &Log[R]{file: file, encoder: json.NewEncoder(file), path: path}, kept, nil
}

// writeLog writes records as the whole log at path, atomically.
func writeLog[R any](path string, records []R) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, r := range records {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// readLog reads the records of steps up to upTo (nil, nil when there is no
// file).
func readLog[R any](path string, upTo int64, step func(R) int64) ([]R, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("metrics log: %w", err)
	}
	defer f.Close()
	kept := []R{}
	decoder := json.NewDecoder(bufio.NewReader(f))
	for {
		var r R
		if err := decoder.Decode(&r); err != nil {
			break // the end, or a line cut short by a crash
		}
		if step(r) <= upTo {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// Append writes r as the log's next line.
func (l *Log[R]) Append(r R) error {
	if err := l.encoder.Encode(r); err != nil {
		return fmt.Errorf("metrics log %s: %w", l.path, err)
	}
	return nil
}

// Close closes the log's file.
func (l *Log[R]) Close() error { return l.file.Close() }
