package serving

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edlebm/edlebm/datasets/byname"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/internal/testutil"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/lebmrun"
	"github.com/edlebm/edlebm/training"
)

// testSizes are the compiled batch sizes of the tests' models.
var testSizes = []int{1, 4}

// runFixture saves a fresh 28×28 grey model (3 test posterior steps) as a
// run and writes 6 Fashion-MNIST test images as PNG files into a folder;
// it returns both folders and the files' names.
func runFixture(t *testing.T) (run, images string, names []string) {
	t.Helper()
	testutil.RequireFashionMNIST(t)
	cfg, err := lebm.DefaultConfig(lebm.FolderData)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Generator, err = lebm.ImageGenerator(28, 1); err != nil {
		t.Fatal(err)
	}
	cfg.Seed, cfg.TestPosteriorLangevin.Steps, cfg.GenerationLangevin.Steps = 3, 3, 3
	model, err := lebm.New(testutil.Backend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	run, images = t.TempDir(), t.TempDir()
	if err := model.Save(training.Folder{Dir: run}.Checkpoints()); err != nil {
		t.Fatal(err)
	}
	set, err := byname.Load("fashion-mnist", mnist.DefaultFashionDir, "test", 6)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteImagesAsPNG(t, images, set)
	entries, err := os.ReadDir(images)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return run, images, names
}

// newTestServer serves run through NewHandler with o's limits.
func newTestServer(t *testing.T, run string, o Options) (*httptest.Server, *ImageModel) {
	t.Helper()
	o.Run, o.Backend, o.BatchSizes = run, testutil.BackendName(), testSizes
	model, err := OpenImageModel(o.ModelOptions)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(model, o)
	if err != nil {
		t.Fatal(err)
	}
	return newHTTPTestServer(t, h, model), model
}

// newHTTPTestServer serves h until the test ends, then closes model.
func newHTTPTestServer(t *testing.T, h http.Handler, model Model) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); model.Close() })
	return srv
}

// multipartBody is a form with one file part per (name, content) pair.
func multipartBody(t testing.TB, files ...[2]string) (body *bytes.Buffer, contentType string) {
	body = &bytes.Buffer{}
	w := multipart.NewWriter(body)
	for _, f := range files {
		part, err := w.CreateFormFile("image", f[0])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(part, f[1])
	}
	w.Close()
	return body, w.FormDataContentType()
}

// post sends a body and decodes the answer into v (when not nil),
// returning the status code.
func post(t *testing.T, srv *httptest.Server, path, contentType string, body io.Reader, header http.Header, v any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s: answer %d: %v", path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

// TestServiceScoresAsScoreImages checks the service's scores against the
// batch command's (lebmrun.Score, score-images) on the same files: six
// images in one request, and each image in a request of its own sent
// concurrently, so that the batches mix requests.
func TestServiceScoresAsScoreImages(t *testing.T) {
	run, images, names := runFixture(t)
	_, ranked, err := lebmrun.Score(lebmrun.ScoreOptions{Run: run, Images: images, Backend: testutil.BackendName(), Batch: 4, Seed: 5, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, r := range ranked {
		want[r.File] = r.Score
	}
	srv, _ := newTestServer(t, run, Options{ModelOptions: ModelOptions{Seed: 5, MaxWait: 50 * time.Millisecond}})
	check := func(answer ScoreAnswer) {
		t.Helper()
		for _, im := range answer.Images {
			if w, ok := want[im.File]; !ok || math.Abs(im.Score-w) > 1e-5*(1+math.Abs(w)) {
				t.Errorf("%s: score %v, score-images' %v", im.File, im.Score, w)
			}
		}
	}
	files := make([][2]string, len(names))
	for i, n := range names {
		files[i] = [2]string{n, testutil.ReadText(t, filepath.Join(images, n))}
	}
	for _, chunk := range [][][2]string{files[:4], files[4:]} {
		var answer ScoreAnswer
		body, ct := multipartBody(t, chunk...)
		if code := post(t, srv, "/v1/score", ct, body, nil, &answer); code != http.StatusOK || len(answer.Images) != len(chunk) {
			t.Fatalf("status %d, %d images; want 200 and %d", code, len(answer.Images), len(chunk))
		}
		check(answer)
	}
	var wg sync.WaitGroup
	answers := make([]ScoreAnswer, len(files))
	for i, f := range files {
		wg.Go(func() {
			body, ct := multipartBody(t, f)
			post(t, srv, "/v1/score", ct, body, nil, &answers[i])
		})
	}
	wg.Wait()
	for _, a := range answers {
		if len(a.Images) != 1 {
			t.Fatalf("a concurrent request answered %+v", a)
		}
		check(a)
	}
}

// pngHeader is the start of a PNG file declaring w×h grey pixels, and no
// pixel data.
func pngHeader(w, h uint32) string {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = 8 // bit depth; colour type 0, grey
	chunk := append([]byte("IHDR"), ihdr...)
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.String()
}

// TestServiceRefusesBadInputAndKeepsAnswering sends each kind of bad
// request and checks its status code and message, then that a good
// request is still answered.
func TestServiceRefusesBadInputAndKeepsAnswering(t *testing.T) {
	run, images, names := runFixture(t)
	srv, _ := newTestServer(t, run, Options{MaxBodyBytes: 64 << 10})
	good := testutil.ReadText(t, filepath.Join(images, names[0]))
	multi := func(files ...[2]string) (io.Reader, string) { b, ct := multipartBody(t, files...); return b, ct }
	tooMany := make([][2]string, 5)
	for i := range tooMany {
		tooMany[i] = [2]string{fmt.Sprint(i, ".png"), good}
	}
	cases := []struct {
		name string
		body func() (io.Reader, string)
		code int
		says string
	}{
		{"malformed multipart", func() (io.Reader, string) {
			return strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\nabc"), "multipart/form-data; boundary=x"
		}, http.StatusBadRequest, "malformed body"},
		{"multipart without a boundary", func() (io.Reader, string) { return strings.NewReader("abc"), "multipart/form-data" }, http.StatusBadRequest, "malformed multipart"},
		{"truncated PNG", func() (io.Reader, string) { return multi([2]string{"cut.png", good[:len(good)/2]}) }, http.StatusUnprocessableEntity, `image "cut.png"`},
		{"not an image", func() (io.Reader, string) { return multi([2]string{"notes.txt", "hello"}) }, http.StatusUnprocessableEntity, "not a PNG or JPEG"},
		{"100-megapixel header", func() (io.Reader, string) { return multi([2]string{"huge.png", pngHeader(10000, 10000)}) }, http.StatusUnprocessableEntity, "10000×10000"},
		{"smaller than the run's images", func() (io.Reader, string) { return multi([2]string{"small.png", pngHeader(20, 20)}) }, http.StatusUnprocessableEntity, "smaller than the 28×28"},
		{"body over the limit", func() (io.Reader, string) { return multi([2]string{"big.png", good + strings.Repeat("x", 70<<10)}) }, http.StatusRequestEntityTooLarge, "over the limit"},
		{"more images than the largest batch", func() (io.Reader, string) { return multi(tooMany...) }, http.StatusRequestEntityTooLarge, "more than 4 images"},
		{"no image", func() (io.Reader, string) { return multi() }, http.StatusBadRequest, "no image"},
		{"another content type", func() (io.Reader, string) { return strings.NewReader("{}"), "application/json" }, http.StatusUnsupportedMediaType, "content type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, ct := c.body()
			var answer ErrorAnswer
			if code := post(t, srv, "/v1/score", ct, body, nil, &answer); code != c.code || !strings.Contains(answer.Error, c.says) {
				t.Errorf("status %d %q; want %d saying %q", code, answer.Error, c.code, c.says)
			}
			var ok ScoreAnswer
			if code := post(t, srv, "/v1/score", "image/png", strings.NewReader(good), nil, &ok); code != http.StatusOK || len(ok.Images) != 1 {
				t.Errorf("a good request after it: status %d, %+v", code, ok)
			}
		})
	}
}

// TestServiceAsksForItsToken: with a token, the /v1/ routes and /metrics
// answer 401 without it or with another, and 200 with it; health and
// readiness answer without it.
func TestServiceAsksForItsToken(t *testing.T) {
	run, images, names := runFixture(t)
	srv, _ := newTestServer(t, run, Options{Token: "s3cret"})
	good := testutil.ReadText(t, filepath.Join(images, names[0]))
	for _, c := range []struct {
		header string
		code   int
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"Bearer s3cret0", http.StatusUnauthorized}, {"s3cret", http.StatusUnauthorized}, {"Bearer s3cret", http.StatusOK}} {
		h := http.Header{}
		if c.header != "" {
			h.Set("Authorization", c.header)
		}
		if code := post(t, srv, "/v1/score", "image/png", strings.NewReader(good), h, nil); code != c.code {
			t.Errorf("Authorization %q: status %d, want %d", c.header, code, c.code)
		}
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 401, "/v1/info": 401, "/": 200} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s without the token: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// TestServiceAnswers503PastItsRequestsInFlight fills the in-flight slots
// and checks that a request gets 503 with Retry-After, then 200 once a
// slot is free.
func TestServiceAnswers503PastItsRequestsInFlight(t *testing.T) {
	run, images, names := runFixture(t)
	o := Options{MaxInFlight: 2}
	o.Run, o.Backend, o.BatchSizes = run, testutil.BackendName(), testSizes
	model, err := OpenImageModel(o.ModelOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	o, err = o.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(model, o, newMetrics())
	s.ready.Store(true)
	srv := httptest.NewServer(s)
	defer srv.Close()
	s.inFlight <- struct{}{}
	s.inFlight <- struct{}{}
	good := testutil.ReadText(t, filepath.Join(images, names[0]))
	resp, err := srv.Client().Post(srv.URL+"/v1/score", "image/png", strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("full: status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	<-s.inFlight
	if code := post(t, srv, "/v1/score", "image/png", strings.NewReader(good), nil, nil); code != http.StatusOK {
		t.Errorf("a slot free: status %d, want 200", code)
	}
}

// TestServeDrainsOnShutdown starts Serve, sends a request, cancels Serve's
// context while the request waits in its batch, and checks that the
// request is answered and Serve returns; then that a damaged checkpoint
// stops Serve before it listens.
func TestServeDrainsOnShutdown(t *testing.T) {
	run, images, names := runFixture(t)
	good := testutil.ReadText(t, filepath.Join(images, names[0]))
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	served := make(chan error, 1)
	o := Options{Listen: "127.0.0.1:0", Started: func(a string) { addr <- a }}
	o.Run, o.Backend, o.BatchSizes, o.MaxWait = run, testutil.BackendName(), testSizes, 500*time.Millisecond
	go func() { served <- Serve(ctx, o) }()
	url := "http://" + <-addr
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready after 2 minutes")
		}
	}
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post(url+"/v1/score", "image/png", strings.NewReader(good))
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	time.Sleep(100 * time.Millisecond) // the request waits for its batch (500 ms)
	cancel()
	if code := <-answered; code != http.StatusOK {
		t.Errorf("the request in flight at shutdown: status %d, want 200", code)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}

	if err := os.WriteFile(filepath.Join(training.Folder{Dir: run}.Checkpoints(), "LATEST"), []byte("step-999"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Started = func(string) { t.Error("listening on a damaged checkpoint") }
	if err := Serve(context.Background(), o); err == nil || !strings.Contains(err.Error(), "Options.Run") {
		t.Errorf("damaged checkpoint: %v, want an error naming Options.Run", err)
	}
}

// TestOptionsAreChecked: a non-loopback address without a token, and a
// malformed address, are refused.
func TestOptionsAreChecked(t *testing.T) {
	for _, o := range []Options{{Listen: "0.0.0.0:8080"}, {Listen: "[::]:8080"}, {Listen: "8080"}, {MaxInFlight: -1}} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	for _, o := range []Options{{Listen: "0.0.0.0:8080", Token: "t"}, {Listen: "localhost:0"}, {Listen: "[::1]:8080"}} {
		if _, err := o.withDefaults(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// nanModel answers every score with a NaN, which JSON cannot hold.
type nanModel struct{}

func (nanModel) info() Info { return Info{Kind: "rows"} }
func (nanModel) answerScore(*http.Request) (any, error) {
	return map[string]float64{"score": math.NaN()}, nil
}
func (nanModel) answerSamples() (string, []byte, error) { return "text/plain", nil, nil }
func (nanModel) Warm() error                            { return nil }
func (nanModel) Close()                                 {}

// TestAnswerJSONCannotHoldIsA500: an answer with a NaN is a 500 that says
// why, not a 200 with an empty body.
func TestAnswerJSONCannotHoldIsA500(t *testing.T) {
	h, err := NewHandler(nanModel{}, Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPTestServer(t, h, nanModel{})
	var answer ErrorAnswer
	if code := post(t, srv, "/v1/score", "application/json", strings.NewReader("{}"), nil, &answer); code != http.StatusInternalServerError || !strings.Contains(answer.Error, "cannot be written as JSON") {
		t.Errorf("status %d %q; want 500 saying the answer cannot be written as JSON", code, answer.Error)
	}
}
