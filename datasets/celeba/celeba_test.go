package celeba

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/datasets/imagefile"
)

// jpegTol is the largest difference, in 8-bit levels, allowed between a
// decoded pixel and the colour that was encoded at quality 100.
const jpegTol = 3

func loadOK(t *testing.T, root string, opts Options) *datasets.Images {
	t.Helper()
	im, err := Load(root, opts)
	if err != nil {
		t.Fatalf("Load(%+v): %v", opts, err)
	}
	if err := im.Validate(); err != nil {
		t.Fatal(err)
	}
	return im
}

func TestLoadSolidColours(t *testing.T) {
	root := newFixture(t, false)
	for _, size := range []int{64, 128} {
		for _, split := range []string{"train", "valid", "test"} {
			im := loadOK(t, root, Options{Size: size, Split: split, Limit: -1})
			if im.Height != size || im.Width != size || im.Channels != 3 || im.Labels != nil {
				t.Fatalf("%s: shape %v, labels %v; want [N %d %d 3], no labels", im.Name, im.Shape(), im.Labels, size, size)
			}
			files, err := SplitFiles(root, Options{Size: size, Split: split, Limit: -1})
			if err != nil {
				t.Fatal(err)
			}
			for i, file := range files {
				var fx fixtureImage
				for _, f := range fixture {
					if f.file == file {
						fx = f
					}
				}
				if fx.at(0, 0) != fx.at(AlignedWidth-1, AlignedHeight-1) {
					continue // a ramp
				}
				c := fx.at(0, 0)
				want := []float64{level(float64(c.R)), level(float64(c.G)), level(float64(c.B))}
				for p, v := range im.Image(i) {
					if d := math.Abs(float64(v) - want[p%3]); d > jpegTol*2.0/255 {
						t.Fatalf("%s image %d (%s): value %v at flat index %d, want %v ± %d levels",
							im.Name, i, file, v, p, want[p%3], jpegTol)
					}
				}
			}
		}
	}
}

// TestLoadRamps checks the geometry of the resize and crop on grey ramps:
// output pixel (y, x) must show the ramp's level at the centre of the
// source area it covers. The 178×218 image is resized to S×H with
// H = ⌊218·S/178⌋ and cropped by top = (H − S)/2 rows, so output column x is
// centred on source column (x + ½)·178/S − ½ and output row y on source row
// (y + top + ½)·218/H − ½ (the truncation of H stretches rows slightly more
// than columns). An off-by-one crop would move a row by 218/H source rows,
// 218/H·255/217 ≥ 1.63 levels, beyond the tolerance.
func TestLoadRamps(t *testing.T) {
	root := newFixture(t, false)
	const tol = 1.2 // levels: JPEG error, two roundings and the tent's slight asymmetry
	for _, tc := range []struct {
		size, height, top int
	}{
		{64, 78, 7},    // 218·64/178 = 78.4 → 78 rows, (78−64)/2 = 7
		{128, 156, 14}, // 218·128/178 = 156.8 → 156 rows, (156−128)/2 = 14
	} {
		im := loadOK(t, root, Options{Size: tc.size, Split: "train", Limit: -1})
		s := tc.size
		rx := float64(AlignedWidth) / float64(s)
		ry := float64(AlignedHeight) / float64(tc.height)
		slope := func(n int) float64 { return 255 / float64(n-1) }
		for y := range s {
			for x := range s {
				srcX := (float64(x)+0.5)*rx - 0.5
				srcY := (float64(y+tc.top)+0.5)*ry - 0.5
				// Columns within the tent's radius of an edge average a
				// truncated neighbourhood; skip them.
				edge := x < 2 || x >= s-2
				for _, c := range []struct {
					image int
					want  float64
					skip  bool
				}{
					{2, srcX * slope(AlignedWidth), edge},   // 000003.jpg, left-right ramp
					{3, srcY * slope(AlignedHeight), false}, // 000004.jpg, top-bottom ramp
				} {
					if c.skip {
						continue
					}
					got := (float64(im.Image(c.image)[(y*s+x)*3]) + 1) / 2 * 255
					if math.Abs(got-c.want) > tol {
						t.Fatalf("size %d, image %d, pixel (%d, %d): level %.2f, want %.2f ± %v",
							s, c.image, y, x, got, c.want, tol)
					}
				}
			}
		}
	}
}

func TestSplitsAndLimit(t *testing.T) {
	root := newFixture(t, false)
	tests := []struct {
		split string
		limit int
		want  []string
	}{
		{"train", -1, []string{"000001.jpg", "000002.jpg", "000003.jpg", "000004.jpg", "000005.jpg"}},
		{"train", 2, []string{"000001.jpg", "000002.jpg"}},
		{"train", 5, []string{"000001.jpg", "000002.jpg", "000003.jpg", "000004.jpg", "000005.jpg"}},
		{"valid", 0, []string{"000006.jpg", "000007.jpg"}},
		{"valid", 1, []string{"000006.jpg"}},
		{"test", 0, []string{"000008.jpg", "000009.jpg"}},
		{"test", -3, []string{"000008.jpg", "000009.jpg"}},
	}
	all := map[string]*datasets.Images{}
	for _, split := range []string{"train", "valid", "test"} {
		all[split] = loadOK(t, root, Options{Size: 64, Split: split, Limit: -1})
	}
	for _, tc := range tests {
		opts := Options{Size: 64, Split: tc.split, Limit: tc.limit}
		files, err := SplitFiles(root, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(files, tc.want) {
			t.Errorf("SplitFiles(%+v) = %v, want %v", opts, files, tc.want)
		}
		im := loadOK(t, root, opts)
		if im.Name != "celeba64/"+tc.split || im.N != len(tc.want) {
			t.Errorf("Load(%+v): %q with %d images, want %q with %d", opts, im.Name, im.N, "celeba64/"+tc.split, len(tc.want))
		}
		// A limited set is the prefix of the whole split.
		if !slices.Equal(im.Pixels, all[tc.split].Pixels[:len(im.Pixels)]) {
			t.Errorf("Load(%+v): pixels differ from the first %d images of the split", opts, im.N)
		}
	}
}

// TestLoadSources checks that the zip and the folder give the same pixels,
// whatever the number of workers.
func TestLoadSources(t *testing.T) {
	dir, zipped := newFixture(t, false), newFixture(t, true)
	want := loadOK(t, dir, Options{Size: 64, Split: "train", Limit: -1, Workers: 1})
	for _, tc := range []struct {
		root    string
		workers int
	}{{dir, 3}, {dir, 8}, {zipped, 1}, {zipped, 3}} {
		im := loadOK(t, tc.root, Options{Size: 64, Split: "train", Limit: -1, Workers: tc.workers})
		if !slices.Equal(im.Pixels, want.Pixels) {
			t.Errorf("root %s with %d workers: pixels differ from the folder read by one worker", tc.root, tc.workers)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		zipped  bool
		opts    Options
		modify  func(t *testing.T, root string)
		wantErr []string // substrings of the error
	}{
		{"size", false, Options{Size: 32, Split: "train", Limit: -1}, nil, []string{"image size 32"}},
		{"split", false, Options{Size: 64, Split: "dev"}, nil, []string{`split "dev"`}},
		{"workers", false, Options{Size: 64, Split: "test", Workers: -1}, nil, []string{"-1 workers"}},
		{"limit beyond split", false, Options{Size: 64, Split: "train", Limit: 6}, nil,
			[]string{PartitionFile, "5 train images, fewer than the 6 requested"}},
		{"default train limit", false, Options{Size: 64, Split: "train"}, nil,
			[]string{"fewer than the 40000 requested"}},
		{"missing partition", false, Options{Size: 64, Split: "test"}, func(t *testing.T, root string) {
			remove(t, filepath.Join(root, PartitionFile))
		}, []string{PartitionFile, "is missing"}},
		{"short partition line", false, Options{Size: 64, Split: "test"}, func(t *testing.T, root string) {
			edit(t, filepath.Join(root, PartitionFile), "000003.jpg 0\n", "000003.jpg\n")
		}, []string{PartitionFile, "line 3: 1 fields"}},
		{"bad split code", false, Options{Size: 64, Split: "test"}, func(t *testing.T, root string) {
			edit(t, filepath.Join(root, PartitionFile), "000002.jpg 0", "000002.jpg 7")
		}, []string{PartitionFile, `line 2: split "7"`}},
		{"bad image name", false, Options{Size: 64, Split: "test"}, func(t *testing.T, root string) {
			edit(t, filepath.Join(root, PartitionFile), "000002.jpg 0", "../x.jpg 0")
		}, []string{PartitionFile, `line 2: image name "../x.jpg"`}},
		{"duplicate partition line", false, Options{Size: 64, Split: "test"}, func(t *testing.T, root string) {
			edit(t, filepath.Join(root, PartitionFile), "000002.jpg 0", "000001.jpg 0")
		}, []string{"line 2: image 000001.jpg already listed on line 1"}},
		{"empty split", false, Options{Size: 64, Split: "test"}, func(t *testing.T, root string) {
			edit(t, filepath.Join(root, PartitionFile), "000008.jpg 2\n000009.jpg 2\n", "")
		}, []string{PartitionFile, "lists no test images"}},
		{"missing image", false, Options{Size: 64, Split: "valid"}, func(t *testing.T, root string) {
			remove(t, filepath.Join(root, ImageDir, "000007.jpg"))
		}, []string{"lists image 000007.jpg", ImageDir + " does not hold"}},
		{"missing image in zip", true, Options{Size: 64, Split: "valid"}, func(t *testing.T, root string) {
			files := map[string][]byte{}
			for _, im := range fixture[:6] {
				files[im.file] = encodeJPEG(t, AlignedWidth, AlignedHeight, im.at)
			}
			writeImages(t, root, true, files)
		}, []string{"lists image 000007.jpg", ImageZip + " does not hold"}},
		{"no images", false, Options{Size: 64, Split: "valid"}, func(t *testing.T, root string) {
			if err := os.RemoveAll(filepath.Join(root, ImageDir)); err != nil {
				t.Fatal(err)
			}
		}, []string{"neither the folder", ImageZip}},
		{"corrupt image", false, Options{Size: 64, Split: "train", Limit: -1}, func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, ImageDir, "000002.jpg"), []byte("not a JPEG"))
		}, []string{filepath.Join(ImageDir, "000002.jpg"), imagefile.ErrNotImage.Error()}},
		{"truncated image in zip", true, Options{Size: 64, Split: "test"}, func(t *testing.T, root string) {
			data := encodeJPEG(t, AlignedWidth, AlignedHeight, fixture[8].at)
			writeImages(t, root, true, map[string][]byte{
				"000008.jpg": encodeJPEG(t, AlignedWidth, AlignedHeight, fixture[7].at),
				"000009.jpg": data[:len(data)/2],
			})
		}, []string{ImageZip + ":" + ImageDir + "/000009.jpg", "decoding JPEG"}},
		{"wrong size", false, Options{Size: 64, Split: "train", Limit: -1}, func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, ImageDir, "000004.jpg"), encodeJPEG(t, 100, 120, solid(1, 2, 3)))
		}, []string{"000004.jpg", "image is 100×120 pixels, want 178×218"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := newFixture(t, tc.zipped)
			if tc.modify != nil {
				tc.modify(t, root)
			}
			im, err := Load(root, tc.opts)
			if err == nil {
				t.Fatalf("Load succeeded with %d images, want an error", im.N)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// edit replaces the single occurrence of old in the file at path by new.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), old) != 1 {
		t.Fatalf("%s: %q occurs %d times, want once", path, old, strings.Count(string(data), old))
	}
	writeFile(t, path, []byte(strings.Replace(string(data), old, new, 1)))
}
