// Package eval holds the evaluation metrics of the latent-EBM experiments,
// in plain Go on float64 values:
//
//   - AUPRC, the area under the precision–recall curve used for MNIST
//     anomaly detection (average precision, anomalies as positives);
//   - FrechetDistance and GaussianStats, the Fréchet distance between
//     Gaussians fitted to feature vectors, which is FID when the features
//     are Inception pool3 activations;
//   - SaveStats and LoadStats, a small checksummed file format for caching
//     the Gaussian statistics of a data set;
//   - GelmanRubin, SplitGelmanRubin and Autocorrelation, convergence and
//     mixing diagnostics for long MCMC chains of the latent prior.
//
// Every function validates its input and returns an error naming the bad
// value and what was expected; none panics on bad input.
package eval
