package lebm

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/edlebm/edlebm/losses"
)

// PriorChainEnergies runs chains independent prior chains of steps steps
// — the generation chains' kernel (Config.GenerationSampler: Langevin,
// MALA or HMC) with their step size (Config.GenerationLangevin) — from N(0, I)
// and returns the full prior energy U(z) of every chain before each step,
// shaped [chain][step] — the raw material of MCMC diagnostics (energy
// profiles, Gelman–Rubin R̂, autocorrelation). The chains advance chunk
// steps per compiled call, so long runs need neither a huge unrolled graph
// nor one call per step.
func (m *Model) PriorChainEnergies(chains, steps, chunk int) (energies [][]float64, err error) {
	defer recoverError(&err, "prior chain diagnostics")
	if chains < 1 || steps < 1 || chunk < 1 || steps%chunk != 0 {
		return nil, fmt.Errorf("lebm: prior chains: chains = %d, steps = %d, chunk = %d: want positive numbers with steps a multiple of chunk", chains, steps, chunk)
	}
	start, advance, err := m.chainGraphs(chains, chunk)
	if err != nil {
		return nil, err
	}
	outs, err := start.Exec()
	if err != nil {
		return nil, err
	}
	z := outs[0]
	energies = make([][]float64, chains)
	for range steps / chunk {
		outs, err := advance.Exec(z)
		if err != nil {
			return nil, err
		}
		z.FinalizeAll()
		z = outs[0]
		trace := flatFloat64s(outs[1])
		outs[1].FinalizeAll()
		for s := range chunk {
			for c := range chains {
				energies[c] = append(energies[c], trace[s*chains+c])
			}
		}
	}
	z.FinalizeAll()
	return energies, nil
}

// chainGraphs returns PriorChainEnergies' graphs for chains chains
// advancing chunk steps a call, created at their first use and kept, so
// that evaluations of many snapshots compile them once.
func (m *Model) chainGraphs(chains, chunk int) (start, advance *context.Exec, err error) {
	if start = m.chainStart[chains]; start == nil {
		if start, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, g *Graph) *Node {
			return BaseSample(ctx, m.cfg, g, chains)
		}); err != nil {
			return nil, nil, err
		}
		m.chainStart[chains] = start
	}
	if advance = m.chainAdvance[chunk]; advance == nil {
		langevin := withSteps(m.cfg.GenerationLangevin, chunk)
		if advance, err = context.NewExec(m.backend, m.ctx, func(ctx *context.Context, z *Node) (*Node, *Node) {
			prior := func(z *Node) *Node { return PriorEnergy(ctx, m.cfg, z) }
			var trace []*Node
			next := z
			if m.cfg.GenerationSampler != SamplerLangevin {
				for range chunk {
					trace = append(trace, prior(next))
					next, _ = GenerationSample(ctx, m.cfg, next, 1)
				}
			} else {
				next = losses.LangevinTrace(ctx, prior, z, langevin, func(_ int, e *Node) { trace = append(trace, e) })
			}
			return StopGradient(next), ConvertDType(Stack(trace, 0), m.cfg.dtype()) // [chunk, chains]
		}); err != nil {
			return nil, nil, err
		}
		m.chainAdvance[chunk] = advance
	}
	return start, advance, nil
}

// flatFloat64s copies a float32 or float64 tensor's values.
func flatFloat64s(t *tensors.Tensor) []float64 {
	var out []float64
	t.MustConstFlatData(func(flat any) {
		switch v := flat.(type) {
		case []float32:
			for _, x := range v {
				out = append(out, float64(x))
			}
		case []float64:
			out = append(out, v...)
		}
	})
	return out
}
