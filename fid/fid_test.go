package fid

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/internal/testutil"
)

// The fixtures in testdata are written by testdata/make_fixtures.py, an
// independent PyTorch implementation of the network (float64).

const (
	zipWeights    = "testdata/inception-d16.pth"
	legacyWeights = "testdata/inception-d16-legacy.pth"
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestReadStateDictBothFormats(t *testing.T) {
	want, err := StateDictShapes(16)
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := ReadStateDict(zipWeights)
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := ReadStateDict(legacyWeights)
	if err != nil {
		t.Fatal(err)
	}
	for name, sd := range map[string]StateDict{"zip": zipped, "legacy": legacy} {
		// The network's tensors, the classifier's two and a counter per batch norm.
		if got, wantN := len(sd), len(want)+2+len(want)/5; got != wantN {
			t.Errorf("%s: %d keys, want %d", name, got, wantN)
		}
		for key, shape := range want {
			if !slices.Equal(sd[key].Shape, shape) {
				t.Errorf("%s: %s has shape %v, want %v", name, key, sd[key].Shape, shape)
			}
		}
		if c := sd["Mixed_7c.branch_pool.bn.num_batches_tracked"]; len(c.Shape) != 0 || !slices.Equal(c.Data, []float32{1000}) {
			t.Errorf("%s: int64 scalar counter read as %v %v, want [] [1000]", name, c.Shape, c.Data)
		}
		for _, v := range sd["Mixed_6b.branch7x7_2.bn.running_var"].Data {
			if v < 0.5 || v > 1.5 { // the script draws them from U(0.5, 1.5)
				t.Fatalf("%s: running_var value %g outside [0.5, 1.5]", name, v)
			}
		}
	}
	for _, key := range zipped.Keys() {
		if !slices.Equal(zipped[key].Data, legacy[key].Data) {
			t.Fatalf("%s differs between the zip and legacy files", key)
		}
	}
}

func TestStateDictShapesMatchPyTorchFullWidth(t *testing.T) {
	var pytorch map[string][]int
	readJSON(t, "testdata/state-dict-shapes.json", &pytorch)
	got, err := StateDictShapes(1)
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for key, shape := range pytorch {
		if strings.HasPrefix(key, "fc.") || strings.HasSuffix(key, ".num_batches_tracked") {
			continue
		}
		used++
		if !slices.Equal(got[key], shape) {
			t.Errorf("%s: Go %v, PyTorch %v", key, got[key], shape)
		}
	}
	if len(got) != used {
		t.Errorf("Go expects %d tensors, the PyTorch network has %d", len(got), used)
	}
	if got, want := FeatureDim(1), pytorch["fc.weight"][1]; got != want {
		t.Errorf("FeatureDim(1) = %d, the classifier takes %d", got, want)
	}
}

func TestResizeMatchesPyTorch(t *testing.T) {
	var cases []struct {
		In, Out []int
		X, Y    []float64
	}
	readJSON(t, "testdata/resize.json", &cases)
	for _, c := range cases {
		x := testutil.Array{Data: c.X, Dims: []int{c.In[0], c.In[1], c.In[2], 1}} // NCHW with C=1 is NHWC
		got := testutil.Run(t, func(in []*Node) []*Node { return []*Node{Resize(in[0], c.Out[0], c.Out[1])} }, x)[0]
		testutil.AssertAllClose(t, "resize", got, c.Y, 1e-12)
	}
}

// naivePool pools a [h, w] image over 3×3 windows with the given stride
// and padding, looping over the window's pixels inside the image.
func naivePool(x []float64, h, w, stride, pad int, max bool) []float64 {
	ho, wo := (h+2*pad-3)/stride+1, (w+2*pad-3)/stride+1
	var out []float64
	for i := range ho {
		for j := range wo {
			acc, n := math.Inf(-1), 0.0
			if !max {
				acc = 0
			}
			for p := i*stride - pad; p < i*stride-pad+3; p++ {
				for q := j*stride - pad; q < j*stride-pad+3; q++ {
					if p < 0 || q < 0 || p >= h || q >= w {
						continue
					}
					if max {
						acc = math.Max(acc, x[p*w+q])
					} else {
						acc += x[p*w+q]
					}
					n++
				}
			}
			if !max {
				acc /= n
			}
			out = append(out, acc)
		}
	}
	return out
}

func TestPoolsAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const h, w = 7, 6
	// Negative values: a max pool that padded with zeros would show.
	x := testutil.RandomArray(rng, 1, 1, h, w, 1)
	for i := range x.Data {
		x.Data[i] -= 3
	}
	for _, native := range []bool{true, false} {
		for _, c := range []struct {
			kind        poolKind
			stride, pad int
			max         bool
		}{{avgPool3NoPad, 1, 1, false}, {maxPool3s1, 1, 1, true}, {maxPool3s2, 2, 0, true}} {
			got := testutil.Run(t, func(in []*Node) []*Node { return []*Node{ops{native}.pool(c.kind, in[0])} }, x)[0]
			testutil.AssertAllClose(t, fmt.Sprintf("pool %d (native %v)", c.kind, native), got, naivePool(x.Data, h, w, c.stride, c.pad, c.max), 1e-12)
		}
	}
}

// naiveConv convolves NHWC x with the [out, in, kH, kW] kernel by loops.
func naiveConv(x, kernel testutil.Array, c conv) []float64 {
	b, h, w, cin := x.Dims[0], x.Dims[1], x.Dims[2], x.Dims[3]
	ho, wo := (h+2*c.padH-c.kh)/c.stride+1, (w+2*c.padW-c.kw)/c.stride+1
	var out []float64
	for n := range b {
		for i := range ho {
			for j := range wo {
				for o := range c.out {
					sum := 0.0
					for p := range c.kh {
						for q := range c.kw {
							y, xx := i*c.stride-c.padH+p, j*c.stride-c.padW+q
							if y < 0 || xx < 0 || y >= h || xx >= w {
								continue
							}
							for k := range cin {
								sum += x.Data[((n*h+y)*w+xx)*cin+k] * kernel.Data[((o*cin+k)*c.kh+p)*c.kw+q]
							}
						}
					}
					out = append(out, sum)
				}
			}
		}
	}
	return out
}

func TestConvolutionsAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []conv{
		bn("stem", 3, 4, 3, 2, 0), bn("same", 3, 2, 3, 1, 1), bn("five", 2, 3, 5, 1, 2),
		rect("row", 3, 2, 1, 7), rect("column", 3, 2, 7, 1), bn("pointwise", 3, 5, 1, 1, 0),
	} {
		x := testutil.RandomArray(rng, 1, 2, 9, 8, c.in)
		kernel := testutil.RandomArray(rng, 1, c.out, c.in, c.kh, c.kw)
		want := naiveConv(x, kernel, c)
		for _, native := range []bool{true, false} {
			got := testutil.Run(t, func(in []*Node) []*Node {
				if native || (c.kh == 1 && c.kw == 1) {
					return []*Node{ConvGeneral(in[0], in[1], nhwcOIHW, []int{c.stride, c.stride},
						[][2]int{{c.padH, c.padH}, {c.padW, c.padW}}, []int{1, 1}, []int{1, 1}, 1, 1)}
				}
				return []*Node{convGather(in[0], in[1], c)}
			}, x, kernel)[0]
			testutil.AssertAllClose(t, fmt.Sprintf("%s (native %v)", c.name, native), got, want, 1e-12)
		}
	}
}

func TestFeaturesMatchPyTorch(t *testing.T) {
	var ref struct {
		WidthDivisor int `json:"width_divisor"`
		Cases        []struct {
			Dims     []int
			Uint8    []int
			Features []float64
		}
	}
	readJSON(t, "testdata/inception-d16.json", &ref)
	for _, tc := range []struct {
		weights string
		native  bool
	}{{zipWeights, false}, {legacyWeights, false}, {zipWeights, true}} {
		weights := tc.weights
		sd, err := ReadStateDict(weights)
		if err != nil {
			t.Fatal(err)
		}
		net, err := fromStateDict(testutil.Backend(), sd, &ops{native: tc.native})
		if err != nil {
			t.Fatal(err)
		}
		if net.WidthDivisor() != ref.WidthDivisor || net.FeatureDim() != 2048/ref.WidthDivisor {
			t.Fatalf("%s: width divisor %d, feature dim %d; want %d, %d", weights, net.WidthDivisor(), net.FeatureDim(), ref.WidthDivisor, 2048/ref.WidthDivisor)
		}
		for _, c := range ref.Cases {
			set := &datasets.Images{Name: "fixture", N: c.Dims[0], Height: c.Dims[1], Width: c.Dims[2], Channels: c.Dims[3]}
			for _, u := range c.Uint8 {
				set.Pixels = append(set.Pixels, float32(u)/127.5-1)
			}
			calls := 0
			net.Progress = func(done, total int) { calls++ }
			got, err := net.Features(set, 1)
			if err != nil {
				t.Fatal(err)
			}
			if calls != set.N {
				t.Errorf("Progress called %d times for %d batches", calls, set.N)
			}
			// float32 through 94 layers against a float64 reference; with
			// TF32 products (emulated) the largest difference was 0.0045.
			testutil.AssertAllClose(t, weights+" features", got, c.Features, testutil.ProductTol(2e-5, 2e-2))
			worst := 0.0
			for i := range got {
				worst = math.Max(worst, math.Abs(got[i]-c.Features[i]))
			}
			t.Logf("%s (native ops %v), %v images: largest |Go − PyTorch| %.2g over %d features", weights, tc.native, c.Dims, worst, len(got))
		}
	}
}

func TestLoadRejectsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pth")
	if err := os.WriteFile(garbage, []byte("not a pickle"), 0o644); err != nil {
		t.Fatal(err)
	}
	sd, err := ReadStateDict(zipWeights)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(sd StateDict)) StateDict {
		c := StateDict{}
		for k, v := range sd {
			c[k] = v
		}
		f(c)
		return c
	}
	for _, tc := range []struct {
		name, path string
		sd         StateDict
		want       string
	}{
		{name: "missing file", path: filepath.Join(dir, "none.pth"), want: "none.pth"},
		{name: "not torch.save", path: garbage, want: "not a state dict torch.save wrote"},
		{name: "a tensor", path: "testdata/not-a-state-dict.pth", want: "want a state dict"},
		{name: "not Inception", sd: StateDict{"linear.weight": {Shape: []int{2, 2}, Data: make([]float32, 4)}}, want: "not an Inception v3 state dict"},
		{name: "missing key", sd: edit(func(sd StateDict) { delete(sd, "Mixed_6c.branch7x7dbl_4.bn.bias") }), want: `no "Mixed_6c.branch7x7dbl_4.bn.bias"`},
		{name: "wrong shape", sd: edit(func(sd StateDict) {
			sd["Mixed_7b.branch1x1.conv.weight"] = Array{Shape: []int{20, 80, 3, 3}, Data: make([]float32, 20*80*9)}
		}), want: `"Mixed_7b.branch1x1.conv.weight" has shape [20 80 3 3], want [20 80 1 1]`},
		{name: "aux logits", sd: edit(func(sd StateDict) {
			sd["AuxLogits.fc.weight"] = Array{Shape: []int{1000, 48}, Data: make([]float32, 48000)}
		}), want: "AuxLogits"},
		{name: "ImageNet classifier", sd: edit(func(sd StateDict) {
			sd["fc.weight"] = Array{Shape: []int{1000, 128}, Data: make([]float32, 128000)}
		}), want: "1000 classes, want 1008"},
		{name: "odd width", sd: edit(func(sd StateDict) {
			sd["Conv2d_1a_3x3.conv.weight"] = Array{Shape: []int{3, 3, 3, 3}, Data: make([]float32, 81)}
		}), want: "want [32/d, 3, 3, 3]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.sd != nil {
				_, err = fromStateDict(testutil.Backend(), tc.sd, nil)
			} else {
				_, err = Load(testutil.Backend(), tc.path)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestFeaturesRejectsChannels(t *testing.T) {
	net, err := Load(testutil.Backend(), zipWeights)
	if err != nil {
		t.Fatal(err)
	}
	set := &datasets.Images{Name: "rgba", N: 1, Height: 2, Width: 2, Channels: 4, Pixels: make([]float32, 16)}
	if _, err := net.Features(set, 1); err == nil || !strings.Contains(err.Error(), "4 channels") {
		t.Fatalf("got %v, want an error about 4 channels", err)
	}
}
