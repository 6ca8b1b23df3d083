package download

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExpectedDigest: whatever a digest record beside a download holds,
// the digest to verify against is 64 lower-case hexadecimal digits or an
// error naming the record, never a panic.
func FuzzExpectedDigest(f *testing.F) {
	f.Add([]byte(strings.Repeat("ab", 32) + "  file.bin\n"))
	f.Add([]byte("xyz  file.bin\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, record []byte) {
		dest := filepath.Join(t.TempDir(), "file.bin")
		os.WriteFile(dest+DigestSuffix, record, 0o644)
		digest, err := expectedDigest(dest, "", true)
		if err != nil {
			if !strings.Contains(err.Error(), dest+DigestSuffix) {
				t.Errorf("error %q does not name the record", err)
			}
			return
		}
		if digest != "" && (len(digest) != 64 || strings.ToLower(digest) != digest) {
			t.Errorf("digest %q", digest)
		}
	})
}
