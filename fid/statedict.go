package fid

import (
	"fmt"
	"os"
	"sort"
)

// Array is one tensor of a PyTorch state dict: its shape and its values,
// row-major, converted to float32.
type Array struct {
	Shape []int
	Data  []float32
}

// StateDict maps a PyTorch state dict's keys (e.g.
// "Mixed_5b.branch1x1.conv.weight") to their tensors.
type StateDict map[string]Array

// ReadStateDict reads a state dict saved by torch.save, in the zip format of
// PyTorch ≥ 1.6 or the legacy format (pytorch-fid's
// pt_inception-2015-12-05-6726825d.pth). Floating-point and integer tensors
// are converted to float32; views are resolved through their strides.
//
// The file is untrusted: only what torch.save writes for a state dict is
// accepted (the pickle opcodes and globals it needs; nothing in the file is
// executed), and every length, storage size and tensor shape is checked
// against the bytes the file holds before anything is allocated, so any
// input ends in a state dict or an error naming the file — never a panic, a
// hang, or an allocation beyond a few times the file's size.
func ReadStateDict(path string) (StateDict, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("weights file: %w", err)
	}
	sd, err := parsePth(data)
	if err != nil {
		return nil, fmt.Errorf("weights file %s: not a state dict torch.save wrote: %w", path, err)
	}
	return sd, nil
}

// Keys returns the state dict's keys, sorted.
func (sd StateDict) Keys() []string {
	keys := make([]string, 0, len(sd))
	for k := range sd {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
