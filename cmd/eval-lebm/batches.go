package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/datasets"
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
		progress(what, start, start+b, n)
	}
	return out, nil
}

// progressOut receives progress reports; progressInPlace is whether it is
// a terminal, where they can be redrawn in place.
var (
	progressOut     io.Writer = os.Stdout
	progressInPlace           = func() bool {
		info, err := os.Stdout.Stat()
		return err == nil && info.Mode()&os.ModeCharDevice != 0
	}()
)

// progress reports "what done/n", done having been before at prev: redrawn
// in place on a terminal, and in a log file a line at each tenth of the way
// (a carriage return there would run every report into one line).
func progress(what string, prev, done, n int) {
	switch {
	case progressInPlace:
		fmt.Fprintf(progressOut, "\r%s %d/%d", what, done, n)
		if done == n {
			fmt.Fprintln(progressOut)
		}
	case done == n || tenth(done, n) > tenth(prev, n):
		fmt.Fprintf(progressOut, "%s %d/%d\n", what, done, n)
	}
}

// tenth is how many tenths of n done reaches.
func tenth(done, n int) int { return 10 * done / max(n, 1) }
