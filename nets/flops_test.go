package nets

import (
	"slices"
	"testing"
)

// TestLayerFLOPs checks the per-layer counts against hand-computed ones:
// 2·H·W·Cin·Cout·k² from each layer's input size for a transposed
// convolution, 2·in·out for a dense layer.
func TestLayerFLOPs(t *testing.T) {
	svhn, err := GeneratorPreset("svhn")
	if err != nil {
		t.Fatal(err)
	}
	cifar, err := GeneratorPreset("cifar10")
	if err != nil {
		t.Fatal(err)
	}
	prior := LEBMPriorMLP()
	prior.Hidden = append(make([]int, 0, 8), prior.Hidden...) // spare capacity, which must stay unwritten
	cases := []struct {
		name string
		got  []float64
		want []float64
	}{
		// 1×1×100 → 4×4×512 → 8×8×256 → 16×16×128 → 32×32×3, 4×4 kernels.
		{"svhn generator", svhn.LayerFLOPs(), []float64{
			2 * 1 * 1 * 100 * 512 * 16, 2 * 4 * 4 * 512 * 256 * 16, 2 * 8 * 8 * 256 * 128 * 16, 2 * 16 * 16 * 128 * 3 * 16}},
		// 1×1×128 → 8×8×1024 (8×8 kernel) → 16×16×512 → 32×32×256 → 32×32×3 (3×3 kernel).
		{"cifar10 generator", cifar.LayerFLOPs(), []float64{
			2 * 1 * 1 * 128 * 1024 * 64, 2 * 8 * 8 * 1024 * 512 * 16, 2 * 16 * 16 * 512 * 256 * 16, 2 * 32 * 32 * 256 * 3 * 9}},
		// 100 → 200 → 200 → 1.
		{"LEBM prior", prior.LayerFLOPs(100), []float64{2 * 100 * 200, 2 * 200 * 200, 2 * 200 * 1}},
		// 5 → 1, the output layer alone.
		{"linear MLP", MLPConfig{Activation: ActTanh}.LayerFLOPs(5), []float64{2 * 5 * 1}},
	}
	for _, c := range cases {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: LayerFLOPs = %v, want %v", c.name, c.got, c.want)
		}
	}
	if spare := prior.Hidden[:cap(prior.Hidden)][len(prior.Hidden):]; slices.ContainsFunc(spare, func(v int) bool { return v != 0 }) {
		t.Errorf("LayerFLOPs wrote into the spare capacity of the MLP's Hidden: %v", spare)
	}
}

// TestPassFLOPs checks which backward passes each use adds, on layers whose
// costs are distinct powers of ten so that every term shows in the digits.
func TestPassFLOPs(t *testing.T) {
	layers := []float64{1, 10, 100}
	cases := []struct {
		inputGrad, weightGrad bool
		want                  float64
	}{
		{false, false, 111},            // forward
		{true, false, 222},             // + every input-gradient pass
		{false, true, 111 + 110 + 111}, // + input gradients above the first layer + weight gradients
		{true, true, 333},
	}
	for _, c := range cases {
		if got := PassFLOPs(layers, c.inputGrad, c.weightGrad); got != c.want {
			t.Errorf("PassFLOPs(%v, input %v, weights %v) = %v, want %v", layers, c.inputGrad, c.weightGrad, got, c.want)
		}
	}
}
