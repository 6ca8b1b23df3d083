package graycode

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets/toy2d"
)

// reflected builds the n-bit reflected Gray code by its definition: the
// (n−1)-bit code prefixed with 0, then that code reversed, prefixed with 1.
func reflected(n int) []string {
	if n == 0 {
		return []string{""}
	}
	prev := reflected(n - 1)
	out := make([]string, 0, 2*len(prev))
	for _, c := range prev {
		out = append(out, "0"+c)
	}
	for i := len(prev) - 1; i >= 0; i-- {
		out = append(out, "1"+prev[i])
	}
	return out
}

func TestGrayIsTheReflectedCode(t *testing.T) {
	want := reflected(10)
	for n, code := range want {
		var got strings.Builder
		g := Gray(uint32(n))
		for i := 9; i >= 0; i-- {
			got.WriteByte(byte('0' + g>>i&1))
		}
		if got.String() != code {
			t.Fatalf("Gray(%d) = %s, want %s", n, got.String(), code)
		}
	}
	for n := uint32(0); n < 1<<15; n++ {
		if FromGray(Gray(n)) != n {
			t.Fatalf("FromGray(Gray(%d)) = %d", n, FromGray(Gray(n)))
		}
	}
}

func bitString(bits []float32) string {
	var b strings.Builder
	for _, v := range bits {
		b.WriteByte(byte('0' + int(v)))
	}
	return b.String()
}

func TestEncodeLayout(t *testing.T) {
	e := Encoding{Extent: 10, Scale: 1}
	bits := make([]float32, Bits)
	// 5 → Gray 7 = 111; −2 → sign 1, Gray 3 = 11; 2.9 truncates to 2.
	e.Encode(5, -2.9, bits)
	want := "0" + strings.Repeat("0", 12) + "111" + "1" + strings.Repeat("0", 13) + "11"
	if got := bitString(bits); got != want {
		t.Errorf("Encode(5, −2.9) = %s, want %s", got, want)
	}
	e.Encode(1e9, 0, bits)
	if got := bitString(bits[:16]); got != "0"+"100000000000000" { // Gray(2¹⁵−1)
		t.Errorf("a magnitude past the range encodes as %s, want the clipped 2¹⁵−1", got)
	}
}

func TestEncodeDecodeAndNeighbours(t *testing.T) {
	set, err := toy2d.New("pinwheel")
	if err != nil {
		t.Fatal(err)
	}
	e := For(set)
	// The extent, recomputed: the largest magnitude of the same 5,000
	// samples, plus one.
	points := set.Sample(rand.New(rand.NewPCG(1, 1)), 5000)
	largest := 0.0
	for _, v := range points {
		largest = math.Max(largest, math.Abs(float64(v)))
	}
	if e.Extent != largest+1 || e.Scale != 32768/(largest+2) {
		t.Fatalf("encoding %+v, want extent %g and scale %g", e, largest+1, 32768/(largest+2))
	}
	bits, err := e.EncodeAll(points)
	if err != nil {
		t.Fatal(err)
	}
	step := 1 / e.Scale
	for i := range len(points) / 2 {
		x, y := e.Decode(bits[i*Bits : (i+1)*Bits])
		for _, c := range [][2]float64{{float64(points[2*i]), x}, {float64(points[2*i+1]), y}} {
			// Truncation toward zero: same sign, at most one cell closer to 0.
			if c[1]*c[0] < 0 || math.Abs(c[1]) > math.Abs(c[0]) || math.Abs(c[0])-math.Abs(c[1]) >= step {
				t.Fatalf("point %d: coordinate %g decodes to %g (cell %g)", i, c[0], c[1], step)
			}
		}
	}
	// Neighbouring cells of the same sign differ in one bit.
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float32, Bits), make([]float32, Bits)
	for range 1000 {
		x := (rng.Float64()*2 - 1) * (e.Extent - 2*step)
		x = (math.Floor(math.Abs(x)*e.Scale) + 0.5) / e.Scale * math.Copysign(1, x)
		e.Encode(x, 0, a)
		e.Encode(x+math.Copysign(step, x), 0, b)
		differ := 0
		for i := range a {
			if a[i] != b[i] {
				differ++
			}
		}
		if differ != 1 {
			t.Fatalf("x = %g and the next cell differ in %d bits, want 1", x, differ)
		}
	}
	if _, err := e.EncodeAll([]float32{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "3 values") {
		t.Errorf("odd number of values: %v, want an error naming the count", err)
	}
}
