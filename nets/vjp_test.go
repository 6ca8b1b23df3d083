package nets

import (
	"runtime"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// countNodeVJPs is the number of nodes with a registered gradient.
func countNodeVJPs() int {
	n := 0
	nodeVJPs.Range(func(any, any) bool { n++; return true })
	return n
}

// TestNodeVJPsReleased checks that the gradient registry does not keep
// graphs alive: once a graph is unreachable, even if never finalised, its
// entries are dropped.
func TestNodeVJPsReleased(t *testing.T) {
	before := countNodeVJPs()
	func() {
		g := NewGraph(testBackend(), "released")
		a := Parameter(g, "a", shapes.Make(dtypes.Float32, 3, 4))
		b := Parameter(g, "b", shapes.Make(dtypes.Float32, 4, 5))
		Gradient(ReduceAllSum(matMul(a, b)), a, b)
		if got := countNodeVJPs(); got < before+3 {
			t.Fatalf("%d registered gradients after building 3 products, want at least %d", got, before+3)
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for countNodeVJPs() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := countNodeVJPs(); got > before {
		t.Errorf("%d registered gradients remain after the graph was dropped, want %d", got, before)
	}
}
