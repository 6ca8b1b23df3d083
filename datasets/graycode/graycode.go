// Package graycode maps points of the plane to 32 bits and back, as Dai et
// al. (2020) did to turn the 2-D toy sets into discrete data, which the
// energy discrepancy paper's discrete experiments reuse: each coordinate
// becomes 16 bits, a sign bit followed by the 15-bit magnitude
// ⌊|x|·s⌋ in reflected binary Gray code, most significant bit first, so
// that neighbouring magnitudes differ in one bit.
//
// The scale s is 2¹⁵ / (extent + 1), where the extent is the largest
// coordinate magnitude among 5,000 samples of the set plus one: the set's
// points stay well inside the 15-bit range, and heat maps cover
// [−extent, extent]².
package graycode

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/edlebm/edlebm/datasets/toy2d"
)

// Bits is the number of bits of an encoded point.
const Bits = 32

// coordinateBits is the number of bits of one coordinate: a sign and
// magnitudeBits of magnitude.
const (
	coordinateBits = Bits / 2
	magnitudeBits  = coordinateBits - 1
	maxMagnitude   = 1<<magnitudeBits - 1
)

// Gray returns the reflected binary Gray code of n.
func Gray(n uint32) uint32 { return n ^ n>>1 }

// FromGray inverts Gray.
func FromGray(g uint32) uint32 {
	n := g
	for shift := uint(1); shift < 32; shift <<= 1 {
		n ^= n >> shift
	}
	return n
}

// Encoding maps points to bits and back with a fixed scale.
type Encoding struct {
	// Extent bounds the plane the encoding's heat maps show:
	// [−Extent, Extent]².
	Extent float64
	// Scale multiplies a coordinate's magnitude before it is truncated to
	// an integer.
	Scale float64
}

// extentSamples is the number of samples whose largest magnitude sets the
// extent, and extentSeed their seed.
const (
	extentSamples = 5000
	extentSeed    = 1
)

// For returns the encoding of set: its extent from 5,000 samples drawn
// with a fixed seed, plus one, and the scale 2¹⁵ / (extent + 1).
func For(set *toy2d.Set) Encoding {
	points := set.Sample(rand.New(rand.NewPCG(extentSeed, extentSeed)), extentSamples)
	largest := 0.0
	for _, v := range points {
		largest = math.Max(largest, math.Abs(float64(v)))
	}
	extent := largest + 1
	return Encoding{Extent: extent, Scale: float64(1<<magnitudeBits) / (extent + 1)}
}

// Encode writes the Bits bits (0 or 1) of the point (x, y) into bits:
// x's 16 bits, then y's. Magnitudes beyond the 15-bit range are clipped
// to its end.
func (e Encoding) Encode(x, y float64, bits []float32) {
	e.encodeCoordinate(x, bits[:coordinateBits])
	e.encodeCoordinate(y, bits[coordinateBits:Bits])
}

func (e Encoding) encodeCoordinate(v float64, bits []float32) {
	bits[0] = 0
	if v < 0 {
		bits[0] = 1
	}
	magnitude := uint32(min(math.Floor(math.Abs(v)*e.Scale), maxMagnitude))
	code := Gray(magnitude)
	for i := range magnitudeBits {
		bits[1+i] = float32(code >> (magnitudeBits - 1 - i) & 1)
	}
}

// Decode returns the point whose bits are bits (as Encode writes them; a
// value above one half counts as 1): the lower corner of the cell of
// 1/Scale that Encode maps to them.
func (e Encoding) Decode(bits []float32) (x, y float64) {
	return e.decodeCoordinate(bits[:coordinateBits]), e.decodeCoordinate(bits[coordinateBits:Bits])
}

func (e Encoding) decodeCoordinate(bits []float32) float64 {
	var code uint32
	for _, b := range bits[1:] {
		code <<= 1
		if b > 0.5 {
			code |= 1
		}
	}
	v := float64(FromGray(code)) / e.Scale
	if bits[0] > 0.5 {
		v = -v
	}
	return v
}

// EncodeAll encodes the flat points (x₀, y₀, x₁, y₁, …) into one row of
// Bits bits per point.
func (e Encoding) EncodeAll(points []float32) ([]float32, error) {
	if len(points)%2 != 0 {
		return nil, fmt.Errorf("graycode: %d values are not whole 2-D points", len(points))
	}
	n := len(points) / 2
	bits := make([]float32, n*Bits)
	for i := range n {
		e.Encode(float64(points[2*i]), float64(points[2*i+1]), bits[i*Bits:(i+1)*Bits])
	}
	return bits, nil
}
