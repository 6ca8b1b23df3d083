package celeba

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureImage describes one image of the test folder: its file, its split
// code in the partition file, and its pixel colour at (x, y).
type fixtureImage struct {
	file  string
	split int
	at    func(x, y int) color.RGBA
}

func solid(r, g, b uint8) func(x, y int) color.RGBA {
	return func(int, int) color.RGBA { return color.RGBA{r, g, b, 255} }
}

// hRamp and vRamp are grey ramps across the columns and down the rows.
func hRamp(x, _ int) color.RGBA { v := rampLevel(x, AlignedWidth); return color.RGBA{v, v, v, 255} }
func vRamp(_, y int) color.RGBA { v := rampLevel(y, AlignedHeight); return color.RGBA{v, v, v, 255} }

// rampLevel maps position i of n to round(i·255/(n−1)).
func rampLevel(i, n int) uint8 { return uint8((i*255*2 + n - 1) / (2 * (n - 1))) }

// fixture is the test folder: five training images (three solid colours and
// two ramps), two validation and two test images, all 178×218.
var fixture = []fixtureImage{
	{"000001.jpg", 0, solid(200, 30, 60)},
	{"000002.jpg", 0, solid(10, 240, 128)},
	{"000003.jpg", 0, hRamp},
	{"000004.jpg", 0, vRamp},
	{"000005.jpg", 0, solid(128, 128, 128)},
	{"000006.jpg", 1, solid(250, 250, 20)},
	{"000007.jpg", 1, solid(20, 20, 230)},
	{"000008.jpg", 2, solid(90, 60, 30)},
	{"000009.jpg", 2, solid(33, 66, 99)},
}

// attrNames are the 40 attribute names of the test attribute file; two
// carry CelebA's names at CelebA's positions.
var attrNames = func() []string {
	names := make([]string, 40)
	for a := range names {
		names[a] = fmt.Sprintf("Attr%02d", a)
	}
	names[20], names[31] = "Male", "Smiling"
	return names
}()

// attrValue is the value of attribute a for image i (0-based) in the test
// attribute file.
func attrValue(i, a int) int8 {
	if (i+a)%3 == 0 {
		return 1
	}
	return -1
}

// encodeJPEG encodes a w×h image with pixel colours at(x, y) at quality 100.
func encodeJPEG(t testing.TB, w, h int, at func(x, y int) color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, at(x, y))
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// partitionText and attributeText render the fixture's two list files.
func partitionText() string {
	var b strings.Builder
	for _, im := range fixture {
		fmt.Fprintf(&b, "%s %d\n", im.file, im.split)
	}
	return b.String()
}

func attributeText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n%s \n", len(fixture), strings.Join(attrNames, " "))
	for i, im := range fixture {
		b.WriteString(im.file)
		for a := range attrNames {
			fmt.Fprintf(&b, " %2d", attrValue(i, a))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// newFixture writes the fixture into a fresh folder, with the images in
// img_align_celeba/ or, when zipped, in img_align_celeba.zip, and returns
// the folder.
func newFixture(t testing.TB, zipped bool) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, PartitionFile), []byte(partitionText()))
	writeFile(t, filepath.Join(root, AttributeFile), []byte(attributeText()))
	files := make(map[string][]byte)
	for _, im := range fixture {
		files[im.file] = encodeJPEG(t, AlignedWidth, AlignedHeight, im.at)
	}
	writeImages(t, root, zipped, files)
	return root
}

// writeImages stores files (name → contents) in root's image folder, or in
// its zip with the entries under img_align_celeba/ as in the distributed
// archive.
func writeImages(t testing.TB, root string, zipped bool, files map[string][]byte) {
	t.Helper()
	if !zipped {
		for name, data := range files {
			writeFile(t, filepath.Join(root, ImageDir, name), data)
		}
		return
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, im := range fixture {
		data, ok := files[im.file]
		if !ok {
			continue
		}
		w, err := zw.Create(ImageDir + "/" + im.file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ImageZip), buf.Bytes())
}

// level converts an 8-bit level to the [-1, 1] pixel scale.
func level(v float64) float64 { return v/255*2 - 1 }
