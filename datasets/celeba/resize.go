package celeba

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math"
)

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

// resizeCrop resizes the w×h RGB image src (HWC, 8 bits) so that its shorter
// side is s and writes the centred s×s crop to dst (HWC, s·s·3 values), with
// the arithmetic of Pillow's BILINEAR resize: a horizontal pass rounded to
// 8 bits, then a vertical pass rounded to 8 bits. Only the columns and rows
// the crop needs are computed; mid is scratch space, grown as needed and
// returned for reuse.
func resizeCrop(src []uint8, w, h, s int, dst, mid []uint8) []uint8 {
	rw, rh, left, top := cropBox(w, h, s)
	horiz := newKernel(w, rw, left, s)
	vert := newKernel(h, rh, top, s)

	// The vertical pass reads rows y0 ≤ y < y1, which the horizontal pass
	// resizes into mid: (y1−y0) rows of s pixels.
	y0 := vert.start[0]
	y1 := vert.start[s-1] + len(vert.weights[s-1])
	mid = grow(mid, (y1-y0)*s*3)
	for y := y0; y < y1; y++ {
		for x := range s {
			for c := range 3 {
				mid[((y-y0)*s+x)*3+c] = horiz.apply(x, src, y*w*3+c, 3)
			}
		}
	}
	for y := range s {
		for x := range s {
			for c := range 3 {
				dst[(y*s+x)*3+c] = vert.apply(y, mid, x*3+c-y0*s*3, s*3)
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

// toFloat maps an 8-bit value v to v/255·2 − 1, the [-1, 1] scale of the
// project's image sets.
var toFloat = func() (table [256]float32) {
	for v := range table {
		table[v] = float32(float64(v)/255*2 - 1)
	}
	return table
}()

// decodeRGB decodes a JPEG into 8-bit RGB, HWC, stored in buf (grown as
// needed), and returns it with the image's size. Grey-scale and CMYK JPEGs
// are converted to RGB.
func decodeRGB(r io.Reader, buf []uint8) (rgb []uint8, w, h int, err error) {
	img, err := jpeg.Decode(r)
	if err != nil {
		return buf, 0, 0, err
	}
	b := img.Bounds()
	w, h = b.Dx(), b.Dy()
	rgb = grow(buf, w*h*3)[:0]
	switch m := img.(type) {
	case *image.YCbCr:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				yi, ci := m.YOffset(x, y), m.COffset(x, y)
				r, g, bl := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				rgb = append(rgb, r, g, bl)
			}
		}
	case *image.Gray:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for _, v := range m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)] {
				rgb = append(rgb, v, v, v)
			}
		}
	default:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
				rgb = append(rgb, c.R, c.G, c.B)
			}
		}
	}
	return rgb, w, h, nil
}

// maxJPEGBytes bounds the size of one image file: aligned CelebA JPEGs are
// 5–30 KB; a larger file is refused before it is read whole.
const maxJPEGBytes = 4 << 20

// decoder turns aligned CelebA JPEGs into s×s float32 images. It keeps
// scratch buffers between images, so each worker needs its own.
type decoder struct {
	size          int
	file          bytes.Buffer
	rgb, mid, out []uint8
}

func newDecoder(size int) *decoder {
	return &decoder{size: size, out: make([]uint8, size*size*3)}
}

// decode reads one JPEG from r, checks that it is AlignedWidth×AlignedHeight,
// and writes its resized, centre-cropped RGB pixels, scaled to [-1, 1], to
// dst (size·size·3 values, HWC).
// The size is read from the header first: the decoder allocates whatever
// the header declares (65000×65000 would be 6 GiB).
func (d *decoder) decode(r io.Reader, dst []float32) error {
	d.file.Reset()
	if n, err := d.file.ReadFrom(io.LimitReader(r, maxJPEGBytes+1)); err != nil {
		return fmt.Errorf("reading JPEG: %w", err)
	} else if n > maxJPEGBytes {
		return fmt.Errorf("file is larger than %d MiB: not an aligned CelebA JPEG", maxJPEGBytes>>20)
	}
	header, err := jpeg.DecodeConfig(bytes.NewReader(d.file.Bytes()))
	if err != nil {
		return fmt.Errorf("decoding JPEG: %w", err)
	}
	if header.Width != AlignedWidth || header.Height != AlignedHeight {
		return fmt.Errorf("image is %d×%d pixels, want %d×%d (aligned CelebA)", header.Width, header.Height, AlignedWidth, AlignedHeight)
	}
	rgb, w, h, err := decodeRGB(bytes.NewReader(d.file.Bytes()), d.rgb)
	d.rgb = rgb
	if err != nil {
		return fmt.Errorf("decoding JPEG: %w", err)
	}
	d.mid = resizeCrop(rgb, w, h, d.size, d.out, d.mid)
	for i, v := range d.out {
		dst[i] = toFloat[v]
	}
	return nil
}
