// Package testutil holds the helpers the project's numerical tests share:
// the SimpleGo backend they run on, element-wise comparison with a
// relative tolerance, and central finite differences.
package testutil

import (
	"math"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/janpfeifer/must"

	"github.com/edlebm/edlebm/backend"
)

// Backend is the SimpleGo backend (backend.SimpleGo), created once.
var Backend = sync.OnceValue(func() backends.Backend {
	return must.M1(backends.NewWithConfig(backend.SimpleGo))
})

// AssertAllClose fails t when got and want differ in length, or at the
// first element where |got − want| > tol·max(1, |want|) or got is NaN.
func AssertAllClose(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s[%d] = %.10g, want %.10g (tolerance %g)", what, i, got[i], want[i], tol)
			return
		}
	}
}
