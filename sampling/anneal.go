package sampling

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/internal/rngstate"
)

// AnnealBlock builds one block of annealed importance sampling: from the
// chains x [C, ...] and their log weights logW (float64 [C]) through the
// temperatures betas[1:] (float64; betas[0] is the previous block's
// last), it returns the new chains, the new log weights and the block's
// mean acceptance (a float64 scalar).
type AnnealBlock func(ctx *context.Context, x, logW, betas *Node) (next, nextLogW, acceptance *Node)

// annealBlockSize is the number of temperatures one graph execution
// covers: GoMLX has no loop op, so each block is unrolled.
const annealBlockSize = 10

// Anneal runs annealed importance sampling's loop over temperatures
// equally spaced in β from 0 to 1, one compiled block of ten at a time (a
// last, shorter block padded with β = 1: no weight, and transitions that
// keep the target itself invariant), from the chains x0. It returns the
// final chains, each chain's log weight and the mean acceptance. The
// blocks run with ctx's random stream seeded from seed, and the stream is
// put back afterwards, so that training that goes on draws what it would
// have drawn.
func Anneal(backend backends.Backend, ctx *context.Context, x0 *tensors.Tensor, temperatures int, seed int64, block AnnealBlock) (x *tensors.Tensor, logWeights []float64, acceptance float64, err error) {
	if temperatures < 1 {
		return nil, nil, 0, fmt.Errorf("AIS temperatures = %d: must be ≥ 1", temperatures)
	}
	chains := x0.Shape().Dimensions[0]
	err = rngstate.Aside(ctx, func() error {
		if err := ctx.SetRNGStateFromSeed(seed); err != nil {
			return err
		}
		exec, err := context.NewExec(backend, ctx, func(ctx *context.Context, x, logW, betas *Node) (*Node, *Node, *Node) {
			return block(ctx, x, logW, betas)
		})
		if err != nil {
			return err
		}
		x = x0
		logW := tensors.FromFlatDataAndDimensions(make([]float64, chains), chains)
		accepted, blocks := 0.0, 0
		for k := 0; k < temperatures; k += annealBlockSize {
			betas := make([]float64, annealBlockSize+1)
			for i := range betas {
				betas[i] = min(float64(k+i)/float64(temperatures), 1)
			}
			out, err := exec.Exec(x, logW, betas)
			if err != nil {
				return err
			}
			x, logW = out[0], out[1]
			accepted += tensors.ToScalar[float64](out[2])
			blocks++
		}
		logWeights = tensors.MustCopyFlatData[float64](logW)
		acceptance = accepted / float64(blocks)
		return nil
	})
	if err != nil {
		return nil, nil, 0, err
	}
	return x, logWeights, acceptance, nil
}

// LogZ is the AIS estimate of log Z from the chains' log weights, the log
// of their mean weight, with its 95 % bootstrap interval (1,000
// resamplings seeded by seed). A weight that is not finite is an error
// naming its chain.
func LogZ(logWeights []float64, seed int64) (float64, eval.Interval, error) {
	for c, w := range logWeights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return 0, eval.Interval{}, fmt.Errorf("chain %d's log weight is %v: the energy is not finite on the annealing path", c, w)
		}
	}
	iv, err := eval.LogMeanExpInterval(logWeights, 1000, uint64(seed))
	return eval.LogMeanExp(logWeights), iv, err
}
