package backend

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// tf32Neighbours returns the TF32 values on either side of x, found from
// its bits: the low 23−TF32MantissaBits mantissa bits cleared (towards
// zero) and the next TF32 value away from zero (a carry into the exponent
// is the right answer there too).
func tf32Neighbours(x float32) (towardZero, awayFromZero float32) {
	const low = 1<<(23-TF32MantissaBits) - 1
	bits := math.Float32bits(x) &^ low
	return math.Float32frombits(bits), math.Float32frombits(bits + low + 1)
}

// nearestTF32 rounds x to the nearest TF32 value; ok is false on a tie.
func nearestTF32(x float32) (r float32, ok bool) {
	down, up := tf32Neighbours(x)
	dDown, dUp := math.Abs(float64(x)-float64(down)), math.Abs(float64(x)-float64(up))
	if dDown < dUp {
		return down, true
	}
	return up, dUp < dDown
}

func openSimpleGo(t *testing.T) (plain, tf32 backends.Backend) {
	t.Helper()
	isolate(t)
	b, _, err := Open("go")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Finalize)
	return b, EmulateTF32(b)
}

// product returns a·b, computed by DotGeneral, for a [m, k] and b [k, n].
func product(b backends.Backend, x, y *tensors.Tensor) *tensors.Tensor {
	return MustExecOnce(b, func(x, y *Node) *Node { return Dot(x, y) }, x, y)
}

// TestEmulateTF32RoundsToNearest feeds values through a product with
// (1, 1) after pairing each with a 0 (so the output is the rounded input;
// GoMLX turns a contraction of length 1 into a Mul) and checks each against
// the TF32 neighbours found from its bits: on the TF32 grid and at least as
// near x as the other neighbour. It covers carries into the exponent,
// exact TF32 values, ties, signs and magnitudes from 1e-30 to 1e30.
func TestEmulateTF32RoundsToNearest(t *testing.T) {
	_, tf32 := openSimpleGo(t)
	belowTwo := math.Float32frombits(math.Float32bits(2) - 1)
	values := []float32{0, 1, -1, 2, 0.5, belowTwo, -belowTwo, 1 + 1.0/2048, 1 + 3.0/4096, 1e-30, -1e30, 3.14159265}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		values = append(values, float32(rng.NormFloat64()*math.Pow(10, 6*rng.Float64()-3)))
	}
	x := make([][]float32, len(values))
	for i, v := range values {
		x[i] = []float32{v, 0}
	}
	got := product(tf32, tensors.FromValue(x), tensors.FromValue([][]float32{{1}, {1}})).Value().([][]float32)
	changed := 0
	for i, v := range values {
		r := got[i][0]
		down, up := tf32Neighbours(v)
		dist := func(a float32) float64 { return math.Abs(float64(a) - float64(v)) }
		if (r != down && r != up) || dist(r) > math.Min(dist(down), dist(up)) {
			t.Fatalf("%g (bits %#08x) became %g; want the nearer of its TF32 neighbours %g and %g", v, math.Float32bits(v), r, down, up)
		}
		if r != v {
			changed++
		}
	}
	if changed < len(values)/2 {
		t.Errorf("only %d of %d values changed: the inputs were not rounded", changed, len(values))
	}
}

// TestEmulateTF32Products compares Dot, DotGeneral and ConvGeneral on the
// emulating backend with naive float64 loops over inputs rounded by
// nearestTF32, and on the plain backend with the loops over the inputs as
// they are; float64 products are left alone.
func TestEmulateTF32Products(t *testing.T) {
	plain, tf32 := openSimpleGo(t)
	rng := rand.New(rand.NewPCG(3, 4))
	// random returns n float32 values that are not TF32 ties, and them rounded.
	random := func(n int) (raw, rounded []float32) {
		for len(raw) < n {
			v := float32(rng.NormFloat64())
			if r, ok := nearestTF32(v); ok {
				raw, rounded = append(raw, v), append(rounded, r)
			}
		}
		return raw, rounded
	}
	const m, k, n = 4, 9, 3
	aRaw, aRounded := random(m * k)
	bRaw, bRounded := random(k * n)
	naiveProduct := func(a, b []float32) []float64 {
		out := make([]float64, m*n)
		for i := range m {
			for j := range n {
				for c := range k {
					out[i*n+j] += float64(a[i*k+c]) * float64(b[c*n+j])
				}
			}
		}
		return out
	}

	// Convolution: x [1, 5, 5, 2] (NHWC), kernel [3, 3, 2, 4], no padding.
	const size, kSize, cin, cout = 5, 3, 2, 4
	const outSize = size - kSize + 1
	xRaw, xRounded := random(size * size * cin)
	kRaw, kRounded := random(kSize * kSize * cin * cout)
	naiveConv := func(x, kern []float32) []float64 {
		out := make([]float64, outSize*outSize*cout)
		for i := range outSize {
			for j := range outSize {
				for o := range cout {
					for di := range kSize {
						for dj := range kSize {
							for c := range cin {
								out[(i*outSize+j)*cout+o] += float64(x[((i+di)*size+j+dj)*cin+c]) * float64(kern[((di*kSize+dj)*cin+c)*cout+o])
							}
						}
					}
				}
			}
		}
		return out
	}
	conv := func(b backends.Backend) []float64 {
		x := tensors.FromFlatDataAndDimensions(xRaw, 1, size, size, cin)
		kern := tensors.FromFlatDataAndDimensions(kRaw, kSize, kSize, cin, cout)
		out := MustExecOnce(b, func(x, kern *Node) *Node { return Convolve(x, kern).Strides(1).NoPadding().Done() }, x, kern)
		return float64s(out)
	}
	dot := func(b backends.Backend) []float64 {
		return float64s(product(b, tensors.FromFlatDataAndDimensions(aRaw, m, k), tensors.FromFlatDataAndDimensions(bRaw, k, n)))
	}
	dotGeneral := func(b backends.Backend) []float64 {
		// b laid out [n, k]: contracted on its axis 1.
		bT := make([]float32, k*n)
		for c := range k {
			for j := range n {
				bT[j*k+c] = bRaw[c*n+j]
			}
		}
		out := MustExecOnce(b, func(x, y *Node) *Node { return DotGeneral(x, []int{1}, nil, y, []int{1}, nil) },
			tensors.FromFlatDataAndDimensions(aRaw, m, k), tensors.FromFlatDataAndDimensions(bT, n, k))
		return float64s(out)
	}

	cases := []struct {
		name      string
		got       []float64
		want      []float64
		unrounded []float64 // the loop over raw inputs: must differ from want
	}{
		{"Dot, TF32", dot(tf32), naiveProduct(aRounded, bRounded), naiveProduct(aRaw, bRaw)},
		{"Dot, plain", dot(plain), naiveProduct(aRaw, bRaw), nil},
		{"DotGeneral, TF32", dotGeneral(tf32), naiveProduct(aRounded, bRounded), naiveProduct(aRaw, bRaw)},
		{"DotGeneral, plain", dotGeneral(plain), naiveProduct(aRaw, bRaw), nil},
		{"ConvGeneral, TF32", conv(tf32), naiveConv(xRounded, kRounded), naiveConv(xRaw, kRaw)},
		{"ConvGeneral, plain", conv(plain), naiveConv(xRaw, kRaw), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const tol = 1e-5 // float32 accumulation of ≤ 18 terms of size ~1
			worst := maxAbsDiff(c.got, c.want)
			if worst > tol {
				t.Errorf("max |got − loop| = %.3g, want ≤ %g", worst, tol)
			}
			if c.unrounded != nil && maxAbsDiff(c.want, c.unrounded) < 100*tol {
				t.Errorf("rounding the inputs moved the loop's result by only %.3g: the test cannot tell TF32 from float32", maxAbsDiff(c.want, c.unrounded))
			}
		})
	}

	t.Run("float64 untouched", func(t *testing.T) {
		a64, b64 := make([]float64, m*k), make([]float64, k*n)
		for i, v := range aRaw {
			a64[i] = float64(v) + 1e-9*float64(i) // below float32's resolution
		}
		for i, v := range bRaw {
			b64[i] = float64(v)
		}
		got := float64s(product(tf32, tensors.FromFlatDataAndDimensions(a64, m, k), tensors.FromFlatDataAndDimensions(b64, k, n)))
		want := make([]float64, m*n)
		for i := range m {
			for j := range n {
				for c := range k {
					want[i*n+j] += a64[i*k+c] * b64[c*n+j]
				}
			}
		}
		if d := maxAbsDiff(got, want); d > 1e-13 {
			t.Errorf("float64 product differs from the loop by %.3g: it was rounded", d)
		}
	})
}

func TestOpenGoTF32(t *testing.T) {
	isolate(t)
	b, choice, err := Open("go-tf32")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	if !choice.EmulateTF32 || !strings.Contains(b.Description(), "TF32") {
		t.Errorf("Open(go-tf32) = %s (%+v); want the TF32-emulating backend", b.Description(), choice)
	}
	// Exactly representable in float32 but not in TF32: 1 + 2⁻²⁰ rounds to 1.
	x := tensors.FromValue([][]float32{{1 + 1.0/(1<<20), 0}})
	if got := product(b, x, tensors.FromValue([][]float32{{1}, {1}})).Value().([][]float32)[0][0]; got != 1 {
		t.Errorf("go-tf32: (1 + 2⁻²⁰)·1 = %.9g, want 1", got)
	}
}

// float64s returns a float32 or float64 tensor's values as float64.
func float64s(x *tensors.Tensor) []float64 {
	if x.DType() == dtypes.Float64 {
		return tensors.MustCopyFlatData[float64](x)
	}
	var out []float64
	for _, v := range tensors.MustCopyFlatData[float32](x) {
		out = append(out, float64(v))
	}
	return out
}

func maxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	worst := 0.0
	for i := range a {
		worst = math.Max(worst, math.Abs(a[i]-b[i]))
	}
	return worst
}
