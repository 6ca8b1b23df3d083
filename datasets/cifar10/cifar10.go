// Package cifar10 loads the binary version of CIFAR-10
// (https://www.cs.toronto.edu/~kriz/cifar.html): the batch files
// data_batch_1.bin … data_batch_5.bin and test_batch.bin, read from the
// extracted cifar-10-batches-bin directory or streamed straight out of
// cifar-10-binary.tar.gz.
package cifar10

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/edlebm/edlebm/datasets"
)

// Image dimensions and record layout of the binary version.
const (
	Height, Width, Channels = 32, 32, 3
	// RecordSize is the size of one record: a label byte, then the 1024
	// red, the 1024 green and the 1024 blue bytes, each plane row-major.
	RecordSize = 1 + Height*Width*Channels
	// MaxBatchBytes bounds the size of one batch file, so that a corrupt
	// archive header cannot make Load attempt a huge allocation. The
	// official files hold 10,000 records, 30,730,000 bytes.
	MaxBatchBytes = 1 << 28
)

// Standard names of the directory and archive of the official distribution.
const (
	BatchesDir  = "cifar-10-batches-bin"
	ArchiveName = "cifar-10-binary.tar.gz"
)

// ClassNames gives the name of each label, as in batches.meta.txt.
var ClassNames = [10]string{
	"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
}

// splitFiles lists each split's batch files in load order.
var splitFiles = map[string][]string{
	"train": {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"},
	"test":  {"test_batch.bin"},
}

// Load reads split "train" (data_batch_1.bin … data_batch_5.bin, 50,000
// images, in that order) or "test" (test_batch.bin, 10,000 images) from path,
// which is either
//   - a tar archive, gzipped or not, such as cifar-10-binary.tar.gz: its
//     entries are matched by base name and read without extracting them;
//   - a directory holding cifar-10-batches-bin/ or cifar-10-binary.tar.gz,
//     tried in that order;
//   - the directory of the batch files themselves.
//
// Pixels are returned NHWC scaled to [-1, 1] as x/255·2 − 1, with labels
// 0–9 (see ClassNames); the set is named "cifar10/<split>". Load errors on a
// missing batch, a file that is not a whole number of records, and a label
// outside 0–9, naming the file.
func Load(path, split string) (*datasets.Images, error) {
	names, ok := splitFiles[split]
	if !ok {
		return nil, fmt.Errorf("cifar10: split %q, want \"train\" or \"test\"", split)
	}
	source, isArchive, err := resolve(path)
	if err != nil {
		return nil, err
	}
	var batches [][]byte
	if isArchive {
		batches, err = readArchive(source, names)
	} else {
		batches, err = readDir(source, names)
	}
	if err != nil {
		return nil, err
	}

	records := 0
	for _, b := range batches {
		records += len(b) / RecordSize
	}
	im := &datasets.Images{
		Name: "cifar10/" + split, Height: Height, Width: Width, Channels: Channels,
		Pixels: make([]float32, 0, records*Height*Width*Channels),
		Labels: make([]int, 0, records),
	}
	for i, b := range batches {
		if err := appendRecords(im, b); err != nil {
			return nil, fmt.Errorf("cifar10: %s: %w", describe(source, isArchive, names[i]), err)
		}
	}
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("cifar10: %s: %w", source, err)
	}
	return im, nil
}

// appendRecords decodes data, a positive whole number of records, and
// appends its images and labels to im (which must be 32×32×3), updating im.N.
// It leaves im unchanged on error.
func appendRecords(im *datasets.Images, data []byte) error {
	if len(data) == 0 || len(data)%RecordSize != 0 {
		return fmt.Errorf("%d bytes, want a positive multiple of the %d-byte record (1 label byte + 3072 pixel bytes)",
			len(data), RecordSize)
	}
	n := len(data) / RecordSize
	for i := range n {
		if label := data[i*RecordSize]; label > 9 {
			return fmt.Errorf("record %d: label %d, want 0 to 9", i, label)
		}
	}
	var scaled [256]float32
	for v := range scaled {
		scaled[v] = float32(float64(v)/255*2 - 1)
	}
	const plane, size = Height * Width, Height * Width * Channels
	start := len(im.Pixels)
	im.Pixels = slices.Grow(im.Pixels, n*size)[:start+n*size]
	for i := range n {
		record := data[i*RecordSize : (i+1)*RecordSize]
		im.Labels = append(im.Labels, int(record[0]))
		image := im.Pixels[start+i*size : start+(i+1)*size]
		// Pixel p = h·Width + w of channel c is at 1 + c·plane + p.
		for c := range Channels {
			for p := range plane {
				image[p*Channels+c] = scaled[record[1+c*plane+p]]
			}
		}
	}
	im.N += n
	return nil
}

// resolve finds the batch directory or the archive that path designates.
func resolve(p string) (source string, isArchive bool, err error) {
	info, err := os.Stat(p)
	if err != nil {
		return "", false, fmt.Errorf("cifar10: %w (want %s, a directory holding it or %s, or the archive itself; "+
			"download it from https://www.cs.toronto.edu/~kriz/%s)", err, BatchesDir, ArchiveName, ArchiveName)
	}
	if !info.IsDir() {
		return p, true, nil
	}
	if info, err := os.Stat(filepath.Join(p, BatchesDir)); err == nil && info.IsDir() {
		return filepath.Join(p, BatchesDir), false, nil
	}
	if info, err := os.Stat(filepath.Join(p, ArchiveName)); err == nil && !info.IsDir() {
		return filepath.Join(p, ArchiveName), true, nil
	}
	return p, false, nil
}

// describe names batch file name of source in errors.
func describe(source string, isArchive bool, name string) string {
	if isArchive {
		return fmt.Sprintf("%s in archive %s", name, source)
	}
	return filepath.Join(source, name)
}

// readDir reads the named batch files of dir.
func readDir(dir string, names []string) ([][]byte, error) {
	batches := make([][]byte, len(names))
	for i, name := range names {
		p := filepath.Join(dir, name)
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("cifar10: %s does not exist (want the %d files %s in %s)",
				p, len(names), strings.Join(names, ", "), dir)
		}
		if err != nil {
			return nil, fmt.Errorf("cifar10: %w", err)
		}
		if info.Size() > MaxBatchBytes {
			return nil, fmt.Errorf("cifar10: %s: %d bytes, more than the %d-byte limit", p, info.Size(), MaxBatchBytes)
		}
		if batches[i], err = os.ReadFile(p); err != nil {
			return nil, fmt.Errorf("cifar10: %w", err)
		}
	}
	return batches, nil
}

// readArchive streams the tar archive at p, gzipped or not, and returns the
// contents of the entries whose base names are names, in that order.
func readArchive(p string, names []string) ([][]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("cifar10: %w", err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if magic, _ := r.(*bufio.Reader).Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("cifar10: %s: reading gzip header: %w", p, err)
		}
		defer zr.Close()
		r = zr
	}

	index := make(map[string]int, len(names))
	for i, name := range names {
		index[name] = i
	}
	batches := make([][]byte, len(names))
	tr := tar.NewReader(r)
	for found := 0; found < len(names); {
		hdr, err := tr.Next()
		if err == io.EOF {
			var missing []string
			for i, b := range batches {
				if b == nil {
					missing = append(missing, names[i])
				}
			}
			return nil, fmt.Errorf("cifar10: archive %s has no %s", p, strings.Join(missing, ", "))
		}
		if err != nil {
			return nil, fmt.Errorf("cifar10: archive %s: %w", p, err)
		}
		i, wanted := index[path.Base(hdr.Name)]
		if !wanted || hdr.Typeflag != tar.TypeReg || batches[i] != nil {
			continue
		}
		if hdr.Size > MaxBatchBytes {
			return nil, fmt.Errorf("cifar10: %s in archive %s: %d bytes, more than the %d-byte limit",
				hdr.Name, p, hdr.Size, MaxBatchBytes)
		}
		// ReadAll grows its buffer with the data actually present, and the
		// tar reader reports an entry cut short as an error.
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("cifar10: %s in archive %s: %w", hdr.Name, p, err)
		}
		batches[i] = data
		found++
	}
	return batches, nil
}
