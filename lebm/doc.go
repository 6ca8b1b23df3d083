// Package lebm implements the latent-space energy-based prior model (LEBM) of
// Pang et al. (2020), trained with the prior update of the energy
// discrepancy paper (Schröder et al., NeurIPS 2023): energy discrepancy
// ("ed"), contrastive divergence ("cd", Pang's original) or score matching
// ("sm").
//
// The model has a generator G(z), z ∈ ℝ^nz → images in (−1, 1), with
// Gaussian likelihood p(x|z) = N(G(z), σ²I), and an energy-based prior
//
//	p(z) ∝ exp(−f(z)) · N(0, σ0²I),  U(z) = f(z) + ‖z‖²/(2σ0²),
//
// with f an MLP. The posterior energy of a latent z given an image x is
//
//	U_post(z) = ‖x − G(z)‖²/(2σ²) + U(z),
//
// the squared error summed over the pixels of each example.
//
// One training step (the paper's algorithm) draws z₀ ~ N(0, I), runs
// posterior Langevin dynamics on U_post to get z_post (no gradient flows
// through the chain), then updates the generator with its own Adam on the
// reconstruction loss mean_i ‖x_i − G(z_post,i)‖², and the prior with a
// second Adam on the loss of the chosen method at the same z_post.
//
// The package has two layers:
//
//   - graph-building functions of a *context.Context (Decode, PriorEnergy,
//     PosteriorEnergy, PosteriorSample, PriorSample, Losses, TrainStepGraph,
//     NewOptimizer), which panic on error as GoMLX graph code does; the
//     generator's variables live in scope GeneratorScope and the prior's in
//     PriorScope;
//   - Model, an importable API that compiles those graphs once and returns
//     errors instead of panicking.
//
// Config.TrainingFLOPs and its siblings count the work of a training step
// and of the samplers (convolutions' and matrix products' FLOPs), for
// roofline figures: cmd/bench-lebm prints the rate achieved.
//
// The whole training state lives in the context: both models' variables,
// both optimizers' moments and learning rates, the epoch counter, the global
// step and the random number generator state, as well as the Config, stored
// as context parameters (see Config.SetParams). A GoMLX checkpoint of the
// context is therefore a complete, resumable model.
package lebm
