package plots

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"

	"github.com/edlebm/edlebm/atomicfile"
)

// tilePad is the gap, in pixels, between neighbouring tiles of a grid.
const tilePad = 2

// padColor fills the gaps between tiles and any unused tile slots; white
// separates tiles clearly whatever their content.
var padColor = color.RGBA{0xff, 0xff, 0xff, 0xff}

// WriteImageGrid writes n images as one PNG grid with cols tiles per row and
// a 2-pixel white gap between tiles. pixels holds the images in NHWC order
// (n×height×width×channels float32 values) with values in [-1, 1]: -1 is
// black, 1 is full intensity, values outside are clipped and NaN is black.
// channels must be 1 (gray) or 3 (RGB). cols larger than n is reduced to n.
func WriteImageGrid(path string, pixels []float32, n, height, width, channels, cols int) error {
	if err := checkImages(path, "pixels", pixels, n, height, width, channels); err != nil {
		return err
	}
	if cols <= 0 {
		return fmt.Errorf("plots: image grid %s: cols = %d, want > 0", path, cols)
	}
	return writePNG(path, tileGrid(pixels, n, height, width, channels, min(cols, n)))
}

// ImageGrid is WriteImageGrid's picture, returned instead of written (a
// service encodes it into its response).
func ImageGrid(pixels []float32, n, height, width, channels, cols int) (*image.RGBA, error) {
	if err := checkImages("a grid", "pixels", pixels, n, height, width, channels); err != nil {
		return nil, err
	}
	if cols <= 0 {
		return nil, fmt.Errorf("plots: image grid: cols = %d, want > 0", cols)
	}
	return tileGrid(pixels, n, height, width, channels, min(cols, n)), nil
}

// WriteImagePairs writes originals beside their reconstructions as one PNG
// grid: each of the n pairs takes two adjacent tiles, original on the left
// and reconstruction on the right, with cols pairs (2·cols tiles) per row.
// Both slices use the NHWC layout and value convention of [WriteImageGrid];
// cols larger than n is reduced to n.
func WriteImagePairs(path string, originals, reconstructions []float32, n, height, width, channels, cols int) error {
	if err := checkImages(path, "originals", originals, n, height, width, channels); err != nil {
		return err
	}
	if err := checkImages(path, "reconstructions", reconstructions, n, height, width, channels); err != nil {
		return err
	}
	if cols <= 0 {
		return fmt.Errorf("plots: image pairs %s: cols = %d, want > 0", path, cols)
	}
	size := height * width * channels
	interleaved := make([]float32, 0, 2*len(originals))
	for i := range n {
		interleaved = append(interleaved, originals[i*size:(i+1)*size]...)
		interleaved = append(interleaved, reconstructions[i*size:(i+1)*size]...)
	}
	return writePNG(path, tileGrid(interleaved, 2*n, height, width, channels, 2*min(cols, n)))
}

// checkImages validates the shape of an NHWC image batch named name.
func checkImages(path, name string, pixels []float32, n, height, width, channels int) error {
	if n <= 0 || height <= 0 || width <= 0 {
		return fmt.Errorf("plots: images for %s: n, height, width = %d, %d, %d, want all > 0", path, n, height, width)
	}
	if channels != 1 && channels != 3 {
		return fmt.Errorf("plots: images for %s: channels = %d, want 1 or 3", path, channels)
	}
	if want := n * height * width * channels; len(pixels) != want {
		return fmt.Errorf("plots: images for %s: len(%s) = %d, want n*height*width*channels = %d",
			path, name, len(pixels), want)
	}
	return nil
}

// tileGrid lays out n validated NHWC images row by row, cols per row.
func tileGrid(pixels []float32, n, height, width, channels, cols int) *image.RGBA {
	rows := (n + cols - 1) / cols
	img := image.NewRGBA(image.Rect(0, 0, cols*(width+tilePad)-tilePad, rows*(height+tilePad)-tilePad))
	draw.Draw(img, img.Bounds(), image.NewUniform(padColor), image.Point{}, draw.Src)
	for i := range n {
		x0, y0 := (i%cols)*(width+tilePad), (i/cols)*(height+tilePad)
		for y := range height {
			for x := range width {
				p := pixels[((i*height+y)*width+x)*channels:][:channels]
				c := color.RGBA{A: 0xff}
				if channels == 1 {
					c.R = toByte(p[0])
					c.G, c.B = c.R, c.R
				} else {
					c.R, c.G, c.B = toByte(p[0]), toByte(p[1]), toByte(p[2])
				}
				img.SetRGBA(x0+x, y0+y, c)
			}
		}
	}
	return img
}

// toByte maps [-1, 1] linearly onto [0, 255], clipping outside values; NaN
// fails the comparison and becomes 0.
func toByte(v float32) uint8 {
	switch {
	case !(v > -1):
		return 0
	case v >= 1:
		return 0xff
	}
	return uint8(math.Round((float64(v) + 1) * 127.5))
}

// writePNG atomically encodes img as a PNG file at path.
func writePNG(path string, img image.Image) error {
	return atomicfile.Write(path, func(w io.Writer) error { return png.Encode(w, img) })
}
