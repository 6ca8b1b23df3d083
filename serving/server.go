package serving

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed" // the page
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/flagcheck"
)

// Options say what Serve serves and the limits that keep it up. Zero
// fields take the defaults their comments give.
type Options struct {
	ModelOptions
	// Listen is the address to listen on (default 127.0.0.1:8080). Any
	// address other than a loopback one needs Token.
	Listen string
	// Token, when set, is the bearer token every /v1/ route and /metrics
	// ask for ("Authorization: Bearer TOKEN"), compared in constant time.
	Token string
	// MaxBodyBytes bounds a request's body (default 32 MiB).
	MaxBodyBytes int64
	// MaxInFlight bounds the requests answered at once; past it a request
	// gets 503 with Retry-After (default 64).
	MaxInFlight int
	// The server's timeouts: reading a request's headers (default 5 s),
	// reading the whole request (default 60 s), writing the answer
	// (default 120 s), keeping an idle connection (default 120 s), and
	// draining the requests in flight at shutdown (default 30 s).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout, DrainTimeout time.Duration
	// Started, when set, is called with the address listened on, once the
	// listener is open (the model is then warming up: /readyz says 503).
	Started func(addr string)
	// Log receives a line per start, readiness and shutdown (default: the
	// standard logger).
	Log *log.Logger
}

// Defaults of Options.
const (
	DefaultListen       = "127.0.0.1:8080"
	DefaultMaxBodyBytes = 32 << 20
	DefaultMaxInFlight  = 64
	DefaultDrainTimeout = 30 * time.Second
)

func (o Options) withDefaults() (Options, error) {
	o.Listen, o.MaxBodyBytes, o.MaxInFlight = cmp.Or(o.Listen, DefaultListen), cmp.Or(o.MaxBodyBytes, DefaultMaxBodyBytes), cmp.Or(o.MaxInFlight, DefaultMaxInFlight)
	o.ReadHeaderTimeout, o.ReadTimeout = cmp.Or(o.ReadHeaderTimeout, 5*time.Second), cmp.Or(o.ReadTimeout, 60*time.Second)
	o.WriteTimeout, o.IdleTimeout = cmp.Or(o.WriteTimeout, 120*time.Second), cmp.Or(o.IdleTimeout, 120*time.Second)
	o.DrainTimeout = cmp.Or(o.DrainTimeout, DefaultDrainTimeout)
	if o.Log == nil {
		o.Log = log.Default()
	}
	host, _, err := net.SplitHostPort(o.Listen)
	switch {
	case err != nil:
		return o, fmt.Errorf("Options.Listen %q: want host:port: %w", o.Listen, err)
	case o.Token == "" && !isLoopback(host):
		return o, fmt.Errorf("Options.Listen %q is not a loopback address: give Options.Token, the bearer token callers must send", o.Listen)
	}
	return o, flagcheck.CheckOptions(
		flagcheck.Rule{Name: "MaxBodyBytes", Value: o.MaxBodyBytes, OK: o.MaxBodyBytes >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "MaxInFlight", Value: o.MaxInFlight, OK: o.MaxInFlight >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "DrainTimeout", Value: o.DrainTimeout, OK: o.DrainTimeout > 0, Want: "> 0"})
}

// isLoopback reports whether host names only the loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve loads the run (a missing or damaged checkpoint is an error before
// anything listens), listens, compiles the batch sizes (/readyz says 503
// until then), and answers until ctx ends; then it stops taking requests,
// lets those in flight finish (within DrainTimeout) and returns.
func Serve(ctx context.Context, o Options) error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	met := newMetrics()
	o.ModelOptions.Observe = met.observeBatch
	model, err := Open(o.ModelOptions)
	if err != nil {
		return err
	}
	defer model.Close()
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("Options.Listen: %w", err)
	}
	s := newServer(model, o, met)
	srv := &http.Server{Handler: s, ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout,
		WriteTimeout: o.WriteTimeout, IdleTimeout: o.IdleTimeout, ErrorLog: o.Log}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	info := model.info()
	o.Log.Printf("serving %s (%s, step %d) on http://%s, backend %s; warming up batch sizes %v", o.Run, info.Kind, info.Step, ln.Addr(), info.Backend, info.BatchSizes)
	if o.Started != nil {
		o.Started(ln.Addr().String())
	}
	start := time.Now()
	if err := model.Warm(); err != nil {
		srv.Close()
		return err
	}
	s.ready.Store(true)
	o.Log.Printf("ready after %.1f s", time.Since(start).Seconds())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.ready.Store(false)
	o.Log.Printf("shutting down: draining the requests in flight (at most %v)", o.DrainTimeout)
	drain, cancel := context.WithTimeout(context.Background(), o.DrainTimeout)
	defer cancel()
	if err := srv.Shutdown(drain); err != nil {
		return fmt.Errorf("draining: %w", err)
	}
	o.Log.Printf("drained; stopped")
	return nil
}

// served is what the routes need of a model: ImageModel, RowModel or
// TableModel.
type served interface {
	// info describes the model for /v1/info.
	info() Info
	// answerScore decodes a /v1/score request and scores it; a
	// *requestError says what was wrong with the request.
	answerScore(r *http.Request) (any, error)
	// answerSamples is /v1/samples' answer.
	answerSamples() (contentType string, body []byte, err error)
	Warm() error
	Close()
}

// server answers the routes.
type server struct {
	model    served
	o        Options
	met      *metrics
	mux      *http.ServeMux
	inFlight chan struct{}
	ready    atomic.Bool
	token    [sha256.Size]byte
}

//go:embed page.html
var page []byte

// NewHandler returns the service's routes for model, as Serve answers them,
// ready at once (Serve warms the model first): for a caller that runs its
// own http.Server.
func NewHandler(model Model, o Options) (http.Handler, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	s := newServer(model, o, newMetrics())
	s.ready.Store(true)
	return s, nil
}

func newServer(model served, o Options, met *metrics) *server {
	s := &server{model: model, o: o, met: met, mux: http.NewServeMux(), inFlight: make(chan struct{}, o.MaxInFlight)}
	if o.Token != "" {
		s.token = sha256.Sum256([]byte(o.Token))
	}
	s.route("GET /{$}", "page", false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	s.route("GET /healthz", "healthz", false, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	s.route("GET /readyz", "readyz", false, func(w http.ResponseWriter, r *http.Request) {
		if !s.ready.Load() {
			writeError(w, http.StatusServiceUnavailable, "not ready: warming up or shutting down")
			return
		}
		io.WriteString(w, "ready\n")
	})
	s.route("GET /metrics", "metrics", true, promhttp.HandlerFor(met.registry, promhttp.HandlerOpts{}).ServeHTTP)
	s.route("GET /v1/info", "info", true, s.info)
	s.route("POST /v1/score", "score", true, s.limited(s.score))
	s.route("GET /v1/samples", "samples", true, s.limited(s.samples))
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// route registers h under pattern, counted and timed as name, behind the
// token when auth is set.
func (s *server) route(pattern, name string, auth bool, h http.HandlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		s.met.inFlight.Inc()
		defer func() {
			s.met.inFlight.Dec()
			s.met.requests.WithLabelValues(name, strconv.Itoa(rec.code)).Inc()
			s.met.latency.WithLabelValues(name).Observe(time.Since(start).Seconds())
		}()
		if auth && !s.authorized(r) {
			s.met.errors.WithLabelValues("auth").Inc()
			rec.Header().Set("WWW-Authenticate", `Bearer realm="edlebm"`)
			writeError(rec, http.StatusUnauthorized, "missing or wrong bearer token: send Authorization: Bearer TOKEN")
			return
		}
		h(rec, r)
	})
}

// authorized compares the request's bearer token with the service's, in
// time independent of where they differ (both hashed: of their lengths too).
func (s *server) authorized(r *http.Request) bool {
	if s.o.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1 && ok
}

// limited answers 503 with Retry-After when MaxInFlight requests are being
// answered, and 503 while the model is not ready.
func (s *server) limited(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.ready.Load() {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, "not ready: warming up or shutting down")
			return
		}
		select {
		case s.inFlight <- struct{}{}:
			defer func() { <-s.inFlight }()
			h(w, r)
		default:
			s.met.errors.WithLabelValues("overload").Inc()
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("busy: %d requests in flight; retry", s.o.MaxInFlight))
		}
	}
}

// Info is /v1/info's answer.
type Info struct {
	// Kind is "images" (a train-lebm run), "rows" (a train-vectors run)
	// or "table" (a train-table run).
	Kind string `json:"kind"`
	Run  string `json:"run"`
	Step int64  `json:"step"`
	// Backend is the GoMLX backend computing, and why it was chosen.
	Backend string `json:"backend"`
	// MaxItems is the most images or rows one request may hold.
	MaxItems   int   `json:"max_items"`
	BatchSizes []int `json:"batch_sizes"`
	// An image model's seed and image shape.
	Seed     int64 `json:"seed,omitempty"`
	Height   int   `json:"height,omitempty"`
	Width    int   `json:"width,omitempty"`
	Channels int   `json:"channels,omitempty"`
	// A row or table model's method, row width (rows), column names and
	// log Z.
	Method  string   `json:"method,omitempty"`
	Dim     int      `json:"dim,omitempty"`
	Columns []string `json:"columns,omitempty"`
	LogZ    float64  `json:"log_z,omitempty"`
	// SetAside are a row model's constant columns, set aside: a row must
	// hold each one's value, and its log-density is that of its other
	// columns.
	SetAside []densityrun.ConstantColumn `json:"set_aside_columns,omitempty"`
	// A table model's schema (each column's kind and categories), the
	// column it classifies, and the held-out rows its p-values count.
	Schema  *table.Schema `json:"schema,omitempty"`
	Target  string        `json:"target,omitempty"`
	HeldOut int           `json:"held_out_rows,omitempty"`
}

func (s *server) info(w http.ResponseWriter, r *http.Request) {
	info := s.model.info()
	info.Run = s.o.Run
	writeJSON(w, http.StatusOK, info)
}

func (s *server) score(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes)
	answer, err := s.model.answerScore(r)
	var re *requestError
	switch {
	case errors.As(err, &re):
		s.refuse(w, re)
	case err != nil:
		s.failed(w, r, err)
	default:
		body, err := json.Marshal(answer)
		if err != nil { // a value JSON cannot hold (a NaN): the model's fault, said so
			s.failed(w, r, fmt.Errorf("the answer cannot be written as JSON: %w", err))
			return
		}
		if a, ok := answer.(TableAnswer); ok {
			s.met.observeTableRows(a)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(body, '\n'))
	}
}

func (s *server) samples(w http.ResponseWriter, r *http.Request) {
	contentType, body, err := s.model.answerSamples()
	if err != nil {
		s.failed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Write(body)
}

// refuse answers a request whose input was refused.
func (s *server) refuse(w http.ResponseWriter, re *requestError) {
	kind := "decode"
	if re.code == http.StatusRequestEntityTooLarge {
		kind = "limit"
	}
	s.met.errors.WithLabelValues(kind).Inc()
	writeError(w, re.code, re.msg)
}

// failed answers a request the model could not compute: 503 when the
// service is shutting down, 499-like silence when the caller left, 500
// otherwise.
func (s *server) failed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrClosed):
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case r.Context().Err() != nil:
		writeError(w, http.StatusServiceUnavailable, "the request was cancelled: "+err.Error())
	default:
		s.o.Log.Printf("model error: %v", err)
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// statusRecorder remembers the status code written.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// ErrorAnswer is the body of every answer other than 200.
type ErrorAnswer struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorAnswer{Error: msg})
}

// mediaType is the request's content type without its parameters.
func mediaType(r *http.Request) string {
	t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return t
}
