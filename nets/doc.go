// Package nets holds the networks of the project, written as GoMLX graph
// functions of a *context.Context:
//
//   - ConvTranspose2D, a transposed 2-D convolution with PyTorch
//     ConvTranspose2d semantics in NHWC layout, with gradients on both the
//     SimpleGo ("go") and the XLA backends, and ConvTranspose2DLayer, its
//     layer with variables;
//   - Generator, the DCGAN-style image generator of the latent EBM models,
//     with presets for every data set of the paper (GeneratorPreset);
//   - EnergyMLP, the energy networks: the LEBM prior f(z) (LEBMPriorMLP)
//     and the 2-D toy density energy (ToyEnergyMLP).
//
// GoMLX v0.26 differentiates a matrix product by materialising a broadcast
// product, and cannot differentiate an input-dilated convolution. Importing
// this package wraps GoMLX's gradients of DotGeneral, ConvGeneral, Slice and
// Concatenate nodes (graph.VJPRegistration) so that the nodes this package
// builds carry their own gradients; every other node keeps GoMLX's. Dense layers thus have
// cheap gradients of any order, as score matching needs.
package nets
