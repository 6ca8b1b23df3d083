package download

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edlebm/edlebm/datasets/cifar10"
	"github.com/edlebm/edlebm/datasets/svhn"
)

// content is the file the test servers serve.
var content = func() []byte {
	b := make([]byte, 200_000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}()

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// server is a test HTTP server that records the Range header of every
// request ("" when absent) and answers with handler, which gets the index of
// the request.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	ranges []string
}

func newServer(t *testing.T, handler func(w http.ResponseWriter, r *http.Request, i int)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		i := len(s.ranges)
		s.ranges = append(s.ranges, r.Header.Get("Range"))
		s.mu.Unlock()
		handler(w, r, i)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ranges)
}

// serve answers with content, honouring Range requests.
func serve(w http.ResponseWriter, r *http.Request) {
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(content))
}

// serveWhole answers with all of content, ignoring any Range header, as a
// server without range support does.
func serveWhole(w http.ResponseWriter) {
	w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	w.Write(content)
}

// cut announces all of content but sends only its first n bytes, then drops
// the connection.
func cut(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	w.Write(content[:n])
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

const cutAt = 60_000

// testOptions makes retries immediate and reports progress on every write.
func testOptions(s *server, more ...Option) []Option {
	fast := func(c *config) { c.retryDelay, c.progressEvery = 0, 0 }
	return append([]Option{WithClient(s.Client()), fast}, more...)
}

// checkResult checks that dest holds content and no partial file is left.
func checkResult(t *testing.T, dest string) {
	t.Helper()
	got, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, content) {
		t.Errorf("%s: %d bytes differing from the %d served", dest, len(got), len(content))
	}
	if _, err := os.Stat(dest + PartialSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("partial file left behind (stat error %v)", err)
	}
}

func TestFetchPlain(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, i int) { serve(w, r) })
	dest := filepath.Join(t.TempDir(), "cache", "file.bin") // the directory is created
	var progress bytes.Buffer
	if err := Fetch(context.Background(), s.URL, dest, digest(content), testOptions(s, WithProgress(&progress))...); err != nil {
		t.Fatal(err)
	}
	checkResult(t, dest)
	if got := s.requests(); !slices.Equal(got, []string{""}) {
		t.Errorf("requests with Range headers %q, want one request without", got)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	line := regexp.MustCompile(`^file\.bin: [0-9.]+ (B|KiB) of 195\.3 KiB \([0-9.]+%\), [0-9.]+ (B|KiB|MiB|GiB)/s, ETA \S+$`)
	for _, l := range lines[:len(lines)-1] {
		if !line.MatchString(l) {
			t.Errorf("progress line %q, want one matching %s", l, line)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "file.bin: received 195.3 KiB in ") || !strings.HasSuffix(last, ", 195.3 KiB in all") {
		t.Errorf("last progress line %q, want file.bin: received 195.3 KiB in …, 195.3 KiB in all", last)
	}
	if len(lines) < 2 {
		t.Errorf("progress %q, want a line per write and a closing line", progress.String())
	}
}

func TestFetchResume(t *testing.T) {
	resumeRange := fmt.Sprintf("bytes=%d-", cutAt)
	tests := []struct {
		name       string
		handler    func(w http.ResponseWriter, r *http.Request, i int)
		opts       []Option
		calls      int // Fetch calls until success
		wantRanges []string
	}{
		{"resumed within one call", func(w http.ResponseWriter, r *http.Request, i int) {
			if i == 0 {
				cut(w, cutAt)
			}
			serve(w, r)
		}, nil, 1, []string{"", resumeRange}},
		{"resumed by the next call", func(w http.ResponseWriter, r *http.Request, i int) {
			if i == 0 {
				cut(w, cutAt)
			}
			serve(w, r)
		}, []Option{WithRetries(0)}, 2, []string{"", resumeRange}},
		{"server without Range support", func(w http.ResponseWriter, r *http.Request, i int) {
			if i == 0 {
				cut(w, cutAt)
			}
			serveWhole(w)
		}, nil, 1, []string{"", resumeRange}},
		{"server answering another range", func(w http.ResponseWriter, r *http.Request, i int) {
			switch i {
			case 0:
				cut(w, cutAt)
			case 1:
				w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", len(content)-1, len(content)))
				w.WriteHeader(http.StatusPartialContent)
				w.Write(content)
			default:
				serve(w, r)
			}
		}, nil, 1, []string{"", resumeRange, ""}},
		{"range answer ending early", func(w http.ResponseWriter, r *http.Request, i int) {
			switch i {
			case 0:
				cut(w, cutAt)
			case 1:
				// Without a Content-Length the body is chunked and ends cleanly.
				w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", cutAt, len(content)-1, len(content)))
				w.WriteHeader(http.StatusPartialContent)
				w.Write(content[cutAt : 2*cutAt])
			default:
				serve(w, r)
			}
		}, nil, 1, []string{"", resumeRange, fmt.Sprintf("bytes=%d-", 2*cutAt)}},
		{"cut twice", func(w http.ResponseWriter, r *http.Request, i int) {
			if i < 2 {
				cut(w, cutAt) // the second answer restarts the file and is cut too
			}
			serve(w, r)
		}, nil, 1, []string{"", resumeRange, resumeRange}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.handler)
			dest := filepath.Join(t.TempDir(), "file.bin")
			for call := 1; call < tc.calls; call++ {
				err := Fetch(context.Background(), s.URL, dest, digest(content), testOptions(s, tc.opts...)...)
				if err == nil || !strings.Contains(err.Error(), "resumed by the next call") || !strings.Contains(err.Error(), s.URL) {
					t.Fatalf("call %d: error %v, want one naming the URL and saying the next call resumes", call, err)
				}
				if info, err := os.Stat(dest + PartialSuffix); err != nil || info.Size() != cutAt {
					t.Fatalf("call %d: partial file %v, %v; want %d bytes", call, info, err, cutAt)
				}
				if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("call %d: %s exists after a cut transfer", call, dest)
				}
			}
			if err := Fetch(context.Background(), s.URL, dest, digest(content), testOptions(s, tc.opts...)...); err != nil {
				t.Fatal(err)
			}
			checkResult(t, dest)
			if got := s.requests(); !slices.Equal(got, tc.wantRanges) {
				t.Errorf("Range headers %q, want %q", got, tc.wantRanges)
			}
		})
	}
}

// TestFetchExistingPartial covers partial files left by earlier calls: one
// stopped after the transfer, one longer than the file, one of other data.
func TestFetchExistingPartial(t *testing.T) {
	tests := []struct {
		name       string
		partial    []byte
		handler    func(w http.ResponseWriter, r *http.Request, i int) // nil: serve
		wantRanges []string
	}{
		{"complete", content, nil, []string{fmt.Sprintf("bytes=%d-", len(content))}},
		// A refusal whose Content-Range is malformed does not confirm that the
		// partial file is complete, even when it carries the right size.
		{"complete, refused with a malformed Content-Range", content, func(w http.ResponseWriter, r *http.Request, i int) {
			if i == 0 {
				w.Header().Set("Content-Range", fmt.Sprintf("bytes x-y/%d", len(content)))
				w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
				return
			}
			serve(w, r)
		}, []string{fmt.Sprintf("bytes=%d-", len(content)), ""}},
		{"too long", append(slices.Clone(content), 1, 2, 3), nil, []string{fmt.Sprintf("bytes=%d-", len(content)+3), ""}},
		// Resuming gives a file with the wrong digest, so Fetch starts over.
		{"of another file", bytes.Repeat([]byte("x"), 1000), nil, []string{"bytes=1000-", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			handler := tc.handler
			if handler == nil {
				handler = func(w http.ResponseWriter, r *http.Request, i int) { serve(w, r) }
			}
			s := newServer(t, handler)
			dest := filepath.Join(t.TempDir(), "file.bin")
			if err := os.WriteFile(dest+PartialSuffix, tc.partial, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := Fetch(context.Background(), s.URL, dest, digest(content), testOptions(s)...); err != nil {
				t.Fatal(err)
			}
			checkResult(t, dest)
			if got := s.requests(); !slices.Equal(got, tc.wantRanges) {
				t.Errorf("Range headers %q, want %q", got, tc.wantRanges)
			}
		})
	}
}

func TestFetchErrors(t *testing.T) {
	other := digest([]byte("another file"))
	tests := []struct {
		name      string
		handler   func(w http.ResponseWriter, r *http.Request, i int)
		digest    string
		opts      []Option
		want      []string // in the error; "URL" and "DEST" stand for the URL and the destination
		wantCalls int
		partial   int // size of the partial file left, or -1 for none
	}{
		{"checksum mismatch", func(w http.ResponseWriter, r *http.Request, i int) { serve(w, r) }, other, nil,
			[]string{"DEST", "SHA-256 mismatch", "expected " + other, "got " + digest(content)}, 1, -1},
		{"not found", func(w http.ResponseWriter, r *http.Request, i int) { http.NotFound(w, r) }, digest(content), nil,
			[]string{"GET URL", "404 Not Found"}, 1, -1},
		{"retries exhausted", func(w http.ResponseWriter, r *http.Request, i int) { cut(w, cutAt) }, digest(content),
			[]Option{WithRetries(2)}, []string{"GET URL", "transfer cut after 60000 bytes", "after 3 attempts", "DEST.partial"}, 3, cutAt},
		// The resumed transfer ends cleanly but short of the announced size:
		// 60000 bytes present, 60000 more received, of 200000.
		{"range answer ending early", func(w http.ResponseWriter, r *http.Request, i int) {
			if i == 0 {
				cut(w, cutAt)
			}
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", cutAt, len(content)-1, len(content)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(content[cutAt : 2*cutAt])
		}, digest(content), []Option{WithRetries(1)},
			[]string{"GET URL", "transfer ended at byte 120000 of 200000", "after 2 attempts"}, 2, 2 * cutAt},
		{"no digest", nil, "", nil, []string{"no SHA-256 digest given for DEST", "TrustOnFirstUse"}, 0, -1},
		{"malformed digest", nil, "abc123", nil, []string{`"abc123" given for DEST is not a SHA-256 digest`}, 0, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.handler)
			url := s.URL + "/data/file.bin"
			dest := filepath.Join(t.TempDir(), "file.bin")
			err := Fetch(context.Background(), url, dest, tc.digest, testOptions(s, tc.opts...)...)
			for _, want := range tc.want {
				want = strings.ReplaceAll(strings.ReplaceAll(want, "URL", url), "DEST", dest)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one containing %q", err, want)
				}
			}
			if n := len(s.requests()); n != tc.wantCalls {
				t.Errorf("%d requests, want %d", n, tc.wantCalls)
			}
			if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s exists after a failed download", dest)
			}
			info, err := os.Stat(dest + PartialSuffix)
			if tc.partial < 0 && !errors.Is(err, fs.ErrNotExist) || tc.partial >= 0 && (err != nil || info.Size() != int64(tc.partial)) {
				t.Errorf("partial file %v (error %v), want size %d (-1: none)", info, err, tc.partial)
			}
		})
	}
}

func TestFetchExistingFile(t *testing.T) {
	tests := []struct {
		name      string
		existing  []byte
		wantCalls int
	}{
		{"good file is kept without a request", content, 0},
		{"wrong file is downloaded again", []byte("truncated"), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, i int) { serve(w, r) })
			dest := filepath.Join(t.TempDir(), "file.bin")
			if err := os.WriteFile(dest, tc.existing, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := Fetch(context.Background(), s.URL, dest, strings.ToUpper(digest(content)), testOptions(s)...); err != nil {
				t.Fatal(err)
			}
			checkResult(t, dest)
			if n := len(s.requests()); n != tc.wantCalls {
				t.Errorf("%d requests, want %d", n, tc.wantCalls)
			}
		})
	}
}

func TestTrustOnFirstUse(t *testing.T) {
	var served atomic.Pointer[[]byte]
	served.Store(&content)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, i int) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(*served.Load()))
	})
	dir := t.TempDir()
	dest := filepath.Join(dir, "file.bin")
	fetch := func() error {
		return Fetch(context.Background(), s.URL, dest, "", testOptions(s, TrustOnFirstUse())...)
	}

	// First use: download and record the digest, as sha256sum would.
	if err := fetch(); err != nil {
		t.Fatal(err)
	}
	checkResult(t, dest)
	record, err := os.ReadFile(dest + DigestSuffix)
	if want := digest(content) + "  file.bin\n"; err != nil || string(record) != want {
		t.Fatalf("digest record %q, %v; want %q", record, err, want)
	}
	// Later uses verify against the record: a good file needs no request…
	if err := fetch(); err != nil || len(s.requests()) != 1 {
		t.Fatalf("second fetch: %v after %d requests, want no error and no new request", err, len(s.requests()))
	}
	// …and a changed file on the server is refused.
	if err := os.Remove(dest); err != nil {
		t.Fatal(err)
	}
	changed := []byte("a different file")
	served.Store(&changed)
	err = fetch()
	if err == nil || !strings.Contains(err.Error(), "expected "+digest(content)) || !strings.Contains(err.Error(), "got "+digest(changed)) {
		t.Errorf("fetch of a changed file: error %v, want a mismatch against the recorded digest", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists after a mismatch", dest)
	}

	// A file already in place on first use is trusted and recorded.
	other := filepath.Join(dir, "other.bin")
	if err := os.WriteFile(other, []byte("placed by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := len(s.requests())
	if err := Fetch(context.Background(), s.URL, other, "", testOptions(s, TrustOnFirstUse())...); err != nil || len(s.requests()) != n {
		t.Errorf("first use of an existing file: %v after %d new requests, want no error and no request", err, len(s.requests())-n)
	}
	if record, _ := os.ReadFile(other + DigestSuffix); string(record) != digest([]byte("placed by hand"))+"  other.bin\n" {
		t.Errorf("digest record %q of the existing file", record)
	}
}

func TestFetchCancelled(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, i int) { serve(w, r) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dest := filepath.Join(t.TempDir(), "file.bin")
	err := Fetch(ctx, s.URL, dest, digest(content), testOptions(s)...)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists after a cancelled download", dest)
	}
}

func TestFetchDataset(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, i int) {
		if r.URL.Path == "/mirror/a.bin" || r.URL.Path == "/b.bin" {
			serve(w, r)
			return
		}
		http.NotFound(w, r)
	})
	Registry["test-set"] = []File{
		{"a.bin", []string{s.URL + "/a.bin", s.URL + "/mirror/a.bin"}, digest(content)}, // the first URL fails
		{"b.bin", []string{s.URL + "/b.bin"}, digest(content)},
	}
	defer delete(Registry, "test-set")
	dir := t.TempDir()
	if err := FetchDataset(context.Background(), "test-set", dir, testOptions(s)...); err != nil {
		t.Fatal(err)
	}
	checkResult(t, filepath.Join(dir, "a.bin"))
	checkResult(t, filepath.Join(dir, "b.bin"))

	Registry["test-set"] = []File{{"c.bin", []string{s.URL + "/c1.bin", s.URL + "/c2.bin"}, digest(content)}}
	err := FetchDataset(context.Background(), "test-set", dir, testOptions(s)...)
	if err == nil || !strings.Contains(err.Error(), s.URL+"/c1.bin: 404") || !strings.Contains(err.Error(), s.URL+"/c2.bin: 404") {
		t.Errorf("error %v, want one naming both failed URLs", err)
	}
	err = FetchDataset(context.Background(), "imagenet", dir)
	if err == nil || !strings.Contains(err.Error(), `"imagenet"`) || !strings.Contains(err.Error(), `"cifar10"`) {
		t.Errorf("unknown data set: error %v, want one naming it and the known ones", err)
	}
}

// TestRegistry checks that every entry is well formed and has the name its
// loader expects.
func TestRegistry(t *testing.T) {
	wantNames := map[string][]string{
		"svhn":       {svhn.Files["train"], svhn.Files["test"]},
		"svhn-extra": {svhn.Files["extra"]},
		"cifar10":    {cifar10.ArchiveName},
		"mnist": {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
			"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"},
	}
	wantNames["fashion-mnist"] = wantNames["mnist"]
	if len(Registry) != len(wantNames) {
		t.Errorf("%d data sets, want %d", len(Registry), len(wantNames))
	}
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for set, files := range Registry {
		var names []string
		for _, f := range files {
			names = append(names, f.Name)
			if !hex64.MatchString(f.SHA256) {
				t.Errorf("%s/%s: digest %q, want 64 lower-case hexadecimal digits", set, f.Name, f.SHA256)
			}
			if len(f.URLs) == 0 {
				t.Errorf("%s/%s: no URL", set, f.Name)
			}
			for _, u := range f.URLs {
				if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") || !strings.HasSuffix(u, "/"+f.Name) {
					t.Errorf("%s/%s: URL %q, want an HTTP URL ending in the file name", set, f.Name, u)
				}
			}
		}
		if !slices.Equal(names, wantNames[set]) {
			t.Errorf("%s: files %q, want %q", set, names, wantNames[set])
		}
	}
}

// TestFetchProgressEvery checks that without a progress interval set, a
// transfer far shorter than the default 5 s writes only its closing line.
func TestFetchProgressEvery(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, i int) { serve(w, r) })
	dest := filepath.Join(t.TempDir(), "file.bin")
	var progress bytes.Buffer
	start := time.Now()
	if err := Fetch(context.Background(), s.URL, dest, digest(content), WithClient(s.Client()), WithProgress(&progress)); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed >= 5*time.Second {
		t.Skipf("the transfer took %v, not shorter than the interval", elapsed)
	}
	if lines := strings.Split(strings.TrimSpace(progress.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "file.bin: received ") {
		t.Errorf("progress %q, want only the closing line", progress.String())
	}
}

// TestParseContentRange checks parseContentRange against header values
// worked out by hand from RFC 9110's syntax.
func TestParseContentRange(t *testing.T) {
	tests := []struct {
		header      string
		start, size int64
		ok          bool
	}{
		{"bytes 0-99/200", 0, 200, true},
		{"bytes 100-199/*", 100, -1, true},
		{"bytes */200", -1, 200, true},
		{"bytes */*", -1, -1, true},
		{"bytes 5/200", 0, 0, false},   // no last byte
		{"bytes x-9/200", 0, 0, false}, // first byte not a number
		{"bytes 0-9/abc", 0, 0, false},
		{"bytes 0-9", 0, 0, false},
		{"bits 0-9/200", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tc := range tests {
		start, size, ok := parseContentRange(tc.header)
		if ok != tc.ok || ok && (start != tc.start || size != tc.size) {
			t.Errorf("parseContentRange(%q) = %d, %d, %v; want %d, %d, %v", tc.header, start, size, ok, tc.start, tc.size, tc.ok)
		}
	}
}

// TestProgressReport checks progress lines against sizes, rates and times
// worked out by hand; report takes the time, so the lines are exact.
func TestProgressReport(t *testing.T) {
	const kib, mib = 1 << 10, 1 << 20
	tests := []struct {
		name             string
		offset, n, total int64
		elapsed          time.Duration
		want             string
	}{
		// 4 MiB of 8 MiB; 3 MiB in 2 s is 1.5 MiB/s; 4 MiB left take 2.67 s.
		{"resumed", 1 * mib, 3 * mib, 8 * mib, 2 * time.Second, "f.bin: 4.0 MiB of 8.0 MiB (50.0%), 1.5 MiB/s, ETA 3s"},
		// 1.5 KiB in 1 s; no total, so no percentage and no ETA.
		{"unknown size", 0, 1536, -1, time.Second, "f.bin: 1.5 KiB, 1.5 KiB/s"},
		{"zero size", 0, 100, 0, time.Second, "f.bin: 100 B, 100 B/s"},
		// Nothing received: the rate is 0 and no ETA can be given.
		{"nothing yet", 1 * kib, 0, 2 * kib, 0, "f.bin: 1.0 KiB of 2.0 KiB (50.0%), 0 B/s"},
		// No time elapsed: the rate divides by 1 ms, 1 KiB/ms = 1000 KiB/s;
		// 3 KiB left take 3 ms.
		{"no time elapsed", 0, 1 * kib, 4 * kib, 0, "f.bin: 1.0 KiB of 4.0 KiB (25.0%), 1000.0 KiB/s, ETA 0s"},
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		var buf bytes.Buffer
		p := &progress{w: &buf, name: "f.bin", offset: tc.offset, total: tc.total, n: tc.n, start: start, last: start}
		p.report(start.Add(tc.elapsed))
		if got := buf.String(); got != tc.want+"\n" {
			t.Errorf("%s: line %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestBytesString checks byte counts against hand-computed binary units,
// including the unit boundaries and counts beyond the largest unit.
func TestBytesString(t *testing.T) {
	tests := []struct {
		n    float64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{1 << 20, "1.0 MiB"},
		{1.5 * (1 << 30), "1.5 GiB"},
		{1 << 40, "1024.0 GiB"},
	}
	for _, tc := range tests {
		if got := bytesString(tc.n); got != tc.want {
			t.Errorf("bytesString(%v) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
