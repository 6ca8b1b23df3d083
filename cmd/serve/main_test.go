package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/serving"
)

// TestParseFlags: the defaults, the token from a file or the environment,
// and bad values named by flag — those the command checks, and those the
// library checks, explained as the flags that set them.
func TestParseFlags(t *testing.T) {
	o, _, err := parseFlags([]string{"-run", "runs/x"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Listen != "127.0.0.1:8080" || !slices.Equal(o.BatchSizes, []int{1, 8, 64}) || o.Method != "" || o.Token != "" {
		t.Errorf("defaults: %+v", o)
	}
	t.Setenv("EDLEBM_TOKEN", "from-env")
	if o, _, err := parseFlags([]string{"-run", "x"}); err != nil || o.Token != "from-env" {
		t.Errorf("$EDLEBM_TOKEN: token %q, %v", o.Token, err)
	}
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("from-file\n"), 0o600)
	if o, _, err := parseFlags([]string{"-run", "x", "-token-file", token}); err != nil || o.Token != "from-file" {
		t.Errorf("-token-file: token %q, %v", o.Token, err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "flag -run: required"},
		{[]string{"-run", "x", "-batch-sizes", "1,0"}, `flag -batch-sizes "1,0"`},
		{[]string{"-run", "x", "-token-file", empty}, "is empty"},
		{[]string{"-run", "x", "-token-file", "/no/such/file"}, "flag -token-file"},
		{[]string{"-run", "x", "extra"}, "unexpected arguments"},
	} {
		if _, _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	t.Setenv("EDLEBM_TOKEN", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-run", "x", "-listen", "0.0.0.0:8080"}, "flag -listen \"0.0.0.0:8080\" is not a loopback address: give -token-file"},
		{[]string{"-run", "/no/such/run", "-backend", "go"}, "flag -run: lebm:"},
		{[]string{"-run", "x", "-max-in-flight", "-2"}, "flag -max-in-flight -2: must be ≥ 1"},
		{[]string{"-run", "x", "-samples", "2000"}, "flag -samples 2000: must be from 1 to 1024"},
		{[]string{"-run", "x", "-max-wait", "-1s"}, "flag -max-wait -1s: must be ≥ 0"},
		{[]string{"-run", "x", "-max-pixels", "-1"}, "flag -max-pixels -1: must be ≥ 1"},
		{[]string{"-run", "x", "-max-body", "-1"}, "flag -max-body -1: must be ≥ 1"},
		{[]string{"-run", "x", "-drain", "-1s"}, "flag -drain -1s: must be > 0"},
		{[]string{"-run", vectorRun(t), "-method", "cd", "-backend", "go"}, "flag -run: method cd:"},
	} {
		o, flags, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		err = serving.Serve(context.Background(), o)
		if err == nil || !strings.Contains(flags.Explain(err).Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, flags.Explain(err), tc.want)
		}
	}
}

// vectorRun is a folder that looks like a train-vectors run (its data
// record) without the method asked for.
func vectorRun(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, densityrun.DataFile), []byte(`{"version": 1, "dim": 2, "standardizer": {"mean": [0, 0], "std": [1, 1]}}`), 0o644)
	return dir
}
