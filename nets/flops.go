package nets

// FLOP counts here are 2 per multiply-add of a convolution or matrix
// product, and nothing for elementwise work (biases, activations): the
// convention of roofline plots and of PyTorch's flop counter, under which a
// layer's backward passes for its input and for its weights each cost what
// its forward pass costs.

// LayerFLOPs returns, for one example, the floating-point operations of
// each layer's forward pass through the generator. A transposed convolution
// from an H×W×Cin input scatters a k×k×Cout patch from every input pixel:
// 2·H·W·Cin·Cout·k², the parts that padding crops included (as PyTorch
// counts ConvTranspose2d). Meaningful for a config that passes Validate.
func (c GeneratorConfig) LayerFLOPs() []float64 {
	flops := make([]float64, len(c.Layers))
	size, channels := 1, c.Nz
	for i, l := range c.Layers {
		flops[i] = 2 * float64(size*size) * float64(channels) * float64(l.Out) * float64(l.Kernel*l.Kernel)
		size, channels = ConvTransposeOutputSize(size, l.Kernel, l.Stride, l.Padding), l.Out
	}
	return flops
}

// LayerFLOPs returns, for one example of in features, the floating-point
// operations of each dense layer's forward pass through the MLP (the output
// layer last): 2·in·out each.
func (c MLPConfig) LayerFLOPs(in int) []float64 {
	flops := make([]float64, 0, len(c.Hidden)+1)
	for _, out := range c.Hidden {
		flops = append(flops, 2*float64(in)*float64(out))
		in = out
	}
	return append(flops, 2*float64(in))
}

// PassFLOPs is the cost of one evaluation of a network whose layers have
// the forward costs layers, with the backward passes a use needs: with
// inputGrad, the gradient with respect to the network's input (every
// layer's input-gradient pass); with weightGrad, the gradients with respect
// to its weights (every layer's weight-gradient pass, and the
// input-gradient passes of all layers but the first, which carry the
// gradient down to them).
func PassFLOPs(layers []float64, inputGrad, weightGrad bool) float64 {
	var forward float64
	for _, f := range layers {
		forward += f
	}
	total := forward
	switch {
	case inputGrad:
		total += forward
	case weightGrad && len(layers) > 0:
		total += forward - layers[0]
	}
	if weightGrad {
		total += forward
	}
	return total
}
