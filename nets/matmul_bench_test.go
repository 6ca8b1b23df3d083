package nets

import (
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// BenchmarkProductGradient times ∂/∂w of Σ (s·w) ⊙ s for s [3300, 100]
// and w [100, 100] (the Ising energy's shape in docs/discrete.md) with
// GoMLX's MatMul and with MatrixProduct:
//
//	EDLEBM_TEST_BACKEND=cpu go test ./nets -run '^$' -bench ProductGradient
func BenchmarkProductGradient(b *testing.B) {
	s := tensors.FromShape(shapes.Make(dtypes.Float32, 3300, 100))
	w := tensors.FromShape(shapes.Make(dtypes.Float32, 100, 100))
	for _, c := range []struct {
		name    string
		product func(a, b *Node) *Node
	}{{"graph.MatMul", MatMul}, {"MatrixProduct", MatrixProduct}} {
		b.Run(c.name, func(b *testing.B) {
			exec := MustNewExec(testBackend(), func(s, w *Node) *Node {
				return Gradient(ReduceAllSum(Mul(c.product(s, w), s)), w)[0]
			})
			exec.MustExec(s, w)[0].FinalizeAll() // compile
			for b.Loop() {
				exec.MustExec(s, w)[0].FinalizeAll()
			}
		})
	}
}
