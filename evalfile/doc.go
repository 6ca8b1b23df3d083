// Package evalfile reads and writes the files an evaluation leaves, apart
// from package eval's mathematics: eval-lebm's summary.json (Report), the
// Gaussian feature statistics of FID and classifier-FID (SaveStats,
// LoadStats; this project's format or pytorch-fid's .npz), and the
// anomaly scores' CSV. Every reader takes untrusted files: an error names
// the file, never a panic (fuzzed).
package evalfile
