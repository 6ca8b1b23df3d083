package plots

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"
)

// readPNG decodes the PNG file at path.
func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return img
}

// rgbaAt returns the 8-bit colour of img at (x, y).
func rgbaAt(img image.Image, x, y int) color.RGBA {
	return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
}

// checkSize fails the test unless img is w×h pixels.
func checkSize(t *testing.T, img image.Image, w, h int) {
	t.Helper()
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("image size = %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
}

// filled returns n copies of v.
func filled(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// subImage is the part of img within r (a decoded PNG's image types all
// have SubImage).
func subImage(img image.Image, r image.Rectangle) image.Image {
	return img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(r)
}
