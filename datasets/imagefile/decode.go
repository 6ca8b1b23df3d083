// Package imagefile decodes PNG and JPEG files of any size into the square
// float32 images of datasets.Images, as a PyTorch user's pipeline
// Image.open(f).convert(mode), Resize(S), CenterCrop(S) does it on the PIL
// image.
//
// The image is converted to RGB (three channels) or to grey (one channel)
// first, then resized with antialiased bilinear interpolation so that its
// shorter side is S, and the centred S×S square is kept. The resize
// reproduces Pillow's BILINEAR arithmetic exactly (tent filter of radius
// max(1, scale), two 8-bit passes) and the grey conversion Pillow's
// convert("L") (ITU-R 601-2 luma, L = (19595 R + 38470 G + 7471 B + 2¹⁵) >> 16),
// so results differ from the Python pipeline only where Go's JPEG decoder
// differs from libjpeg's (chroma upsampling, at most a few levels on sharp
// colour edges). Transparency is dropped, as Pillow's convert("RGB") drops
// it; 16-bit PNGs keep their high byte. Pixels are float32 HWC scaled to
// [-1, 1] as v/255·2 − 1.
package imagefile

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // registers JPEG with image.Decode
	_ "image/png"  // registers PNG with image.Decode
	"io"
	"path"
	"strings"
)

// Extensions are the file name endings (lower case) of the formats Decode
// reads.
var Extensions = []string{".png", ".jpg", ".jpeg"}

// IsImageName reports whether a file's name ends in one of Extensions, in
// any case.
func IsImageName(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	for _, e := range Extensions {
		if ext == e {
			return true
		}
	}
	return false
}

// Default bounds of a Decoder: a file larger than DefaultMaxBytes, or whose
// header declares more than DefaultMaxPixels, is refused before it is
// decoded (a header may declare 65000×65000, 12 GiB of RGB).
const (
	DefaultMaxBytes  = 64 << 20
	DefaultMaxPixels = 50_000_000
)

// ErrNotImage marks a file that is neither a PNG nor a JPEG.
var ErrNotImage = errors.New("not a PNG or JPEG file")

// A Decoder turns image files into Size×Size images with Channels channels
// (1 or 3). It keeps scratch buffers between images, so each goroutine
// needs its own.
type Decoder struct {
	// Size is the side S of the output images; Channels is 1 (grey) or 3
	// (RGB).
	Size, Channels int
	// MaxBytes and MaxPixels bound the file and the image its header
	// declares.
	MaxBytes  int64
	MaxPixels int
	// Accept, when set, checks the width and height the header declares
	// before any pixel is decoded; its error is Decode's. When nil, an
	// image whose shorter side is below Size is refused (it would be
	// enlarged).
	Accept func(width, height int) error

	file          bytes.Buffer
	pix, mid, out []uint8
}

// NewDecoder returns a Decoder of size×size images with channels channels
// and the default bounds.
func NewDecoder(size, channels int) *Decoder {
	return &Decoder{Size: size, Channels: channels, MaxBytes: DefaultMaxBytes, MaxPixels: DefaultMaxPixels}
}

// Header reads a file's header and returns its format ("png" or "jpeg")
// and the size it declares, or ErrNotImage.
func Header(r io.Reader) (format string, width, height int, err error) {
	cfg, format, err := image.DecodeConfig(r)
	if errors.Is(err, image.ErrFormat) {
		return "", 0, 0, ErrNotImage
	}
	if err != nil {
		return format, 0, 0, fmt.Errorf("reading the %s header: %w", formatName(format), err)
	}
	return format, cfg.Width, cfg.Height, nil
}

// Decode reads one PNG or JPEG file from r and writes its converted,
// resized and centre-cropped pixels, scaled to [-1, 1], to dst
// (Size·Size·Channels values, HWC). The size is read from the header first
// and checked against the bounds and Accept.
func (d *Decoder) Decode(r io.Reader, dst []float32) error {
	if d.Size < 1 || (d.Channels != 1 && d.Channels != 3) {
		return fmt.Errorf("imagefile: decoder of %d×%d images with %d channels, want a size ≥ 1 and 1 or 3 channels", d.Size, d.Size, d.Channels)
	}
	if want := d.Size * d.Size * d.Channels; len(dst) != want {
		return fmt.Errorf("imagefile: destination of %d values, want %d", len(dst), want)
	}
	d.file.Reset()
	if n, err := d.file.ReadFrom(io.LimitReader(r, d.MaxBytes+1)); err != nil {
		return fmt.Errorf("reading the file: %w", err)
	} else if n > d.MaxBytes {
		return fmt.Errorf("file is larger than %d MiB", d.MaxBytes>>20)
	}
	format, w, h, err := Header(bytes.NewReader(d.file.Bytes()))
	if err != nil {
		return err
	}
	if err := d.Check(w, h); err != nil {
		return err
	}
	img, _, err := image.Decode(bytes.NewReader(d.file.Bytes()))
	if err != nil {
		return fmt.Errorf("decoding %s: %w", formatName(format), err)
	}
	if d.Channels == 1 {
		d.pix = grey(img, d.pix)
	} else {
		d.pix = rgb(img, d.pix)
	}
	d.out = grow(d.out, d.Size*d.Size*d.Channels)
	d.mid = resizeCrop(d.pix, w, h, d.Channels, d.Size, d.out, d.mid)
	for i, v := range d.out {
		dst[i] = toFloat[v]
	}
	return nil
}

// Check reports whether Decode accepts an image of w×h pixels, against the
// bounds and Accept, so that a file's header can be checked long before it
// is decoded.
func (d *Decoder) Check(w, h int) error {
	if w < 1 || h < 1 || w > d.MaxPixels/h {
		return fmt.Errorf("image is %d×%d pixels: more than the %d million a file may have", w, h, d.MaxPixels/1_000_000)
	}
	if d.Accept != nil {
		return d.Accept(w, h)
	}
	if min(w, h) < d.Size {
		return fmt.Errorf("image is %d×%d pixels, smaller than the %d×%d images asked for (enlarge it, allow enlarging, or choose a smaller image size)", w, h, d.Size, d.Size)
	}
	return nil
}

// formatName is how errors name a format.
func formatName(format string) string {
	if format == "" {
		return "image"
	}
	return strings.ToUpper(format)
}

// toFloat maps an 8-bit value v to v/255·2 − 1, the [-1, 1] scale of the
// project's image sets.
var toFloat = func() (table [256]float32) {
	for v := range table {
		table[v] = float32(float64(v)/255*2 - 1)
	}
	return table
}()

// rgb returns img as 8-bit RGB, HWC, in buf (grown as needed); alpha is
// dropped, not composited, as Pillow's convert("RGB") does.
func rgb(img image.Image, buf []uint8) []uint8 {
	b := img.Bounds()
	out := grow(buf, b.Dx()*b.Dy()*3)[:0]
	switch m := img.(type) {
	case *image.YCbCr:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				yi, ci := m.YOffset(x, y), m.COffset(x, y)
				r, g, bl := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				out = append(out, r, g, bl)
			}
		}
	case *image.Gray:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for _, v := range m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)] {
				out = append(out, v, v, v)
			}
		}
	default:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				out = append(out, c.R, c.G, c.B)
			}
		}
	}
	return out
}

// grey returns img as 8-bit grey, HW, in buf (grown as needed): a grey
// image as it is, any other through RGB and Pillow's convert("L") luma.
func grey(img image.Image, buf []uint8) []uint8 {
	b := img.Bounds()
	if m, ok := img.(*image.Gray); ok {
		out := grow(buf, b.Dx()*b.Dy())[:0]
		for y := b.Min.Y; y < b.Max.Y; y++ {
			out = append(out, m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)]...)
		}
		return out
	}
	out := rgb(img, buf)
	for i := range len(out) / 3 {
		out[i] = Luma(out[3*i], out[3*i+1], out[3*i+2])
	}
	return out[:len(out)/3]
}

// Luma is Pillow's grey level of an RGB pixel (its L24 macro): ITU-R 601-2
// weights 0.299, 0.587, 0.114 in 16-bit fixed point, rounded.
func Luma(r, g, b uint8) uint8 {
	return uint8((uint32(r)*19595 + uint32(g)*38470 + uint32(b)*7471 + 0x8000) >> 16)
}
