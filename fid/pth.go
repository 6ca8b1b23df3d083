package fid

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"path"
	"strings"
)

// legacyMagic is the number the legacy (pre-1.6) torch.save format pickles
// first.
var legacyMagic, _ = new(big.Int).SetString("1950a86a20f9469cfc6c", 16)

// parsePth reads a torch.save'd state dict from the whole file's bytes:
// the zip format (PyTorch ≥ 1.6, entries stored uncompressed) or the
// legacy one (magic, protocol and system pickles, the state dict's pickle,
// its storage keys, then each storage's element count and bytes).
func parsePth(data []byte) (StateDict, error) {
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return parseZipPth(data)
	}
	return parseLegacyPth(data)
}

func parseZipPth(data []byte) (StateDict, error) {
	archive, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("zip archive: %w", err)
	}
	entries := map[string][]byte{}
	var pickleName string
	for _, f := range archive.File {
		// torch.save stores entries uncompressed, so each lies in the file
		// as is and its size is bounded by the file's.
		if f.Method != zip.Store {
			return nil, fmt.Errorf("zip entry %s is compressed (method %d): torch.save stores its entries", f.Name, f.Method)
		}
		offset, err := f.DataOffset()
		if err != nil {
			return nil, fmt.Errorf("zip entry %s: %w", f.Name, err)
		}
		if offset < 0 || f.UncompressedSize64 > uint64(len(data)) || uint64(offset)+f.UncompressedSize64 > uint64(len(data)) {
			return nil, fmt.Errorf("zip entry %s of %d bytes runs past the end of the file", f.Name, f.UncompressedSize64)
		}
		entries[f.Name] = data[offset : uint64(offset)+f.UncompressedSize64]
		if path.Base(f.Name) == "data.pkl" && strings.Count(f.Name, "/") == 1 {
			pickleName = f.Name
		}
	}
	if pickleName == "" {
		return nil, errors.New("zip archive without ARCHIVE/data.pkl: not a torch.save file")
	}
	prefix := path.Dir(pickleName) + "/data/"
	storages := map[string]*storageRef{}
	u := &unpickler{data: entries[pickleName], persistentLoad: func(id any) (any, error) {
		ref, err := storageFromID(id, storages)
		if err != nil {
			return nil, err
		}
		if bytes, ok := entries[prefix+ref.key]; !ok || int64(len(bytes))/ref.dtype.size < ref.numel {
			return nil, fmt.Errorf("storage %s of %d %s elements: its entry holds %d bytes", ref.key, ref.numel, ref.dtype.name, len(entries[prefix+ref.key]))
		}
		return ref, nil
	}}
	obj, err := u.run()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pickleName, err)
	}
	return stateDict(obj, func(ref *storageRef) []byte { return entries[prefix+ref.key] })
}

func parseLegacyPth(data []byte) (StateDict, error) {
	u := &unpickler{data: data}
	magic, err := u.run()
	if m, ok := magic.(*big.Int); err != nil || !ok || m.Cmp(legacyMagic) != 0 {
		if err == nil {
			err = fmt.Errorf("it holds %v", magic)
		}
		return nil, fmt.Errorf("neither a zip archive nor a legacy torch.save file (no magic number: %w)", err)
	}
	for _, what := range []string{"protocol version", "system information"} {
		u.stack, u.marks, u.memo = nil, nil, nil
		if _, err := u.run(); err != nil {
			return nil, fmt.Errorf("legacy %s pickle: %w", what, err)
		}
	}
	storages := map[string]*storageRef{}
	u.stack, u.marks, u.memo = nil, nil, nil
	u.persistentLoad = func(id any) (any, error) { return storageFromID(id, storages) }
	obj, err := u.run()
	if err != nil {
		return nil, fmt.Errorf("state dict pickle: %w", err)
	}
	u.stack, u.marks, u.memo, u.persistentLoad = nil, nil, nil, nil
	keysObj, err := u.run()
	if err != nil {
		return nil, fmt.Errorf("storage keys pickle: %w", err)
	}
	keys, ok := keysObj.(*pickleList)
	if !ok {
		return nil, fmt.Errorf("storage keys are a %T, want a list", keysObj)
	}
	bytesOf := map[string][]byte{}
	for _, k := range keys.items {
		key, ok := k.(string)
		ref := storages[key]
		if !ok || ref == nil || bytesOf[key] != nil {
			return nil, fmt.Errorf("storage key %v: not a storage of the state dict, or listed twice", k)
		}
		header, err := u.take(8)
		if err != nil {
			return nil, fmt.Errorf("storage %s: %w", key, err)
		}
		numel := int64(binary.LittleEndian.Uint64(header))
		if numel != ref.numel {
			return nil, fmt.Errorf("storage %s holds %d elements, the state dict says %d", key, numel, ref.numel)
		}
		b, err := u.take(numel * ref.dtype.size) // against the bytes left; storageFromID bounds numel so this cannot overflow
		if err != nil {
			return nil, fmt.Errorf("storage %s of %d elements: %w", key, numel, err)
		}
		bytesOf[key] = b
	}
	if len(bytesOf) != len(storages) {
		return nil, fmt.Errorf("%d storages listed, the state dict uses %d", len(bytesOf), len(storages))
	}
	return stateDict(obj, func(ref *storageRef) []byte { return bytesOf[ref.key] })
}

// storageFromID resolves the persistent id ('storage', StorageType, key,
// location, numel[, view]) of a tensor's storage, one per key.
func storageFromID(id any, storages map[string]*storageRef) (*storageRef, error) {
	t, ok := id.(pickleTuple)
	if !ok || len(t) < 5 || len(t) > 6 || t[0] != "storage" {
		return nil, fmt.Errorf("persistent id %v: want ('storage', type, key, location, size)", id)
	}
	g, okType := t[1].(pickleGlobal)
	key, okKey := t[2].(string)
	numel, okNumel := t[4].(int64)
	dtype, known := storageTypes[g.name]
	if !okType || !okKey || !okNumel || !known || g.module != "torch" {
		return nil, fmt.Errorf("persistent id %v: want a torch storage type, a string key and an element count", id)
	}
	// An element count no file could hold is refused before any use.
	if numel < 0 || numel > math.MaxInt32*8/dtype.size {
		return nil, fmt.Errorf("storage %s: %d elements", key, numel)
	}
	if ref, ok := storages[key]; ok {
		if ref.dtype != dtype || ref.numel != numel {
			return nil, fmt.Errorf("storage %s declared twice, differently", key)
		}
		return ref, nil
	}
	ref := &storageRef{key: key, dtype: dtype, numel: numel}
	storages[key] = ref
	return ref, nil
}

// stateDict converts the unpickled top level — a dictionary of names to
// tensors — reading each tensor's elements from its storage's bytes.
func stateDict(obj any, bytesOf func(*storageRef) []byte) (StateDict, error) {
	d, ok := obj.(*pickleDict)
	if !ok {
		return nil, fmt.Errorf("holds a %s, want a state dict (an OrderedDict of tensors)", typeName(obj))
	}
	sd := StateDict{}
	for _, k := range d.keys {
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("key %v is a %T, want a string", k, k)
		}
		t, ok := d.values[k].(*tensorRef)
		if !ok {
			return nil, fmt.Errorf("%q holds a %s, want a tensor", key, typeName(d.values[k]))
		}
		a, err := t.array(bytesOf(t.storage))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", key, err)
		}
		sd[key] = a
	}
	return sd, nil
}

func typeName(v any) string {
	switch v.(type) {
	case *tensorRef:
		return "tensor"
	case *pickleDict:
		return "dictionary"
	case *pickleList:
		return "list"
	case pickleTuple:
		return "tuple"
	}
	return fmt.Sprintf("%T", v)
}

// array copies the tensor's elements (checked in bounds by check) as
// float32, following its offset and strides.
func (t *tensorRef) array(storage []byte) (Array, error) {
	if int64(len(storage))/t.storage.dtype.size < t.storage.numel {
		return Array{}, fmt.Errorf("storage %s: %d bytes for %d elements", t.storage.key, len(storage), t.storage.numel)
	}
	shape := make([]int, len(t.size))
	n := 1
	for i, d := range t.size {
		shape[i] = int(d)
		n *= int(d)
	}
	data := make([]float32, n)
	index := make([]int64, len(shape)) // row-major counter over shape
	for i := range data {
		at := t.offset
		for axis, j := range index {
			at += j * t.stride[axis]
		}
		data[i] = element(storage, t.storage.dtype, at)
		for axis := len(index) - 1; axis >= 0; axis-- {
			if index[axis]++; index[axis] < t.size[axis] {
				break
			}
			index[axis] = 0
		}
	}
	return Array{Shape: shape, Data: data}, nil
}

// element converts element i of a little-endian storage to float32.
func element(b []byte, dtype storageType, i int64) float32 {
	le := binary.LittleEndian
	p := b[i*dtype.size:]
	switch dtype.name {
	case "FloatStorage":
		return math.Float32frombits(le.Uint32(p))
	case "DoubleStorage":
		return float32(math.Float64frombits(le.Uint64(p)))
	case "HalfStorage":
		return halfToFloat32(le.Uint16(p))
	case "BFloat16Storage":
		return math.Float32frombits(uint32(le.Uint16(p)) << 16)
	case "LongStorage":
		return float32(int64(le.Uint64(p)))
	case "IntStorage":
		return float32(int32(le.Uint32(p)))
	case "ShortStorage":
		return float32(int16(le.Uint16(p)))
	case "CharStorage":
		return float32(int8(p[0]))
	default: // ByteStorage, BoolStorage
		return float32(p[0])
	}
}

// halfToFloat32 converts an IEEE 754 half-precision value.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
