package celeba

import (
	"archive/zip"
	"bytes"
	"errors"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"
)

// zipEntry is one file of a test archive; badCRC records a wrong checksum
// for it, as a corrupt archive would.
type zipEntry struct {
	name   string
	data   []byte
	badCRC bool
}

// writeZip writes the entries, stored uncompressed, as root's ImageZip.
func writeZip(t *testing.T, root string, entries []zipEntry) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		crc := crc32.ChecksumIEEE(e.data)
		if e.badCRC {
			crc ^= 1
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: zip.Store, CRC32: crc,
			CompressedSize64: uint64(len(e.data)), UncompressedSize64: uint64(len(e.data))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ImageZip), buf.Bytes())
}

// TestOpenSourceZip checks which archive entries openSource takes as
// images: only .jpg files, so that other files sharing a base name (as
// macOS archivers leave) are no duplicate images, and that the archive is
// read when ImageDir exists but is not a folder.
func TestOpenSourceZip(t *testing.T) {
	image := encodeJPEG(t, AlignedWidth, AlignedHeight, solid(1, 2, 3))
	tests := []struct {
		name    string
		entries []zipEntry
		dirFile bool // ImageDir is a regular file
		images  []string
	}{
		{"other files sharing a name", []zipEntry{
			{name: ImageDir + "/000001.jpg", data: image},
			{name: ImageDir + "/.DS_Store", data: []byte("a")},
			{name: "__MACOSX/" + ImageDir + "/.DS_Store", data: []byte("b")},
		}, false, []string{"000001.jpg"}},
		{"image folder name taken by a file", []zipEntry{
			{name: ImageDir + "/000001.jpg", data: image},
			{name: ImageDir + "/000002.JPG", data: image},
		}, true, []string{"000001.jpg", "000002.JPG"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeZip(t, root, tc.entries)
			if tc.dirFile {
				writeFile(t, filepath.Join(root, ImageDir), []byte("not a folder"))
			}
			s, err := openSource(root)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.zip == nil || len(s.entries) != len(tc.images) {
				t.Fatalf("source with zip %v and %d entries, want the archive with %d images", s.zip != nil, len(s.entries), len(tc.images))
			}
			if err := s.check(tc.images); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestDecodeZipChecksum checks that an archive entry whose stored checksum
// does not match its data is refused while reading it, naming the entry,
// even though its JPEG data decodes.
func TestDecodeZipChecksum(t *testing.T) {
	image := encodeJPEG(t, AlignedWidth, AlignedHeight, solid(1, 2, 3))
	root := t.TempDir()
	writeZip(t, root, []zipEntry{
		{name: ImageDir + "/000001.jpg", data: image},
		{name: ImageDir + "/000002.jpg", data: image, badCRC: true},
	})
	s, err := openSource(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := newDecoder(64)
	dst := make([]float32, 64*64*3)
	if err := s.decode(d, "000001.jpg", dst); err != nil {
		t.Errorf("intact entry: %v", err)
	}
	err = s.decode(d, "000002.jpg", dst)
	if !errors.Is(err, zip.ErrChecksum) || !strings.Contains(err.Error(), ImageZip+":"+ImageDir+"/000002.jpg") ||
		!strings.Contains(err.Error(), "reading the file") {
		t.Errorf("corrupt entry: error %v, want a checksum error while reading %s:%s/000002.jpg", err, ImageZip, ImageDir)
	}
}
