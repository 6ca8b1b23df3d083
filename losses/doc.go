// Package losses implements the training objectives for energy-based models
// used by this project: energy discrepancy (ED) with Gaussian and Bernoulli
// perturbations, contrastive divergence (CD) with Langevin negatives, and
// score matching (exact Hyvärinen, sliced and denoising).
//
// Every loss takes the energy as an [EnergyFn]: a function from a batch of
// examples [B, ...] to one energy per example [B]. Any GoMLX model fits; a
// model whose variables live in a context should be built with a context that
// allows variable reuse (ctx.Reuse() or ctx.Checked(false)), because some
// losses (CD, Langevin) call the energy more than once in one graph.
//
// Hyperparameters come as small config structs with a Validate method; the
// graph-building functions panic on an invalid config (GoMLX's graph-building
// style), so validate configs where they are read (flags, files) and report
// the error there.
//
// GoMLX's SimpleGo backend has no Pad op, so the gradient of Slice fails on
// it. The losses here therefore never slice a tensor they differentiate
// through; they use masks and reshapes instead.
package losses
