package backend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// TF32MantissaBits is the number of explicit mantissa bits of TensorFloat32,
// the input format of NVIDIA's tensor cores for float32 matrix products
// (float32 has 23).
const TF32MantissaBits = 10

// EmulateTF32 returns b with the float32 inputs of every Dot, DotGeneral and
// ConvGeneral rounded to the nearest TF32 value first, as the matrix units
// of NVIDIA GPUs since Ampere do when XLA (whose default precision on them
// is TF32) or cuBLAS/cuDNN run float32 products; accumulation stays in
// float32. On a CPU backend it previews the GPU's TF32 numerics: their
// effect on losses and on cmd/check-backend's probes. Other dtypes and
// every other op are untouched.
func EmulateTF32(b backends.Backend) backends.Backend { return &tf32Backend{b} }

type tf32Backend struct{ backends.Backend }

func (b *tf32Backend) Name() string { return b.Backend.Name() + " with TF32 products" }

func (b *tf32Backend) Description() string {
	return b.Backend.Description() + ", float32 matrix-product inputs rounded to TF32"
}

func (b *tf32Backend) Builder(name string) backends.Builder {
	return &tf32Builder{b.Backend.Builder(name)}
}

// tf32Builder forwards every op to the wrapped builder, rounding the
// operands of the three matrix-product ops.
type tf32Builder struct{ backends.Builder }

func (b *tf32Builder) Dot(lhs, rhs backends.Op) (backends.Op, error) {
	lhs, rhs, err := b.roundPair(lhs, rhs)
	if err != nil {
		return nil, err
	}
	return b.Builder.Dot(lhs, rhs)
}

func (b *tf32Builder) DotGeneral(lhs backends.Op, lhsContractingAxes, lhsBatchAxes []int, rhs backends.Op, rhsContractingAxes, rhsBatchAxes []int) (backends.Op, error) {
	lhs, rhs, err := b.roundPair(lhs, rhs)
	if err != nil {
		return nil, err
	}
	return b.Builder.DotGeneral(lhs, lhsContractingAxes, lhsBatchAxes, rhs, rhsContractingAxes, rhsBatchAxes)
}

func (b *tf32Builder) ConvGeneral(input, kernel backends.Op, axes backends.ConvolveAxesConfig, strides []int, paddings [][2]int,
	inputDilations, kernelDilations []int, channelGroupCount, batchGroupCount int) (backends.Op, error) {
	input, kernel, err := b.roundPair(input, kernel)
	if err != nil {
		return nil, err
	}
	return b.Builder.ConvGeneral(input, kernel, axes, strides, paddings, inputDilations, kernelDilations, channelGroupCount, batchGroupCount)
}

func (b *tf32Builder) roundPair(x, y backends.Op) (backends.Op, backends.Op, error) {
	x, err := b.roundToTF32(x)
	if err != nil {
		return nil, nil, err
	}
	y, err = b.roundToTF32(y)
	return x, y, err
}

// roundToTF32 rounds a float32 operand to 1+TF32MantissaBits significant
// bits by Veltkamp's splitting, c = σx, x' = c − (c − x) with
// σ = 2^(24−11) + 1: exact float32 arithmetic, so it needs no bit casts
// (which SimpleGo lacks). Ties may round either way, which is immaterial
// at this precision.
func (b *tf32Builder) roundToTF32(x backends.Op) (backends.Op, error) {
	shape, err := b.OpShape(x)
	if err != nil {
		return nil, err
	}
	if shape.DType != dtypes.Float32 {
		return x, nil
	}
	const sigma = float32(1<<(23-TF32MantissaBits) + 1)
	scalar, err := b.Constant([]float32{sigma})
	if err != nil {
		return nil, err
	}
	factor, err := b.BroadcastInDim(scalar, shapes.Make(dtypes.Float32, shape.Dimensions...), nil)
	if err != nil {
		return nil, err
	}
	c, err := b.Mul(x, factor)
	if err != nil {
		return nil, err
	}
	d, err := b.Sub(c, x)
	if err != nil {
		return nil, err
	}
	return b.Sub(c, d)
}
