package imagefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// jpegTol is how far, in 8-bit levels, Go's JPEG round trip of a flat
// colour may land from it.
const jpegTol = 3

// encode returns img as a PNG, or as a JPEG of quality 100.
func encode(t testing.TB, img image.Image, format string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 100})
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// levels maps decoded [-1, 1] pixels back to the 8-bit levels they came
// from.
func levels(pixels []float32) []uint8 {
	out := make([]uint8, len(pixels))
	for i, v := range pixels {
		out[i] = uint8(math.Round((float64(v) + 1) / 2 * 255))
	}
	return out
}

// decode decodes data at the given size and channels, failing the test on
// an error.
func decode(t *testing.T, data []byte, size, channels int) []uint8 {
	t.Helper()
	dst := make([]float32, size*size*channels)
	if err := NewDecoder(size, channels).Decode(bytes.NewReader(data), dst); err != nil {
		t.Fatal(err)
	}
	return levels(dst)
}

// formula is the 45×31 RGB test image, a level any side can compute.
func formula(x, y, c int) uint8 { return uint8((x*37 + y*91 + c*53 + x*y*7) % 256) }

func formulaImage() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 45, 31))
	for y := range 31 {
		for x := range 45 {
			img.SetNRGBA(x, y, color.NRGBA{formula(x, y, 0), formula(x, y, 1), formula(x, y, 2), 255})
		}
	}
	return img
}

// TestDecodeMatchesPillow compares Decode of a PNG with Pillow 9.4.0's
// Image.convert(mode), Resize(16), CenterCrop(16) on the same image,
// recorded in Python (Debian's python3-pil) as
//
//	data = bytes((x*37 + y*91 + c*53 + x*y*7) % 256 for y in range(31) for x in range(45) for c in range(3))
//	img = Image.frombytes("RGB", (45, 31), data).convert(mode)
//	img.resize((23, 16), Image.BILINEAR).crop((4, 0, 20, 16)).tobytes()
//
// The grey case checks the luma weights and their rounding as well as the
// one-channel resize.
func TestDecodeMatchesPillow(t *testing.T) {
	data := encode(t, formulaImage(), "png")
	for _, tc := range []struct {
		mode     string
		channels int
		sha256   string
		head     []uint8
	}{
		{"L", 1, "944dfab520eb6447be259890f71ca73f4a91de49785d5c9df904833b1c677fbe", []uint8{125, 125, 144, 122, 110, 158}},
		{"RGB", 3, "af8fe9858ec1dbe0f18b548a26b9df0c8935b33afd76aaf932a0791f2401a5f2", []uint8{113, 129, 133, 110, 133, 129}},
	} {
		got := decode(t, data, 16, tc.channels)
		sum := sha256.Sum256(got)
		if hex.EncodeToString(sum[:]) != tc.sha256 || !slices.Equal(got[:len(tc.head)], tc.head) {
			t.Errorf("mode %s: output starts %v with SHA-256 %x, want Pillow's %v with %s", tc.mode, got[:len(tc.head)], sum, tc.head, tc.sha256)
		}
	}
}

// TestLuma checks Pillow's fixed-point luma against the ITU-R 601-2
// weights in floating point: equal, or one level apart where the exact
// value is within a rounding step of a half.
func TestLuma(t *testing.T) {
	for r := 0; r < 256; r += 5 {
		for g := 0; g < 256; g += 3 {
			for b := 0; b < 256; b += 7 {
				exact := 0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)
				got := float64(Luma(uint8(r), uint8(g), uint8(b)))
				if d := math.Abs(got - math.Round(exact)); d > 1 || d == 1 && math.Abs(exact-math.Floor(exact)-0.5) > 0.01 {
					t.Fatalf("Luma(%d, %d, %d) = %v, want %.3f rounded", r, g, b, got, exact)
				}
			}
		}
	}
	if got := Luma(255, 0, 0); got != 76 {
		t.Errorf("Luma(255, 0, 0) = %d, want 76 (0.299·255 = 76.2)", got)
	}
}

// TestDecodeColourModels decodes 4×4 images of one colour stored in each
// colour model the PNG and JPEG decoders return, at their own size (no
// resampling), into RGB and grey.
func TestDecodeColourModels(t *testing.T) {
	rect := image.Rect(0, 0, 4, 4)
	fill := func(img interface{ Set(x, y int, c color.Color) }, c color.Color) {
		for y := range 4 {
			for x := range 4 {
				img.Set(x, y, c)
			}
		}
	}
	nrgba := image.NewNRGBA(rect) // half transparent: the colour stays, the alpha goes
	fill(nrgba, color.NRGBA{200, 100, 50, 128})
	grey := image.NewGray(rect)
	fill(grey, color.Gray{70})
	grey16 := image.NewGray16(rect)
	fill(grey16, color.Gray16{0x4bff}) // high byte 75
	paletted := image.NewPaletted(rect, color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{10, 250, 30, 255}})
	fill(paletted, color.RGBA{10, 250, 30, 255})
	rgba := image.NewRGBA(rect)
	fill(rgba, color.RGBA{200, 100, 50, 255})
	tests := []struct {
		name   string
		data   []byte
		rgb    [3]uint8
		tol    float64
		isGrey bool
	}{
		{"PNG NRGBA with alpha 128", encode(t, nrgba, "png"), [3]uint8{200, 100, 50}, 0, false},
		{"PNG grey", encode(t, grey, "png"), [3]uint8{70, 70, 70}, 0, true},
		{"PNG 16-bit grey", encode(t, grey16, "png"), [3]uint8{75, 75, 75}, 0, true},
		{"PNG paletted", encode(t, paletted, "png"), [3]uint8{10, 250, 30}, 0, false},
		{"JPEG colour (YCbCr)", encode(t, rgba, "jpeg"), [3]uint8{200, 100, 50}, jpegTol, false},
		{"JPEG grey", encode(t, grey, "jpeg"), [3]uint8{70, 70, 70}, jpegTol, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, v := range decode(t, tc.data, 4, 3) {
				if math.Abs(float64(v)-float64(tc.rgb[i%3])) > tc.tol {
					t.Fatalf("RGB value %d at %d, want %d ± %v", v, i, tc.rgb[i%3], tc.tol)
				}
			}
			wantGrey := float64(Luma(tc.rgb[0], tc.rgb[1], tc.rgb[2]))
			if tc.isGrey {
				wantGrey = float64(tc.rgb[0])
			}
			for i, v := range decode(t, tc.data, 4, 1) {
				if math.Abs(float64(v)-wantGrey) > tc.tol+1 && tc.tol > 0 || tc.tol == 0 && float64(v) != wantGrey {
					t.Fatalf("grey value %d at %d, want %v ± %v", v, i, wantGrey, tc.tol)
				}
			}
		})
	}
}

// withDeclaredSize returns the JPEG data with the frame header (SOF0)
// declaring w×h pixels instead of its real size.
func withDeclaredSize(t *testing.T, data []byte, w, h int) []byte {
	t.Helper()
	out := bytes.Clone(data)
	i := bytes.Index(out, []byte{0xff, 0xc0})
	if i < 0 || i+9 > len(out) {
		t.Fatal("no baseline frame header in the JPEG")
	}
	// FF C0, length (2), precision (1), height (2), width (2).
	binary.BigEndian.PutUint16(out[i+5:], uint16(h))
	binary.BigEndian.PutUint16(out[i+7:], uint16(w))
	return out
}

// TestDecodeErrors hands the decoder files it must refuse, among them a
// 65000×65000 header on a small JPEG, and checks the error and that no
// more than a few MiB were allocated: the declared size is refused before
// any pixel buffer exists.
func TestDecodeErrors(t *testing.T) {
	rgba := image.NewRGBA(image.Rect(0, 0, 40, 30))
	good := encode(t, rgba, "jpeg")
	goodPNG := encode(t, rgba, "png")
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"header declaring 65000×65000", withDeclaredSize(t, good, 65000, 65000), "image is 65000×65000 pixels: more than the 50 million"},
		{"smaller than the size asked for", encode(t, image.NewRGBA(image.Rect(0, 0, 40, 15)), "png"), "image is 40×15 pixels, smaller than the 16×16 images"},
		{"file over the size bound", append(bytes.Clone(good), make([]byte, DefaultMaxBytes)...), "larger than 64 MiB"},
		{"not an image", []byte("GIF89a, or a text file"), ErrNotImage.Error()},
		{"truncated PNG", goodPNG[:len(goodPNG)/2], "decoding PNG"},
		{"truncated JPEG", good[:len(good)/2], "JPEG"},
		{"empty file", nil, ErrNotImage.Error()},
	}
	d := NewDecoder(16, 3)
	dst := make([]float32, 16*16*3)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := d.Decode(bytes.NewReader(tc.data), dst)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode: error %v, want one saying %q", err, tc.want)
			}
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 4*uint64(len(tc.data))+16<<20 { // the file is read whole, then only what its header declares
				t.Errorf("Decode allocated %d MiB for a %d-byte file", allocated>>20, len(tc.data))
			}
		})
	}
	if err := d.Decode(bytes.NewReader(good), dst); err != nil {
		t.Errorf("decoding a good image after the bad ones: %v", err)
	}
	if err := d.Decode(bytes.NewReader(good), dst[1:]); err == nil || !strings.Contains(err.Error(), "destination of 767 values, want 768") {
		t.Errorf("short destination: error %v", err)
	}
	if _, _, _, err := Header(bytes.NewReader([]byte("plain text"))); !errors.Is(err, ErrNotImage) {
		t.Errorf("Header of text: %v, want ErrNotImage", err)
	}
}

// TestDecodeAccept checks that an Accept function replaces the default
// size rule and sees the declared size.
func TestDecodeAccept(t *testing.T) {
	data := encode(t, image.NewRGBA(image.Rect(0, 0, 12, 10)), "png")
	d := NewDecoder(16, 3) // 10 < 16: the default rule would refuse it
	var seen [2]int
	d.Accept = func(w, h int) error { seen = [2]int{w, h}; return nil }
	if err := d.Decode(bytes.NewReader(data), make([]float32, 16*16*3)); err != nil {
		t.Errorf("Accept allowing the image: %v", err)
	}
	if seen != [2]int{12, 10} {
		t.Errorf("Accept saw %v, want 12×10", seen)
	}
	d.Accept = func(w, h int) error { return errors.New("not 178×218") }
	if err := d.Decode(bytes.NewReader(data), make([]float32, 16*16*3)); err == nil || err.Error() != "not 178×218" {
		t.Errorf("Accept refusing the image: error %v", err)
	}
}

func TestIsImageName(t *testing.T) {
	for name, want := range map[string]bool{
		"a.png": true, "b.JPG": true, "dir/c.jpeg": true, "d.Jpeg": true,
		"e.gif": false, "png": false, "f.png.txt": false, ".DS_Store": false,
	} {
		if got := IsImageName(name); got != want {
			t.Errorf("IsImageName(%q) = %v, want %v", name, got, want)
		}
	}
}
