package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// relativeURLs is an http.RoundTripper that resolves relative URLs against
// the last JSON document fetched before passing requests on to next.
//
// go-xla's installer (v0.1.4, -cuda) reads each package's JSON from
// https://pypi.org/pypi/NAME/json and gives the files' "url" values to
// http.Get as they are. pypi.org writes absolute URLs there, but some
// mirrors of it write relative ones ("../../packages/..."), which http.Get
// refuses ("unsupported protocol scheme"): seen when docker/Dockerfile was
// built behind such a mirror (docs/docker.md). Resolved against the page
// they came from, as a browser or pip would, they work; the installer
// still checks each file's SHA-256 against the one in the JSON.
type relativeURLs struct {
	next http.RoundTripper
	mu   sync.Mutex
	page *url.URL // the last JSON document requested
}

// RoundTrip implements http.RoundTripper.
func (t *relativeURLs) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "" && req.URL.Host == "" {
		t.mu.Lock()
		page := t.page
		t.mu.Unlock()
		if page == nil {
			return nil, fmt.Errorf("relative URL %q, and no page fetched before it to resolve it against", req.URL)
		}
		resolved := req.Clone(req.Context())
		resolved.URL = page.ResolveReference(req.URL)
		resolved.Host = ""
		return t.next.RoundTrip(resolved)
	}
	if strings.HasSuffix(req.URL.Path, "/json") {
		t.mu.Lock()
		t.page = req.URL
		t.mu.Unlock()
	}
	return t.next.RoundTrip(req)
}

// resolveRelativeURLs makes http.DefaultTransport, which go-xla's installer
// uses through http.Get, a relativeURLs (once).
var resolveRelativeURLs = sync.OnceFunc(func() {
	http.DefaultTransport = &relativeURLs{next: http.DefaultTransport}
})
