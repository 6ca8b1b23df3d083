// Package download fetches the official files of the data sets for users
// with internet access, resuming interrupted transfers and verifying SHA-256
// digests, so that a half-downloaded or corrupt file is never taken for a
// good one.
//
// Fetch downloads one URL; Registry lists the official files of SVHN,
// CIFAR-10, MNIST and Fashion-MNIST with their digests, and FetchDataset
// downloads a whole set into a directory that the loaders (datasets/svhn,
// datasets/cifar10, datasets/mnist) read.
package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Option configures Fetch.
type Option func(*config)

type config struct {
	client        *http.Client
	progress      io.Writer
	progressEvery time.Duration
	retries       int
	retryDelay    time.Duration
	tofu          bool
}

// WithClient makes Fetch use client instead of http.DefaultClient.
func WithClient(client *http.Client) Option {
	return func(c *config) { c.client = client }
}

// WithProgress makes Fetch write a progress line to w every few seconds
// (bytes so far, rate and estimated time left) and one when a transfer
// ends. Without it Fetch writes nothing.
func WithProgress(w io.Writer) Option {
	return func(c *config) { c.progress = w }
}

// WithRetries sets how many times Fetch resumes a transfer that was cut
// before the whole file arrived (default 3; 0 makes a cut transfer an error
// at once, leaving the partial file for the next call to resume).
func WithRetries(n int) Option {
	return func(c *config) { c.retries = max(n, 0) }
}

// TrustOnFirstUse lets Fetch run without a digest: it records the digest of
// the file it first sees, downloaded or already at dest, in dest + ".sha256"
// (in sha256sum's format), and later calls without a digest verify dest
// against that record. This protects against later corruption or a changed
// file, not against a bad first download: pass the digest when one is
// published.
func TrustOnFirstUse() Option {
	return func(c *config) { c.tofu = true }
}

// DigestSuffix ends the name of the file where TrustOnFirstUse records a
// digest.
const DigestSuffix = ".sha256"

// PartialSuffix ends the name of the file a download is written to until
// its digest has been verified.
const PartialSuffix = ".partial"

// Fetch makes dest a verified copy of the file at url.
//
// sha256Hex is the expected SHA-256 digest in hexadecimal; it may be empty
// only with the TrustOnFirstUse option. When dest already exists with that
// digest, Fetch makes no request. Otherwise it downloads into dest +
// PartialSuffix, resuming an existing partial file with an HTTP Range request
// (starting over when the server ignores the range), retries a transfer that
// is cut (see WithRetries), verifies the digest and only then renames the
// file to dest, replacing any file there. On a digest mismatch it deletes the
// download (and starts over once if it had resumed a partial file left by an
// earlier call) and returns an error naming dest and both digests; on other
// errors it keeps the partial file for the next call to resume. Fetch is not
// safe for concurrent calls with the same dest.
func Fetch(ctx context.Context, url, dest, sha256Hex string, opts ...Option) error {
	cfg := config{client: http.DefaultClient, progressEvery: 5 * time.Second, retries: 3, retryDelay: time.Second}
	for _, opt := range opts {
		opt(&cfg)
	}
	want, err := expectedDigest(dest, sha256Hex, cfg.tofu)
	if err != nil {
		return err
	}
	var got string
	if _, err := os.Stat(dest); err == nil {
		if got, err = fileDigest(dest); err != nil {
			return err
		}
		if want == "" {
			return recordDigest(dest, got)
		}
		if got == want {
			return nil
		}
		// A wrong file is downloaded again, and replaced only once verified.
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("download: %w", err)
	}

	partial := dest + PartialSuffix
	for {
		_, err := os.Stat(partial)
		resumed := err == nil
		if err := cfg.download(ctx, url, partial, filepath.Base(dest)); err != nil {
			return err
		}
		got, err = fileDigest(partial)
		if err != nil {
			return err
		}
		if want == "" || got == want {
			break
		}
		if err := os.Remove(partial); err != nil {
			return fmt.Errorf("download: %w", err)
		}
		if !resumed {
			return fmt.Errorf("download: %s from %s: SHA-256 mismatch: expected %s, got %s (the download was deleted)",
				dest, url, want, got)
		}
		// The partial file left by an earlier call may belong to another
		// version of the file: start over once.
	}
	if err := os.Rename(partial, dest); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if want == "" {
		return recordDigest(dest, got)
	}
	return nil
}

// download brings partial up to the whole file, resuming it when it exists
// and retrying transfers that are cut (up to c.retries times).
func (c *config) download(ctx context.Context, url, partial, name string) error {
	for attempt := 0; ; attempt++ {
		err := c.transfer(ctx, url, partial, name)
		if err == nil {
			return nil
		}
		var cut *cutError
		if !errors.As(err, &cut) || ctx.Err() != nil {
			return fmt.Errorf("download: GET %s: %w", url, err)
		}
		if attempt >= c.retries {
			return fmt.Errorf("download: GET %s: %w (after %d attempts; the partial download in %s is resumed by the next call)",
				url, err, attempt+1, partial)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("download: GET %s: %w", url, ctx.Err())
		case <-time.After(c.retryDelay):
		}
	}
}

// cutError marks a transfer that stopped before the whole file arrived and
// that a new request may complete.
type cutError struct{ err error }

func (e *cutError) Error() string { return e.err.Error() }
func (e *cutError) Unwrap() error { return e.err }

// transfer makes one request for the rest of partial: the bytes from its
// current size on, or the whole file when the server ignores the range.
func (c *config) transfer(ctx context.Context, url, partial, name string) error {
	var offset int64
	if info, err := os.Stat(partial); err == nil {
		offset = info.Size()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return &cutError{err}
	}
	defer resp.Body.Close()

	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	total := int64(-1) // size of the whole file, when known
	switch {
	case offset > 0 && resp.StatusCode == http.StatusPartialContent:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			return restart(partial, fmt.Errorf("server answered Range bytes=%d- with Content-Range %q",
				offset, resp.Header.Get("Content-Range")))
		}
		total = size
	case resp.StatusCode == http.StatusOK: // the server ignored the range, if any
		flags |= os.O_TRUNC
		offset = 0
		total = resp.ContentLength
	case offset > 0 && resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		// The server says so when the partial file is already complete.
		if _, size, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && size == offset {
			return nil
		}
		return restart(partial, fmt.Errorf("server refused Range bytes=%d-", offset))
	default:
		return errors.New(resp.Status)
	}

	f, err := os.OpenFile(partial, flags, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var w io.Writer = f
	if c.progress != nil {
		p := &progress{w: c.progress, name: name, offset: offset, total: total, every: c.progressEvery, start: time.Now()}
		p.last = p.start
		defer p.done()
		w = io.MultiWriter(f, p)
	}
	n, err := io.Copy(w, resp.Body)
	if err == nil && total >= 0 && offset+n != total {
		err = fmt.Errorf("transfer ended at byte %d of %d", offset+n, total)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &cutError{fmt.Errorf("transfer cut after %d bytes: %w", offset+n, err)}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// restart deletes partial, so that the next attempt downloads the whole
// file, and returns err as a cut transfer.
func restart(partial string, err error) error {
	if rmErr := os.Remove(partial); rmErr != nil {
		return rmErr
	}
	return &cutError{fmt.Errorf("%w; starting over", err)}
}

// parseContentRange parses "bytes first-last/size" or "bytes */size";
// start is -1 for the latter and size -1 when given as "*".
func parseContentRange(s string) (start, size int64, ok bool) {
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, 0, false
	}
	rng, total, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, false
	}
	size = -1
	if total != "*" {
		var err error
		if size, err = strconv.ParseInt(total, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	if rng == "*" {
		return -1, size, true
	}
	first, _, ok := strings.Cut(rng, "-")
	start, err := strconv.ParseInt(first, 10, 64)
	return start, size, ok && err == nil
}

// expectedDigest returns the normalised digest to verify dest against: the
// given one, else the one TrustOnFirstUse recorded, else "" on first use.
func expectedDigest(dest, given string, tofu bool) (string, error) {
	if given != "" {
		return parseDigest(given, "given for "+dest)
	}
	if !tofu {
		return "", fmt.Errorf("download: no SHA-256 digest given for %s: pass the published digest, or the "+
			"TrustOnFirstUse option to accept the file as first seen and record its digest in %s", dest, dest+DigestSuffix)
	}
	record, err := os.ReadFile(dest + DigestSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	digest, _, _ := strings.Cut(strings.TrimSpace(string(record)), " ")
	return parseDigest(digest, "recorded in "+dest+DigestSuffix)
}

// parseDigest checks that s is a hexadecimal SHA-256 digest and returns it
// in lower case.
func parseDigest(s, where string) (string, error) {
	if b, err := hex.DecodeString(s); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("download: %q %s is not a SHA-256 digest (want 64 hexadecimal digits)", s, where)
	}
	return strings.ToLower(s), nil
}

// recordDigest writes dest's digest next to it, as sha256sum would.
func recordDigest(dest, digest string) error {
	line := digest + "  " + filepath.Base(dest) + "\n"
	if err := os.WriteFile(dest+DigestSuffix, []byte(line), 0o644); err != nil {
		return fmt.Errorf("download: recording the digest of %s: %w", dest, err)
	}
	return nil
}

// fileDigest returns the SHA-256 digest of the file at path in hexadecimal.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("download: reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// progress writes progress lines for one transfer as data passes through.
type progress struct {
	w           io.Writer
	name        string
	offset      int64 // bytes present before this transfer
	total       int64 // size of the whole file, or -1
	n           int64 // bytes of this transfer so far
	every       time.Duration
	start, last time.Time
}

func (p *progress) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.report(now)
	}
	return len(b), nil
}

// report writes "name: 12.0 MiB of 173.6 MiB (6.9%), 3.2 MiB/s, ETA 50s".
func (p *progress) report(now time.Time) {
	have := p.offset + p.n
	rate := float64(p.n) / max(now.Sub(p.start).Seconds(), 1e-3)
	line := p.name + ": " + bytesString(float64(have))
	if p.total > 0 {
		line += fmt.Sprintf(" of %s (%.1f%%)", bytesString(float64(p.total)), 100*float64(have)/float64(p.total))
	}
	line += ", " + bytesString(rate) + "/s"
	if p.total > 0 && rate > 0 {
		eta := time.Duration(float64(p.total-have) / rate * float64(time.Second))
		line += ", ETA " + eta.Round(time.Second).String()
	}
	fmt.Fprintln(p.w, line)
}

// done writes the closing line of the transfer.
func (p *progress) done() {
	elapsed := time.Since(p.start)
	fmt.Fprintf(p.w, "%s: received %s in %s, %s in all\n", p.name, bytesString(float64(p.n)),
		elapsed.Round(time.Millisecond), bytesString(float64(p.offset+p.n)))
}

// bytesString formats a byte count with a binary unit.
func bytesString(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
