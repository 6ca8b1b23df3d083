package testutil

import (
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

// WriteCelebA writes a small CelebA folder into root for command tests:
// the first train images in the training split and the rest in the test
// split, each a 178×218 JPEG of one random-looking colour per 16-pixel
// block, with list_eval_partition.txt and list_attr_celeba.txt giving every
// image attribute attrs[a] the value attr(i, a) (±1).
func WriteCelebA(t testing.TB, root string, n, train int, attrs []string, attr func(i, a int) int8) {
	t.Helper()
	imgDir := filepath.Join(root, "img_align_celeba")
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var partition, attributes strings.Builder
	fmt.Fprintf(&attributes, "%d\n%s\n", n, strings.Join(attrs, " "))
	for i := range n {
		name := fmt.Sprintf("%06d.jpg", i+1)
		img := image.NewRGBA(image.Rect(0, 0, 178, 218))
		for y := range 218 {
			for x := range 178 {
				h := uint32((i+1)*7919 + (x/16)*104729 + (y/16)*1299709)
				img.SetRGBA(x, y, color.RGBA{uint8(h), uint8(h >> 8), uint8(h >> 16), 255})
			}
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(imgDir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		split := 0
		if i >= train {
			split = 2
		}
		fmt.Fprintf(&partition, "%s %d\n", name, split)
		attributes.WriteString(name)
		for a := range attrs {
			fmt.Fprintf(&attributes, " %d", attr(i, a))
		}
		attributes.WriteString("\n")
	}
	for file, text := range map[string]string{"list_eval_partition.txt": partition.String(), "list_attr_celeba.txt": attributes.String()} {
		if err := os.WriteFile(filepath.Join(root, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
