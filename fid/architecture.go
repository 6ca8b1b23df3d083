package fid

import "fmt"

// The network is described as data, so that one description serves the
// graph (pool3) and the state dict it expects (StateDictShapes).

// conv is a BasicConv2d: convolution without bias, batch norm (eps 0.001),
// ReLU. Its state-dict keys are NAME.conv.weight and NAME.bn.*.
type conv struct {
	name               string
	in, out            int
	kh, kw             int
	stride, padH, padW int
}

// poolKind is the pooling that starts a branch.
type poolKind int

const (
	noPool        poolKind = iota
	maxPool3s2             // 3×3 max pool, stride 2, no padding
	avgPool3NoPad          // 3×3 average pool, stride 1, padding 1 not counted (TF's)
	maxPool3s1             // 3×3 max pool, stride 1, padding 1 (FID's Mixed_7c)
)

// branch is one path of an Inception block: an optional pool, a chain of
// convolutions, then optionally parallel heads whose outputs are
// concatenated (the E blocks' 1×3 / 3×1 pairs).
type branch struct {
	pool  poolKind
	convs []conv
	heads []conv
}

// block is a named Inception block; its branches' outputs are concatenated
// along channels in order.
type block struct {
	name     string
	branches []branch
}

// bn builds a conv spec with square kernel k and symmetric padding.
func bn(name string, in, out, k, stride, pad int) conv {
	return conv{name: name, in: in, out: out, kh: k, kw: k, stride: stride, padH: pad, padW: pad}
}

// rect builds a stride-1 conv spec with a kh×kw kernel and "same" padding.
func rect(name string, in, out, kh, kw int) conv {
	return conv{name: name, in: in, out: out, kh: kh, kw: kw, stride: 1, padH: kh / 2, padW: kw / 2}
}

// stem returns the convolutions before Mixed_5b; max pools (3×3, stride 2)
// follow Conv2d_2b_3x3 and Conv2d_4a_3x3.
func stem(d int) []conv {
	return []conv{
		bn("Conv2d_1a_3x3", 3, 32/d, 3, 2, 0),
		bn("Conv2d_2a_3x3", 32/d, 32/d, 3, 1, 0),
		bn("Conv2d_2b_3x3", 32/d, 64/d, 3, 1, 1),
		bn("Conv2d_3b_1x1", 64/d, 80/d, 1, 1, 0),
		bn("Conv2d_4a_3x3", 80/d, 192/d, 3, 1, 0),
	}
}

// inceptionA is torchvision's InceptionA with FID's uncounted-padding pool.
func inceptionA(name string, in, poolFeatures, d int) block {
	return block{name, []branch{
		{convs: []conv{bn("branch1x1", in, 64/d, 1, 1, 0)}},
		{convs: []conv{bn("branch5x5_1", in, 48/d, 1, 1, 0), bn("branch5x5_2", 48/d, 64/d, 5, 1, 2)}},
		{convs: []conv{bn("branch3x3dbl_1", in, 64/d, 1, 1, 0), bn("branch3x3dbl_2", 64/d, 96/d, 3, 1, 1), bn("branch3x3dbl_3", 96/d, 96/d, 3, 1, 1)}},
		{pool: avgPool3NoPad, convs: []conv{bn("branch_pool", in, poolFeatures, 1, 1, 0)}},
	}}
}

// inceptionB is torchvision's InceptionB (grid reduction 35 → 17).
func inceptionB(name string, in, d int) block {
	return block{name, []branch{
		{convs: []conv{bn("branch3x3", in, 384/d, 3, 2, 0)}},
		{convs: []conv{bn("branch3x3dbl_1", in, 64/d, 1, 1, 0), bn("branch3x3dbl_2", 64/d, 96/d, 3, 1, 1), bn("branch3x3dbl_3", 96/d, 96/d, 3, 2, 0)}},
		{pool: maxPool3s2},
	}}
}

// inceptionC is torchvision's InceptionC with FID's uncounted-padding pool.
func inceptionC(name string, in, c7, d int) block {
	return block{name, []branch{
		{convs: []conv{bn("branch1x1", in, 192/d, 1, 1, 0)}},
		{convs: []conv{bn("branch7x7_1", in, c7, 1, 1, 0), rect("branch7x7_2", c7, c7, 1, 7), rect("branch7x7_3", c7, 192/d, 7, 1)}},
		{convs: []conv{
			bn("branch7x7dbl_1", in, c7, 1, 1, 0), rect("branch7x7dbl_2", c7, c7, 7, 1), rect("branch7x7dbl_3", c7, c7, 1, 7),
			rect("branch7x7dbl_4", c7, c7, 7, 1), rect("branch7x7dbl_5", c7, 192/d, 1, 7),
		}},
		{pool: avgPool3NoPad, convs: []conv{bn("branch_pool", in, 192/d, 1, 1, 0)}},
	}}
}

// inceptionD is torchvision's InceptionD (grid reduction 17 → 8).
func inceptionD(name string, in, d int) block {
	return block{name, []branch{
		{convs: []conv{bn("branch3x3_1", in, 192/d, 1, 1, 0), bn("branch3x3_2", 192/d, 320/d, 3, 2, 0)}},
		{convs: []conv{
			bn("branch7x7x3_1", in, 192/d, 1, 1, 0), rect("branch7x7x3_2", 192/d, 192/d, 1, 7),
			rect("branch7x7x3_3", 192/d, 192/d, 7, 1), bn("branch7x7x3_4", 192/d, 192/d, 3, 2, 0),
		}},
		{pool: maxPool3s2},
	}}
}

// inceptionE is torchvision's InceptionE with FID's pool: uncounted-padding
// average (Mixed_7b) or max (Mixed_7c).
func inceptionE(name string, in, d int, pool poolKind) block {
	return block{name, []branch{
		{convs: []conv{bn("branch1x1", in, 320/d, 1, 1, 0)}},
		{convs: []conv{bn("branch3x3_1", in, 384/d, 1, 1, 0)},
			heads: []conv{rect("branch3x3_2a", 384/d, 384/d, 1, 3), rect("branch3x3_2b", 384/d, 384/d, 3, 1)}},
		{convs: []conv{bn("branch3x3dbl_1", in, 448/d, 1, 1, 0), bn("branch3x3dbl_2", 448/d, 384/d, 3, 1, 1)},
			heads: []conv{rect("branch3x3dbl_3a", 384/d, 384/d, 1, 3), rect("branch3x3dbl_3b", 384/d, 384/d, 3, 1)}},
		{pool: pool, convs: []conv{bn("branch_pool", in, 192/d, 1, 1, 0)}},
	}}
}

// mixed returns Mixed_5b … Mixed_7c of the FID Inception network with
// channel counts divided by d.
func mixed(d int) []block {
	return []block{
		inceptionA("Mixed_5b", 192/d, 32/d, d),
		inceptionA("Mixed_5c", 256/d, 64/d, d),
		inceptionA("Mixed_5d", 288/d, 64/d, d),
		inceptionB("Mixed_6a", 288/d, d),
		inceptionC("Mixed_6b", 768/d, 128/d, d),
		inceptionC("Mixed_6c", 768/d, 160/d, d),
		inceptionC("Mixed_6d", 768/d, 160/d, d),
		inceptionC("Mixed_6e", 768/d, 192/d, d),
		inceptionD("Mixed_7a", 768/d, d),
		inceptionE("Mixed_7b", 1280/d, d, avgPool3NoPad),
		inceptionE("Mixed_7c", 2048/d, d, maxPool3s1),
	}
}

// WidthDivisors are the divisors every channel count of the network is
// divisible by: 1 is the real network; the others make small networks of
// the same structure for tests.
var WidthDivisors = []int{1, 2, 4, 8, 16}

func checkDivisor(d int) error {
	for _, ok := range WidthDivisors {
		if d == ok {
			return nil
		}
	}
	return fmt.Errorf("width divisor %d: want one of %v", d, WidthDivisors)
}

// FeatureDim is the dimension of the pool3 features with width divisor d
// (2048 for the real network).
func FeatureDim(d int) int { return 2048 / d }

// StateDictShapes returns the shape of every tensor the pool3 features use,
// keyed as in the PyTorch state dict, for width divisor d. A real weights
// file also holds the classifier (fc.*) and possibly batch-norm counters
// (*.num_batches_tracked), which FID does not use.
func StateDictShapes(d int) (map[string][]int, error) {
	if err := checkDivisor(d); err != nil {
		return nil, err
	}
	shapes := map[string][]int{}
	add := func(prefix string, c conv) {
		p := prefix + c.name
		shapes[p+".conv.weight"] = []int{c.out, c.in, c.kh, c.kw}
		for _, v := range []string{"weight", "bias", "running_mean", "running_var"} {
			shapes[p+".bn."+v] = []int{c.out}
		}
	}
	for _, c := range stem(d) {
		add("", c)
	}
	for _, b := range mixed(d) {
		for _, br := range b.branches {
			for _, c := range append(append([]conv{}, br.convs...), br.heads...) {
				add(b.name+".", c)
			}
		}
	}
	return shapes, nil
}
