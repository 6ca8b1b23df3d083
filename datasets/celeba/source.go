package celeba

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/edlebm/edlebm/datasets/imagefile"
)

// source gives access to the JPEGs of a CelebA root folder, held either in
// the folder ImageDir or in the archive ImageZip. Its open method is safe
// for concurrent use.
type source struct {
	dir     string               // the image folder, or "" when reading the zip
	zipPath string               // the archive, when reading it
	zip     *zip.ReadCloser      // the open archive
	entries map[string]*zip.File // the archive's .jpg files by base name
}

// openSource opens the images of root: the folder ImageDir if it exists,
// otherwise the archive ImageZip.
func openSource(root string) (*source, error) {
	dir := filepath.Join(root, ImageDir)
	info, err := os.Stat(dir)
	if err == nil && info.IsDir() {
		return &source{dir: dir}, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("celeba: %w", err)
	}

	zipPath := filepath.Join(root, ImageZip)
	zr, err := zip.OpenReader(zipPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("celeba: neither the folder %s nor the archive %s exists: "+
			"download img_align_celeba.zip from the CelebA site into %s (extracting it is optional)",
			dir, zipPath, root)
	}
	if err != nil {
		return nil, fmt.Errorf("celeba: opening %s: %w", zipPath, err)
	}
	s := &source{zipPath: zipPath, zip: zr, entries: make(map[string]*zip.File)}
	for _, f := range zr.File {
		name := path.Base(f.Name)
		if f.FileInfo().IsDir() || !strings.HasSuffix(strings.ToLower(name), ".jpg") {
			continue
		}
		if prev, ok := s.entries[name]; ok {
			zr.Close()
			return nil, fmt.Errorf("celeba: %s holds two images named %s: %s and %s",
				zipPath, name, prev.Name, f.Name)
		}
		s.entries[name] = f
	}
	return s, nil
}

// where names image name for error messages: its path, or the archive and
// the entry.
func (s *source) where(name string) string {
	if s.zip == nil {
		return filepath.Join(s.dir, name)
	}
	if f, ok := s.entries[name]; ok {
		return s.zipPath + ":" + f.Name
	}
	return s.zipPath + ":" + name
}

// check returns an error naming the first of names the source lacks.
func (s *source) check(names []string) error {
	for _, name := range names {
		if s.zip != nil {
			if _, ok := s.entries[name]; !ok {
				return fmt.Errorf("celeba: %s lists image %s, which %s does not hold",
					PartitionFile, name, s.zipPath)
			}
			continue
		}
		info, err := os.Stat(filepath.Join(s.dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("celeba: %s lists image %s, which %s does not hold", PartitionFile, name, s.dir)
		}
		if err != nil {
			return fmt.Errorf("celeba: %w", err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("celeba: %s is not a regular file", s.where(name))
		}
	}
	return nil
}

// open returns the contents of image name.
func (s *source) open(name string) (io.ReadCloser, error) {
	if s.zip == nil {
		return os.Open(filepath.Join(s.dir, name))
	}
	f, ok := s.entries[name]
	if !ok {
		return nil, fmt.Errorf("%s holds no image %s", s.zipPath, name)
	}
	return f.Open()
}

// decode decodes image name with d into dst, and names the image in any
// error.
func (s *source) decode(d *imagefile.Decoder, name string, dst []float32) error {
	r, err := s.open(name)
	if err != nil {
		return fmt.Errorf("celeba: %w", err)
	}
	err = d.Decode(r, dst)
	// Reading a zip entry to its end verifies its checksum: a corrupt entry
	// whose JPEG still decodes is reported here.
	if _, cerr := io.Copy(io.Discard, r); err == nil && cerr != nil {
		err = cerr
	}
	r.Close()
	if err != nil {
		return fmt.Errorf("celeba: %s: %w", s.where(name), err)
	}
	return nil
}

// Close releases the archive, if one is open.
func (s *source) Close() error {
	if s.zip == nil {
		return nil
	}
	return s.zip.Close()
}
