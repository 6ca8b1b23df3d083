// Package plots writes the pictures and curves a person looks at while
// training energy-based models: image grids, heatmaps of energies or
// densities, 2-D sample histograms, line plots and the CSV files behind
// them.
//
// Every writer is atomic: the output is written to a temporary file in the
// destination directory and renamed into place only once complete, so a
// reader (or a crash) never observes a half-written file. The helper doing
// this is package atomicfile, shared for other packages' checkpoints and
// metrics.
//
// Heatmaps and scatter densities use a viridis-like perceptual colormap
// (see [Viridis]) and put y upwards: row 0 of the value grid is drawn at the
// bottom of the image unless [HeatmapOptions.RowZeroAtTop] is set.
package plots
