// Package density trains energy-based models of low-dimensional data (the
// paper's 2-D density-estimation experiments) with energy discrepancy, score
// matching or contrastive divergence, and evaluates them: energies on grids,
// Langevin samples and the importance-sampled log-density error.
package density
