package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRelativeURLs fetches a JSON page from a fake index, then a file by
// the relative URL a mirror of pypi.org writes there, through http.Get's
// client with a relativeURLs transport: the file comes from the path the
// URL resolves to against the page. Absolute URLs pass unchanged, and a
// relative URL with no page before it is an error, not a guess.
func TestRelativeURLs(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		io.WriteString(w, "served "+r.URL.Path)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &relativeURLs{next: http.DefaultTransport}}
	get := func(url string) (string, error) {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}

	if _, err := get("../../packages/a.whl"); err == nil || !strings.Contains(err.Error(), "no page fetched before it") {
		t.Errorf("relative URL before any page: err = %v, want one that says there is no page to resolve it against", err)
	}
	if _, err := get(srv.URL + "/pypi/jax-cuda13-pjrt/json"); err != nil {
		t.Fatal(err)
	}
	body, err := get("../../packages/packages/97/72/jax_cuda13_pjrt.whl")
	if err != nil {
		t.Fatalf("relative URL after the page: %v", err)
	}
	if want := "served /packages/packages/97/72/jax_cuda13_pjrt.whl"; body != want {
		t.Errorf("relative URL after the page: got %q, want %q", body, want)
	}
	if _, err := get(srv.URL + "/elsewhere/b.whl"); err != nil {
		t.Fatal(err)
	}
	want := []string{"/pypi/jax-cuda13-pjrt/json", "/packages/packages/97/72/jax_cuda13_pjrt.whl", "/elsewhere/b.whl"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("server saw %v, want %v", paths, want)
	}

	// Without it, http.Get's client refuses the relative URL: what go-xla's
	// installer met.
	if _, err := (&http.Client{Transport: &http.Transport{}}).Get("../../packages/a.whl"); err == nil || !strings.Contains(err.Error(), "unsupported protocol scheme") {
		t.Errorf("plain transport, relative URL: err = %v, want unsupported protocol scheme", err)
	}
}
