package nets

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
)

// ParamConvTImpl is the context hyperparameter (a string, one of ConvTImpls)
// that picks the implementation used by ConvTranspose2DLayer. Default (or
// ""): "auto".
const ParamConvTImpl = "convt_impl"

// ConvTLayer describes one transposed-convolution layer, in PyTorch
// ConvTranspose2d terms: Out output channels, a Kernel×Kernel kernel,
// Stride and Padding on both spatial axes.
type ConvTLayer struct {
	Out, Kernel, Stride, Padding int
}

// ConvTranspose2DLayer applies the transposed convolution described by
// layer to x [B, H, W, Cin], with its variables in ctx's current scope:
//
//   - "weights" [Kernel, Kernel, Cin, Out], Xavier-normal with
//     std √(2/((Cin+Out)·Kernel²)), which is also what PyTorch's
//     xavier_normal_ gives a ConvTranspose2d weight (fan-in + fan-out is
//     the same sum whichever way the channel axes are read);
//   - "biases" [Out] when bias is set, uniform in ±1/√(Out·Kernel²) as
//     PyTorch initialises a ConvTranspose2d bias (its fan-in counts the
//     output channels of a transposed convolution).
//
// The variables take x's dtype.
func ConvTranspose2DLayer(ctx *context.Context, x *Node, layer ConvTLayer, bias bool) *Node {
	return convTranspose2DLayer(ctx, x, layer, bias, x.DType())
}

// convTranspose2DLayer is ConvTranspose2DLayer with variables of dtype
// vars, converted to x's dtype for the computation (mixed precision).
func convTranspose2DLayer(ctx *context.Context, x *Node, layer ConvTLayer, bias bool, vars dtypes.DType) *Node {
	cin := x.Shape().Dimensions[x.Rank()-1]
	kernel := ctx.WithInitializer(initializers.XavierNormalFn(ctx)).
		VariableWithShape("weights", shapes.Make(vars, layer.Kernel, layer.Kernel, cin, layer.Out)).
		ValueGraph(x.Graph())
	var b *Node
	if bias {
		bound := 1 / math.Sqrt(float64(layer.Out*layer.Kernel*layer.Kernel))
		b = convertTo(ctx.WithInitializer(initializers.RandomUniformFn(ctx, -bound, bound)).
			VariableWithShape("biases", shapes.Make(vars, layer.Out)).
			ValueGraph(x.Graph()), x.DType())
	}
	impl := ConvTImpl(context.GetParamOr(ctx, ParamConvTImpl, string(ConvTAuto)))
	if impl == "" {
		impl = ConvTAuto
	}
	return ConvTranspose2D(x, convertTo(kernel, x.DType()), b, layer.Stride, layer.Padding, impl)
}

// dense returns x [B, D]·W + b with "weights" [D, out] and "biases" [out]
// in ctx's current scope, initialised as init (one of MLPInits, "" for
// InitPyTorch) says. The product is matMul, so the layer can be
// differentiated to any order cheaply.
func dense(ctx *context.Context, x *Node, out int, init string) *Node {
	dtype, in := x.DType(), x.Shape().Dimensions[1]
	weightsInit, biasesInit := denseInitializers(ctx, in, init)
	w := ctx.WithInitializer(weightsInit).
		VariableWithShape("weights", shapes.Make(dtype, in, out)).ValueGraph(x.Graph())
	b := ctx.WithInitializer(biasesInit).
		VariableWithShape("biases", shapes.Make(dtype, out)).ValueGraph(x.Graph())
	return Add(matMul(x, w), InsertAxes(b, 0))
}

// denseInitializers returns the initialisers of a dense layer's weights
// and biases with fan-in in.
func denseInitializers(ctx *context.Context, in int, init string) (weights, biases initializers.VariableInitializer) {
	if init == InitXavier {
		return initializers.XavierNormalFn(ctx), initializers.Zero
	}
	// PyTorch's nn.Linear: kaiming_uniform_(a=√5) for the weights, whose
	// bound gain·√(3/fan_in) = √(1/3)·√(3/fan_in) is 1/√fan_in, and the
	// same bound for the biases.
	bound := 1 / math.Sqrt(float64(in))
	return initializers.RandomUniformFn(ctx, -bound, bound), initializers.RandomUniformFn(ctx, -bound, bound)
}
