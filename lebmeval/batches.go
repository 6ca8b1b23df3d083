package lebmeval

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets"
	"github.com/edlebm/edlebm/internal/progress"
)

// mapBatches runs fn on the first n images of set, batch images at a time
// (the last batch may be smaller), and concatenates its outputs' values,
// printing progress as "what done/n".
func mapBatches(set *datasets.Images, n, batch int, what string, fn func(x *tensors.Tensor) (*tensors.Tensor, error)) ([]float32, error) {
	if n > set.N {
		return nil, fmt.Errorf("%s: %d images requested, %q has %d", what, n, set.Name, set.N)
	}
	size := set.ImageSize()
	var out []float32
	bar := progress.New(what, n)
	for start := 0; start < n; start += batch {
		b := min(batch, n-start)
		x := tensors.FromFlatDataAndDimensions(set.Pixels[start*size:(start+b)*size], b, set.Height, set.Width, set.Channels)
		y, err := fn(x)
		x.FinalizeAll()
		if err != nil {
			return nil, err
		}
		out = append(out, tensors.MustCopyFlatData[float32](y)...)
		y.FinalizeAll()
		bar.Add(b)
	}
	return out, nil
}
