package fid

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/datasets"
)

// fidClasses is the output size of the FID network's classifier (fc): the
// 1,008 classes of TF's inception-2015-12-05 graph. torchvision's ImageNet
// Inception v3, whose keys are otherwise the same, has 1,000.
const fidClasses = 1008

// Network is the FID Inception network with its weights, compiled to
// compute pool3 features.
type Network struct {
	divisor int
	ctx     *context.Context
	exec    *context.Exec

	// Progress, when set, is called after each batch with the number of
	// images done and the total.
	Progress func(done, total int)
}

// Load reads a FID Inception state dict from path (pytorch-fid's
// pt_inception-2015-12-05-6726825d.pth, or a narrower network of the same
// structure, its width divisor read from the file) and compiles the network
// on backend. Every tensor the network uses must be in the file with its
// shape; the only other keys allowed are the classifier's (fc.*) and batch
// norm's counters (*.num_batches_tracked).
func Load(backend backends.Backend, path string) (*Network, error) {
	sd, err := ReadStateDict(path)
	if err != nil {
		return nil, err
	}
	n, err := fromStateDict(backend, sd, nil)
	if err != nil {
		return nil, fmt.Errorf("weights file %s: %w", path, err)
	}
	return n, nil
}

// fromStateDict checks sd against the network's layout and builds the
// network from it, with the backend's ops (Pool3) or, for tests, forced.
func fromStateDict(backend backends.Backend, sd StateDict, forced *ops) (*Network, error) {
	d, err := widthDivisorOf(sd)
	if err != nil {
		return nil, err
	}
	want, err := StateDictShapes(d)
	if err != nil {
		return nil, err
	}
	if err := checkLayout(sd, want, d); err != nil {
		return nil, err
	}
	ctx := context.New()
	for key := range want {
		a := sd[key]
		cut := strings.LastIndex(key, ".")
		scope := context.RootScope + strings.ReplaceAll(key[:cut], ".", context.ScopeSeparator)
		ctx.InAbsPath(scope).VariableWithValue(key[cut+1:], tensors.FromFlatDataAndDimensions(a.Data, a.Shape...))
	}
	n := &Network{divisor: d, ctx: ctx}
	n.exec, err = context.NewExec(backend, ctx, func(ctx *context.Context, x *Node) *Node {
		if forced != nil {
			return forced.pool3(ctx, d, x)
		}
		return Pool3(ctx, d, x)
	})
	if err != nil {
		return nil, fmt.Errorf("fid: compiling the network: %w", err)
	}
	return n, nil
}

// widthDivisorOf reads the width divisor from the first convolution's
// output channels (32 in the real network).
func widthDivisorOf(sd StateDict) (int, error) {
	const first = "Conv2d_1a_3x3.conv.weight"
	a, ok := sd[first]
	if !ok {
		return 0, fmt.Errorf("no %q: not an Inception v3 state dict (its keys start %v)", first, head(sd.Keys(), 3))
	}
	if len(a.Shape) != 4 || a.Shape[0] <= 0 || 32%a.Shape[0] != 0 || checkDivisor(32/a.Shape[0]) != nil {
		return 0, fmt.Errorf("%q has shape %v, want [32/d, 3, 3, 3] for d in %v", first, a.Shape, WidthDivisors)
	}
	return 32 / a.Shape[0], nil
}

// checkLayout reports the first missing key, wrong shape or foreign key.
func checkLayout(sd StateDict, want map[string][]int, d int) error {
	for _, key := range sortedKeys(want) {
		a, ok := sd[key]
		if !ok {
			return fmt.Errorf("no %q: not the FID Inception network (width divisor %d)", key, d)
		}
		if !slices.Equal(a.Shape, want[key]) {
			return fmt.Errorf("%q has shape %v, want %v: not the FID Inception network (width divisor %d)", key, a.Shape, want[key], d)
		}
	}
	var foreign []string
	for _, key := range sd.Keys() {
		if _, ok := want[key]; !ok && !strings.HasPrefix(key, "fc.") && !strings.HasSuffix(key, ".num_batches_tracked") {
			foreign = append(foreign, key)
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("%d keys the FID Inception network does not have, e.g. %v (torchvision's Inception v3 has AuxLogits; FID uses pytorch-fid's pt_inception-2015-12-05 weights)", len(foreign), head(foreign, 3))
	}
	if fc, ok := sd["fc.weight"]; ok && len(fc.Shape) == 2 && fc.Shape[0] != fidClasses {
		return fmt.Errorf("\"fc.weight\" has %d classes, want %d: these are not the FID weights (torchvision's ImageNet Inception v3 has 1000 classes and different weights; FID uses pytorch-fid's pt_inception-2015-12-05)", fc.Shape[0], fidClasses)
	}
	return nil
}

func sortedKeys(m map[string][]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func head(s []string, n int) []string { return s[:min(n, len(s))] }

// WidthDivisor is 1 for the real network, more for the narrow test networks.
func (n *Network) WidthDivisor() int { return n.divisor }

// FeatureDim is the dimension of the features (2048 for the real network).
func (n *Network) FeatureDim() int { return FeatureDim(n.divisor) }

// Features computes the pool3 features of every image of set (values in
// [−1, 1], one or three channels, any size), batch images at a time, and
// returns them image after image: set.N·FeatureDim values.
func (n *Network) Features(set *datasets.Images, batch int) ([]float64, error) {
	if set.Channels != 1 && set.Channels != 3 {
		return nil, fmt.Errorf("fid: images %q have %d channels, want 1 or 3", set.Name, set.Channels)
	}
	batches, err := datasets.NewBatches(set, batch, datasets.WithoutShuffle(), datasets.WithPartialBatch())
	if err != nil {
		return nil, fmt.Errorf("fid: %w", err)
	}
	features := make([]float64, 0, set.N*n.FeatureDim())
	for {
		_, inputs, _, err := batches.Yield()
		if errors.Is(err, io.EOF) {
			return features, nil
		}
		if err != nil {
			return nil, fmt.Errorf("fid: %w", err)
		}
		outs, err := n.exec.Exec(inputs[0])
		if err != nil {
			return nil, fmt.Errorf("fid: features of %q: %w", set.Name, err)
		}
		for _, v := range tensors.MustCopyFlatData[float32](outs[0]) {
			features = append(features, float64(v))
		}
		for _, t := range append(outs, inputs...) {
			_ = t.FinalizeAll()
		}
		if n.Progress != nil {
			n.Progress(len(features)/n.FeatureDim(), set.N)
		}
	}
}
