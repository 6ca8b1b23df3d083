package fid

import (
	"fmt"
	"os"
	"sort"

	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
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
func ReadStateDict(path string) (StateDict, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("weights file: %w", err)
	}
	obj, err := pytorch.Load(path)
	if err != nil {
		return nil, fmt.Errorf("weights file %s: not a file torch.save wrote: %w", path, err)
	}
	entries, err := dictEntries(obj)
	if err != nil {
		return nil, fmt.Errorf("weights file %s: %w", path, err)
	}
	sd := StateDict{}
	for key, value := range entries {
		t, ok := value.(*pytorch.Tensor)
		if !ok {
			return nil, fmt.Errorf("weights file %s: %q holds a %T, want a tensor", path, key, value)
		}
		a, err := tensorArray(t)
		if err != nil {
			return nil, fmt.Errorf("weights file %s: %q: %w", path, key, err)
		}
		sd[key] = a
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

// dictEntries returns the entries of the unpickled top-level object, which
// torch.save(model.state_dict()) makes an OrderedDict (a plain dict when
// the state dict was rebuilt by hand).
func dictEntries(obj any) (map[string]any, error) {
	out := map[string]any{}
	add := func(k, v any) error {
		key, ok := k.(string)
		if !ok {
			return fmt.Errorf("key %v is a %T, want a string", k, k)
		}
		out[key] = v
		return nil
	}
	switch d := obj.(type) {
	case *types.OrderedDict:
		for k, e := range d.Map {
			if err := add(k, e.Value); err != nil {
				return nil, err
			}
		}
	case *types.Dict:
		for _, e := range *d {
			if err := add(e.Key, e.Value); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("holds a %T, want a state dict (an OrderedDict of tensors)", obj)
	}
	return out, nil
}

// tensorArray copies t's values, following its offset and strides.
func tensorArray(t *pytorch.Tensor) (Array, error) {
	storage, err := storageFloat32(t.Source)
	if err != nil {
		return Array{}, err
	}
	shape := append([]int{}, t.Size...)
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	index := make([]int, len(shape)) // row-major counter over shape
	for i := range data {
		at := t.StorageOffset
		for axis, j := range index {
			at += j * t.Stride[axis]
		}
		if at < 0 || at >= len(storage) {
			return Array{}, fmt.Errorf("tensor of shape %v reaches element %d of a storage of %d", shape, at, len(storage))
		}
		data[i] = storage[at]
		for axis := len(index) - 1; axis >= 0; axis-- {
			if index[axis]++; index[axis] < shape[axis] {
				break
			}
			index[axis] = 0
		}
	}
	return Array{Shape: shape, Data: data}, nil
}

// storageFloat32 converts a tensor storage of any numeric type to float32.
func storageFloat32(s pytorch.StorageInterface) ([]float32, error) {
	switch s := s.(type) {
	case *pytorch.FloatStorage:
		return s.Data, nil
	case *pytorch.HalfStorage:
		return s.Data, nil
	case *pytorch.BFloat16Storage:
		return s.Data, nil
	case *pytorch.DoubleStorage:
		return convert(s.Data), nil
	case *pytorch.LongStorage:
		return convert(s.Data), nil
	case *pytorch.IntStorage:
		return convert(s.Data), nil
	case *pytorch.ShortStorage:
		return convert(s.Data), nil
	case *pytorch.CharStorage:
		return convert(s.Data), nil
	case *pytorch.ByteStorage:
		return convert(s.Data), nil
	default:
		return nil, fmt.Errorf("storage of type %T is not numeric", s)
	}
}

func convert[T float64 | int64 | int32 | int16 | int8 | uint8](in []T) []float32 {
	out := make([]float32, len(in))
	for i, v := range in {
		out[i] = float32(v)
	}
	return out
}
