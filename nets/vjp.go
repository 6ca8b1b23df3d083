package nets

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"weak"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// nodeVJPs maps nodes built by this package to their own gradient. GoMLX
// only lets single-input nodes carry a custom gradient, so multi-input nodes
// (matrix products, convolutions) are looked up here by the VJP wrappers
// installed in init. Keys are weak so that a registered node does not keep
// its graph alive.
var nodeVJPs sync.Map // weak.Pointer[Node] -> VJP

// overriddenTypes are the node types whose registered VJP consults nodeVJPs.
// Slice and Concatenate are here because GoMLX differentiates a Slice with
// Pad, which SimpleGo lacks (see sliceAxes); Reverse because GoMLX defines
// no gradient for it (see flipSpatial).
var overriddenTypes = []NodeType{NodeTypeDotGeneral, NodeTypeConvGeneral, NodeTypeSlice, NodeTypeConcatenate, NodeTypeReverse}

// init wraps the library gradients once, before any graph can be
// differentiated concurrently: nodes without an entry keep the library's
// gradient.
func init() {
	for _, t := range overriddenTypes {
		builtin, hasBuiltin := VJPRegistration[t]
		VJPRegistration[t] = func(node *Node, v []*Node, out shapes.Shape) []*Node {
			if vjp, ok := nodeVJPs.Load(weak.Make(node)); ok {
				return vjp.(VJP)(node, v, out)
			}
			if !hasBuiltin {
				panic(fmt.Errorf("graph has node %s with type %q, for which no gradient is defined", node, node.Type()))
			}
			return builtin(node, v, out)
		}
	}
}

// withVJP makes grad the gradient of node, which must be of one of the
// overridden types and have a single output. grad receives node and the
// adjoint v of its output, and returns one adjoint per input of node (nil
// for none). grad must take the inputs from node.Inputs() rather than
// capture graph nodes: nodeVJPs holds grad, and a captured node would keep
// its graph, and so the weak key, alive forever.
func withVJP(node *Node, grad func(node, v *Node) []*Node) *Node {
	if !slices.Contains(overriddenTypes, node.Type()) {
		panic(fmt.Errorf("nets: cannot attach a gradient to a %s node; only %v are supported", node.Type(), overriddenTypes))
	}
	key := weak.Make(node)
	nodeVJPs.Store(key, VJP(func(node *Node, v []*Node, _ shapes.Shape) []*Node { return grad(node, v[0]) }))
	runtime.AddCleanup(node, func(k weak.Pointer[Node]) { nodeVJPs.Delete(k) }, key)
	return node
}
