package imagefile

import "math"

// fixedBits is the number of fractional bits of the fixed-point resampling
// weights. With 22 bits a sum of 8-bit pixels times weights that add up to
// one stays far below 2³¹, and the result is Pillow's to the last bit.
const fixedBits = 22

// kernel holds, for a range of output positions of a one-dimensional resize,
// the input positions each reads and their fixed-point weights.
type kernel struct {
	start   []int   // first input position read by each output
	weights [][]int // weights[o][t] multiplies input start[o]+t
}

// newKernel returns the antialiased bilinear kernel of a resize from in to
// out samples, for the n outputs first, first+1, ….
//
// Output o is centred on input coordinate c = (o + ½)·in/out. Its weights are
// a triangle ("tent") of radius r = max(in/out, 1) input samples around c,
// evaluated at the input sample centres and normalised to sum to one: plain
// linear interpolation when enlarging, and an average over the covered
// area when shrinking, so that no input sample is skipped. This is how
// Pillow's Image.resize implements BILINEAR (its only mode since Pillow 4),
// which torchvision's Resize calls on PIL images.
func newKernel(in, out, first, n int) kernel {
	scale := float64(in) / float64(out)
	radius := max(scale, 1)
	k := kernel{start: make([]int, n), weights: make([][]int, n)}
	for o := range n {
		c := (float64(first+o) + 0.5) * scale
		// Inputs i whose centre i+½ lies within radius of c; int()
		// truncates like the C code torchvision's results come from.
		lo := max(int(c-radius+0.5), 0)
		hi := min(int(c+radius+0.5), in)
		w := make([]float64, hi-lo)
		var sum float64
		for i := lo; i < hi; i++ {
			d := math.Abs(float64(i)+0.5-c) / radius
			w[i-lo] = max(1-d, 0)
			sum += w[i-lo]
		}
		k.start[o] = lo
		k.weights[o] = make([]int, len(w))
		for t, v := range w {
			// The weights are non-negative, so this rounds half away from zero.
			k.weights[o][t] = int(math.Floor(v/sum*(1<<fixedBits) + 0.5))
		}
	}
	return k
}

// apply returns output o of the pass: the weighted sum of the samples
// data[base + i·stride] at the input positions i the kernel reads, rounded
// half up and clamped to 8 bits.
func (k kernel) apply(o int, data []uint8, base, stride int) uint8 {
	acc := 1 << (fixedBits - 1)
	p := base + k.start[o]*stride
	for _, w := range k.weights[o] {
		acc += int(data[p]) * w
		p += stride
	}
	return uint8(min(max(acc>>fixedBits, 0), 255))
}

// cropBox returns the geometry of torchvision's Resize(s) followed by
// CenterCrop(s) on a w×h image: the size rw×rh the image is resized to (its
// shorter side becomes s, the longer is scaled in proportion and truncated
// to an integer) and the top-left corner of the s×s crop (half the excess,
// rounded half to even as Python's round does).
func cropBox(w, h, s int) (rw, rh, left, top int) {
	if w <= h {
		rw, rh = s, s*h/w
	} else {
		rw, rh = s*w/h, s
	}
	left = int(math.RoundToEven(float64(rw-s) / 2))
	top = int(math.RoundToEven(float64(rh-s) / 2))
	return rw, rh, left, top
}

// resizeCrop resizes the w×h image src (HWC, c channels of 8 bits) so that
// its shorter side is s and writes the centred s×s crop to dst (HWC, s·s·c
// values), with the arithmetic of Pillow's BILINEAR resize: a horizontal
// pass rounded to 8 bits, then a vertical pass rounded to 8 bits. Only the
// columns and rows the crop needs are computed; mid is scratch space, grown
// as needed and returned for reuse.
func resizeCrop(src []uint8, w, h, c, s int, dst, mid []uint8) []uint8 {
	rw, rh, left, top := cropBox(w, h, s)
	horiz := newKernel(w, rw, left, s)
	vert := newKernel(h, rh, top, s)

	// The vertical pass reads rows y0 ≤ y < y1, which the horizontal pass
	// resizes into mid: (y1−y0) rows of s pixels.
	y0 := vert.start[0]
	y1 := vert.start[s-1] + len(vert.weights[s-1])
	mid = grow(mid, (y1-y0)*s*c)
	for y := y0; y < y1; y++ {
		for x := range s {
			for ch := range c {
				mid[((y-y0)*s+x)*c+ch] = horiz.apply(x, src, y*w*c+ch, c)
			}
		}
	}
	for y := range s {
		for x := range s {
			for ch := range c {
				dst[(y*s+x)*c+ch] = vert.apply(y, mid, x*c+ch-y0*s*c, s*c)
			}
		}
	}
	return mid
}

// grow returns buf resliced to n values, reallocated if its capacity is
// smaller.
func grow(buf []uint8, n int) []uint8 {
	if cap(buf) < n {
		return make([]uint8, n)
	}
	return buf[:n]
}
