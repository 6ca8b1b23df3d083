// Package fid is the Fréchet Inception Distance's feature network in GoMLX:
// the pool3 (2048-d) features of TF's inception-2015-12-05 graph, as
// pytorch-fid ports it (pt_inception-2015-12-05-6726825d.pth), built from
// a state dict the user supplies (ReadStateDict reads torch.save files
// without Python). The Fréchet distance itself is eval.FrechetDistance.
//
// The network can be built narrower (every channel count divided by a
// width divisor) with the same structure; the tests check such networks,
// with random weights, against an independent PyTorch implementation
// (fid/testdata/make_fixtures.py), since the real weights cannot be downloaded
// where the tests run.
package fid
