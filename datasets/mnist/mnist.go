// Package mnist loads MNIST and Fashion-MNIST from their IDX files
// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte), plain or gzipped.
package mnist

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/datasets"
)

// DefaultFashionDir is where Debian's dataset-fashion-mnist package installs
// the four gzipped Fashion-MNIST IDX files.
const DefaultFashionDir = "/usr/share/datasets/fashion-mnist"

// idxFiles are the four files of an MNIST-format data set, without the
// optional ".gz".
var idxFiles = []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}

// CheckFashionInstalled reports, naming the first missing file, whether
// Debian's dataset-fashion-mnist package is installed in DefaultFashionDir.
func CheckFashionInstalled() error {
	for _, name := range idxFiles {
		path := filepath.Join(DefaultFashionDir, name+".gz")
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("mnist: Fashion-MNIST is not installed: %w", err)
		}
	}
	return nil
}

// MaxIDXBytes bounds the data size an IDX header may declare, so that a
// corrupt header cannot make ReadIDX attempt a huge allocation. The largest
// MNIST file holds 47 MB.
const MaxIDXBytes = 1 << 30

// idxUnsignedByte is the IDX type code of unsigned-byte data, the only type
// the MNIST files use.
const idxUnsignedByte = 0x08

// ReadIDX parses one IDX stream of unsigned bytes, gzipped or not (told apart
// by the gzip magic bytes), and returns its dimensions and its data in
// row-major order. It errors on a bad magic number, a type other than
// unsigned byte, a truncated stream, data beyond what the header declares, or
// a header declaring more than MaxIDXBytes.
func ReadIDX(r io.Reader) (dims []int, data []byte, err error) {
	return ReadIDXHead(r, 0)
}

// ReadIDXHead is ReadIDX reading only the first n items (slices along the
// first dimension; all of them when n ≤ 0 or n exceeds the declared count),
// and stopping there: a gzipped file is decompressed no further, which is
// what makes a run on the first few images start at once. The dimensions
// returned describe the data returned. Data beyond the declared size is an
// error only when every item is read.
func ReadIDXHead(r io.Reader, n int) (dims []int, data []byte, err error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("reading gzip header: %w", err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}

	var header [4]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, nil, fmt.Errorf("truncated IDX header: %w", err)
	}
	if header[0] != 0 || header[1] != 0 || header[3] == 0 {
		return nil, nil, fmt.Errorf("magic number % x, want 00 00 <type> <rank ≥ 1> (not an IDX file)", header)
	}
	if header[2] != idxUnsignedByte {
		return nil, nil, fmt.Errorf("IDX data type 0x%02x, want 0x%02x (unsigned byte)", header[2], idxUnsignedByte)
	}
	raw := make([]uint32, header[3])
	if err := binary.Read(r, binary.BigEndian, raw); err != nil {
		return nil, nil, fmt.Errorf("truncated IDX header (%d dimensions declared): %w", len(raw), err)
	}
	size := int64(1)
	dims = make([]int, len(raw))
	for i, d := range raw {
		dims[i] = int(d)
		// Each factor is < 2³², so the product cannot overflow before it passes the limit.
		if size *= int64(d); size > MaxIDXBytes {
			return nil, nil, fmt.Errorf("IDX header declares dimensions %v, more than the %d-byte limit", raw, MaxIDXBytes)
		}
	}
	whole := n <= 0 || n >= dims[0]
	if !whole {
		size = size / int64(dims[0]) * int64(n)
		dims[0] = n
	}
	// Reading through a limit grows the buffer with the data actually present,
	// so a truncated file with a large header allocates only what it holds;
	// reading a whole file, one byte more tells one longer than declared.
	limit := size
	if whole {
		limit++
	}
	data, err = io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, nil, fmt.Errorf("reading IDX data: %w", err)
	}
	if int64(len(data)) < size {
		return nil, nil, fmt.Errorf("truncated IDX data: %d bytes, want %d for dimensions %v", len(data), size, dims)
	}
	if int64(len(data)) > size {
		return nil, nil, fmt.Errorf("IDX data longer than the %d bytes its dimensions %v declare", size, dims)
	}
	return dims, data, nil
}

// Load reads split "train" or "test" of an MNIST-format data set from dir:
// files <prefix>-images-idx3-ubyte and <prefix>-labels-idx1-ubyte, each
// optionally ending in .gz, with prefix "train" or "t10k". Pixels are scaled
// to [-1, 1] as x/255·2 − 1; the set is named "<base of dir>/<split>".
func Load(dir, split string) (*datasets.Images, error) {
	return LoadHead(dir, split, 0)
}

// LoadHead is Load reading only the split's first n images and labels (all
// of them when n ≤ 0): Load(dir, split) followed by Head(n), without
// decompressing the rest of the files.
func LoadHead(dir, split string, n int) (*datasets.Images, error) {
	prefix, ok := map[string]string{"train": "train", "test": "t10k"}[split]
	if !ok {
		return nil, fmt.Errorf("mnist: split %q, want \"train\" or \"test\"", split)
	}
	imagesPath, imageDims, pixels, err := readIDXFile(dir, prefix+"-images-idx3-ubyte", n)
	if err != nil {
		return nil, err
	}
	if len(imageDims) != 3 {
		return nil, fmt.Errorf("mnist: %s has dimensions %v, want 3 (images, rows, columns)", imagesPath, imageDims)
	}
	labelsPath, labelDims, labels, err := readIDXFile(dir, prefix+"-labels-idx1-ubyte", n)
	if err != nil {
		return nil, err
	}
	if len(labelDims) != 1 || labelDims[0] != imageDims[0] {
		return nil, fmt.Errorf("mnist: %s has dimensions %v, want [%d] to match the %d images of %s",
			labelsPath, labelDims, imageDims[0], imageDims[0], imagesPath)
	}

	im := &datasets.Images{
		Name: filepath.Base(dir) + "/" + split,
		N:    imageDims[0], Height: imageDims[1], Width: imageDims[2], Channels: 1,
		Pixels: make([]float32, len(pixels)),
		Labels: make([]int, len(labels)),
	}
	for i, v := range pixels {
		im.Pixels[i] = float32(float64(v)/255*2 - 1)
	}
	for i, l := range labels {
		im.Labels[i] = int(l)
	}
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("mnist: %s: %w", imagesPath, err)
	}
	return im, nil
}

// readIDXFile reads the first n items (n ≤ 0: all) of dir/name, or of
// dir/name.gz when the former is missing, and returns the path it read with
// the parsed contents.
func readIDXFile(dir, name string, n int) (path string, dims []int, data []byte, err error) {
	path = filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		path += ".gz"
		f, err = os.Open(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil, fmt.Errorf("mnist: neither %s nor %s exists: for Fashion-MNIST install Debian's "+
			"dataset-fashion-mnist package (apt-get install dataset-fashion-mnist puts it in %s); for MNIST "+
			"download the four IDX files into a directory and pass that directory as the data directory",
			filepath.Join(dir, name), path, DefaultFashionDir)
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("mnist: %w", err)
	}
	defer f.Close()
	dims, data, err = ReadIDXHead(f, n)
	if err != nil {
		return "", nil, nil, fmt.Errorf("mnist: %s: %w", path, err)
	}
	return path, dims, data, nil
}

// WriteIDX writes data as an unsigned-byte IDX file (uncompressed) with the
// given dimensions, atomically — for exporting subsets or making fixtures.
func WriteIDX(path string, dims []int, data []byte) error {
	size := 1
	header := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		if d < 0 || d > math.MaxUint32 {
			return fmt.Errorf("mnist: writing %s: dimension %d out of range", path, d)
		}
		header = binary.BigEndian.AppendUint32(header, uint32(d))
		size *= d
	}
	if len(dims) == 0 || len(dims) > 255 || size != len(data) {
		return fmt.Errorf("mnist: writing %s: %d values do not fill dimensions %v", path, len(data), dims)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		if _, err := w.Write(header); err != nil {
			return err
		}
		_, err := w.Write(data)
		return err
	})
}
