package imagefile

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCropBox(t *testing.T) {
	tests := []struct {
		w, h, s           int
		rw, rh, left, top int
	}{
		{178, 218, 64, 64, 78, 0, 7},     // aligned CelebA at 64
		{178, 218, 128, 128, 156, 0, 14}, // and at 128
		{218, 178, 64, 78, 64, 7, 0},     // landscape: the height is the shorter side
		{100, 100, 64, 64, 64, 0, 0},     // square: no crop
		{50, 81, 32, 32, 51, 0, 10},      // 51.84 → 51 rows; (51−32)/2 = 9.5 rounds to even 10
		{50, 78, 32, 32, 49, 0, 8},       // 49.92 → 49 rows; (49−32)/2 = 8.5 rounds to even 8
		{20, 30, 64, 64, 96, 0, 16},      // enlarging
	}
	for _, tc := range tests {
		rw, rh, left, top := cropBox(tc.w, tc.h, tc.s)
		if rw != tc.rw || rh != tc.rh || left != tc.left || top != tc.top {
			t.Errorf("cropBox(%d, %d, %d) = %d, %d, %d, %d; want %d, %d, %d, %d",
				tc.w, tc.h, tc.s, rw, rh, left, top, tc.rw, tc.rh, tc.left, tc.top)
		}
	}
}

// TestKernelWeights compares the kernels with weights worked out by hand
// from the tent definition: output o is centred on c = (o+½)·in/out, the
// tent has radius max(in/out, 1), input i sits at i+½, and the weights are
// normalised.
func TestKernelWeights(t *testing.T) {
	tests := []struct {
		name     string
		in, out  int
		first, n int
		starts   []int
		weights  [][]float64
	}{
		// Halving: c = 1 and 3, radius 2; inputs at distances ½, 3/2 get ¾, ¼.
		{"4 to 2", 4, 2, 0, 2, []int{0, 1}, [][]float64{
			{0.75 / 1.75, 0.75 / 1.75, 0.25 / 1.75},
			{0.25 / 1.75, 0.75 / 1.75, 0.75 / 1.75},
		}},
		// Same size: each output copies its input (the next gets weight 0).
		{"3 to 3", 3, 3, 0, 3, []int{0, 1, 2}, [][]float64{{1, 0}, {1, 0}, {1}}},
		// Doubling: c = ¼, ¾, 5/4, 7/4, radius 1: linear interpolation,
		// edge outputs copy the edge input.
		{"2 to 4", 2, 4, 0, 4, []int{0, 0, 0, 1}, [][]float64{{1}, {0.75, 0.25}, {0.25, 0.75}, {1}}},
		// A window of outputs: outputs 1 and 2 of 6 → 3 (c = 3, 5; radius
		// 2); output 1 reads four inputs, output 2 three (input 6 is past
		// the edge).
		{"6 to 3, outputs 1..2", 6, 3, 1, 2, []int{1, 3}, [][]float64{
			{0.25 / 2, 0.75 / 2, 0.75 / 2, 0.25 / 2},
			{0.25 / 1.75, 0.75 / 1.75, 0.75 / 1.75},
		}},
	}
	for _, tc := range tests {
		k := newKernel(tc.in, tc.out, tc.first, tc.n)
		if !slices.Equal(k.start, tc.starts) {
			t.Errorf("%s: starts %v, want %v", tc.name, k.start, tc.starts)
		}
		for o, want := range tc.weights {
			if len(k.weights[o]) != len(want) {
				t.Errorf("%s: output %d has %d weights, want %d", tc.name, o, len(k.weights[o]), len(want))
				continue
			}
			for i, w := range want {
				if got := float64(k.weights[o][i]) / (1 << fixedBits); math.Abs(got-w) > 1e-6 {
					t.Errorf("%s: output %d weight %d = %v, want %v", tc.name, o, i, got, w)
				}
			}
		}
	}
}

// TestResizeCropByHand follows a 4×4 image to 2×2 through both 8-bit
// passes. Source level 10x + 40y; the horizontal pass gives per row
// (0·¾ + 10·¾ + 20·¼)/1.75 = 7.14 → 7 and (10·¼ + 20·¾ + 30·¾)/1.75 = 22.86
// → 23, plus 40y; the vertical pass then gives, for column 0 (7, 47, 87,
// 127): 62.25/1.75 = 35.57 → 36 and 172.25/1.75 = 98.43 → 98, and for
// column 1 (23, 63, 103, 143): 90.25/1.75 = 51.57 → 52 and 200.25/1.75 =
// 114.43 → 114.
func TestResizeCropByHand(t *testing.T) {
	src := make([]uint8, 0, 4*4*3)
	for y := range 4 {
		for x := range 4 {
			v := uint8(10*x + 40*y)
			src = append(src, v, v+1, v+2) // channels are resampled independently
		}
	}
	dst := make([]uint8, 2*2*3)
	resizeCrop(src, 4, 4, 3, 2, dst, nil)
	want := []uint8{36, 37, 38, 52, 53, 54, 98, 99, 100, 114, 115, 116}
	if !slices.Equal(dst, want) {
		t.Errorf("resizeCrop = %v, want %v", dst, want)
	}
}

// TestResizeCropIdentity checks that an S×S image comes back unchanged and
// that a taller one is cropped to its centre rows when no scaling is needed.
func TestResizeCropIdentity(t *testing.T) {
	const s = 5
	src := make([]uint8, s*(s+2)*3) // s wide, s+2 tall
	for i := range src {
		src[i] = uint8(i * 7)
	}
	for _, tc := range []struct {
		h, top int
	}{{s, 0}, {s + 2, 1}} {
		dst := make([]uint8, s*s*3)
		resizeCrop(src[:s*tc.h*3], s, tc.h, 3, s, dst, nil)
		if want := src[tc.top*s*3 : (tc.top+s)*s*3]; !slices.Equal(dst, want) {
			t.Errorf("height %d: got %v, want rows %d… of the source %v", tc.h, dst, tc.top, want)
		}
	}
}

// pcgImage returns w·h·3 bytes drawn from PCG(1, 2), whose output sequence
// is fixed by its specification.
func pcgImage(w, h int) []uint8 {
	rng := rand.New(rand.NewPCG(1, 2))
	var src []uint8
	for len(src) < w*h*3 {
		src = binary.LittleEndian.AppendUint64(src, rng.Uint64())
	}
	return src[:w*h*3]
}

// TestResizeCropMatchesPillow compares resizeCrop on a noise image with
// torchvision's Resize(S) + CenterCrop(S) as Pillow 9.4.0 computes it. The
// digests and leading bytes were recorded by running, in Python,
//
//	img = Image.frombytes("RGB", (178, 218), pcgImage(178, 218))
//	h = int(S*218/178); top = int(round((h - S)/2.))
//	img.resize((S, h), Image.BILINEAR).crop((0, top, S, top + S)).tobytes()
//
// Noise exercises every weight and every rounding of both passes.
func TestResizeCropMatchesPillow(t *testing.T) {
	tests := []struct {
		size   int
		sha256 string
		head   []uint8
	}{
		{64, "35bd92ad5642330d8cb89dd9e75d79fa3de1a57b20e4841f867edb4ef4920bc1", []uint8{113, 152, 119, 109, 105, 135}},
		{128, "03a7f8d4a8333d55017e5c57e3399267d36ba2ff8f0597932d524c1cc18ca5ec", []uint8{133, 156, 72, 103, 185, 106}},
	}
	src := pcgImage(178, 218)
	for _, tc := range tests {
		dst := make([]uint8, tc.size*tc.size*3)
		resizeCrop(src, 178, 218, 3, tc.size, dst, nil)
		sum := sha256.Sum256(dst)
		if got := hex.EncodeToString(sum[:]); got != tc.sha256 || !slices.Equal(dst[:len(tc.head)], tc.head) {
			t.Errorf("size %d: output starts %v with SHA-256 %s, want Pillow's %v with %s",
				tc.size, dst[:len(tc.head)], got, tc.head, tc.sha256)
		}
	}
}
