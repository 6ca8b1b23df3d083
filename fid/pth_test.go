package fid

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// pickler writes the opcodes of a state dict's pickle by hand, as
// torch.save (protocol 2) does, for files whose every byte a test chooses.
type pickler struct{ bytes.Buffer }

func (p *pickler) op(s string) *pickler { p.WriteString(s); return p }
func (p *pickler) str(s string) *pickler {
	p.WriteByte('X')
	binary.Write(&p.Buffer, binary.LittleEndian, uint32(len(s)))
	p.WriteString(s)
	return p
}
func (p *pickler) int(v int32) *pickler {
	p.WriteByte('J')
	binary.Write(&p.Buffer, binary.LittleEndian, v)
	return p
}
func (p *pickler) ints(vs ...int32) *pickler {
	p.op("(")
	for _, v := range vs {
		p.int(v)
	}
	return p.op("t")
}

// tensorSpec is one tensor of a hand-made state dict.
type tensorSpec struct {
	name, storage, storageType string
	numel, offset              int32
	size, stride               []int32
}

// statePickle pickles an OrderedDict of the tensors.
func statePickle(tensors ...tensorSpec) []byte {
	p := &pickler{}
	p.op("\x80\x02ccollections\nOrderedDict\n)R")
	for _, t := range tensors {
		p.str(t.name)
		t.pickle(p)
		p.op("s")
	}
	return p.op(".").Bytes()
}

// pickle writes torch._utils._rebuild_tensor_v2(storage, offset, size,
// stride, False, OrderedDict()).
func (t tensorSpec) pickle(p *pickler) {
	p.op("ctorch._utils\n_rebuild_tensor_v2\n(")
	p.op("(").str("storage").op("ctorch\n" + t.storageType + "\n").str(t.storage).str("cpu").int(t.numel).op("NtQ")
	p.int(t.offset).ints(t.size...).ints(t.stride...)
	p.op("\x89ccollections\nOrderedDict\n)RtR")
}

// legacyPth is a legacy torch.save file: magic, protocol and system
// pickles, the state dict's pickle, its storage keys and the storages.
func legacyPth(state []byte, keys []string, storages ...[]float32) []byte {
	var b bytes.Buffer
	b.WriteString("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.") // 0x1950a86a20f9469cfc6c
	b.WriteString("\x80\x02M\xe9\x03.")                                        // 1001
	b.WriteString("\x80\x02}q\x00(X\x0d\x00\x00\x00little_endianq\x01\x88u.")
	b.Write(state)
	k := &pickler{}
	k.op("\x80\x02](")
	for _, key := range keys {
		k.str(key)
	}
	b.Write(k.op("e.").Bytes())
	for _, s := range storages {
		binary.Write(&b, binary.LittleEndian, int64(len(s)))
		binary.Write(&b, binary.LittleEndian, s)
	}
	return b.Bytes()
}

// zipPth is a zip-format torch.save file holding the pickle and storages
// named "0", "1", ….
func zipPth(state []byte, storages ...[]float32) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	add := func(name string, data []byte) {
		f, _ := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		f.Write(data)
	}
	add("archive/data.pkl", state)
	for i, s := range storages {
		var d bytes.Buffer
		binary.Write(&d, binary.LittleEndian, s)
		add("archive/data/"+string(rune('0'+i)), d.Bytes())
	}
	add("archive/version", []byte("3\n"))
	w.Close()
	return b.Bytes()
}

// TestReadStateDictOfHandMadeFiles reads files written byte by byte here:
// a matrix, its transposed view over the same storage, a scalar at an
// offset, in both formats, against the values the views select.
func TestReadStateDictOfHandMadeFiles(t *testing.T) {
	storage := []float32{1, 2, 3, 4, 5, 6}
	state := statePickle(
		tensorSpec{name: "m", storage: "0", storageType: "FloatStorage", numel: 6, size: []int32{2, 3}, stride: []int32{3, 1}},
		tensorSpec{name: "mT", storage: "0", storageType: "FloatStorage", numel: 6, size: []int32{3, 2}, stride: []int32{1, 3}},
		tensorSpec{name: "s", storage: "0", storageType: "FloatStorage", numel: 6, offset: 4, size: nil, stride: nil},
	)
	want := StateDict{
		"m":  {Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}},
		"mT": {Shape: []int{3, 2}, Data: []float32{1, 4, 2, 5, 3, 6}},
		"s":  {Shape: []int{}, Data: []float32{5}},
	}
	for name, file := range map[string][]byte{"legacy": legacyPth(state, []string{"0"}, storage), "zip": zipPth(state, storage)} {
		sd, err := parsePth(file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for key, w := range want {
			if !slices.Equal(sd[key].Shape, w.Shape) || !slices.Equal(sd[key].Data, w.Data) {
				t.Errorf("%s: %s = %v %v, want %v %v", name, key, sd[key].Shape, sd[key].Data, w.Shape, w.Data)
			}
		}
		if len(sd) != len(want) {
			t.Errorf("%s: %d keys, want %d", name, len(sd), len(want))
		}
	}
}

// The half-precision conversion against values written out by hand.
func TestHalfToFloat32(t *testing.T) {
	for _, tc := range []struct {
		bits uint16
		want float32
	}{
		{0x3c00, 1}, {0xc000, -2}, {0x3555, 0.333251953125}, {0x7bff, 65504},
		{0x0001, 5.960464477539063e-08}, {0x0000, 0}, {0x7c00, float32(math.Inf(1))},
	} {
		if got := halfToFloat32(tc.bits); got != tc.want {
			t.Errorf("half 0x%04x = %g, want %g", tc.bits, got, tc.want)
		}
	}
	if !math.IsNaN(float64(halfToFloat32(0x7e00))) {
		t.Error("half 0x7e00 is not NaN")
	}
}

// TestBadWeightFilesAreClearErrors covers each file that once hung,
// panicked or exhausted memory in the gopickle-based reader (issue 22),
// and the tensor checks: each is an error naming the file, at once, with
// allocation bounded.
func TestBadWeightFilesAreClearErrors(t *testing.T) {
	tensor := func(numel int32, size, stride []int32, offset int32) []byte {
		return statePickle(tensorSpec{name: "w", storage: "0", storageType: "FloatStorage", numel: numel, offset: offset, size: size, stride: stride})
	}
	six := []float32{1, 2, 3, 4, 5, 6}
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "no magic number"},
		{"512 zero bytes", make([]byte, 512), "no magic number"},
		{"opcode 0xff", []byte("\x80\x02\xff"), "opcode 0xff"},
		{"SETITEMS with an odd item count", legacyPth([]byte("\x80\x02}(K\x01u."), nil), "1 items"},
		{"LONG1 without its bytes", []byte("\x80\x02\x8a\x05"), "no magic number"},
		{"BINUNICODE8 declaring 3.5e18 bytes", legacyPth([]byte("\x80\x02\x8d\x00\x00\x00\x00\x00\x00\x90\x30."), nil), "opcode 0x8d"},
		{"a string declaring 4 GiB", legacyPth([]byte("\x80\x02X\xff\xff\xff\xff"), nil), "truncated"},
		{"a global that is not a state dict's", legacyPth([]byte("\x80\x02cos\nsystem\n."), nil), "global os.system"},
		{"a storage declaring 2 GiB", legacyPth(tensor(1<<29, []int32{1 << 29}, []int32{1}, 0), []string{"0"}, six), "holds 6 elements"},
		{"storage bytes cut short", func() []byte {
			f := legacyPth(tensor(6, []int32{6}, []int32{1}, 0), []string{"0"}, six)
			return f[:len(f)-8]
		}(), "truncated"},
		{"a stride per dimension missing", legacyPth(tensor(6, []int32{2, 3}, []int32{3}, 0), []string{"0"}, six), "one stride per dimension"},
		{"a negative size", legacyPth(tensor(6, []int32{-2, 3}, []int32{3, 1}, 0), []string{"0"}, six), "negative"},
		{"a shape larger than its storage", legacyPth(tensor(6, []int32{1 << 30, 1 << 30}, []int32{0, 0}, 0), []string{"0"}, six), "more than its storage"},
		{"a view past the storage's end", legacyPth(tensor(6, []int32{2, 3}, []int32{3, 1}, 2), []string{"0"}, six), "reaches element 7"},
		{"a zip storage shorter than declared", zipPth(tensor(6, []int32{6}, []int32{1}, 0), six[:4]), "holds 16 bytes"},
		{"a tensor, not a state dict", func() []byte {
			p := &pickler{}
			p.op("\x80\x02")
			tensorSpec{name: "w", storage: "0", storageType: "FloatStorage", numel: 6, size: []int32{6}, stride: []int32{1}}.pickle(p)
			return legacyPth(p.op(".").Bytes(), []string{"0"}, six)
		}(), "holds a tensor, want a state dict"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".pth")
			if err := os.WriteFile(path, append(tc.file, []byte{}...), 0o644); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := ReadStateDict(path)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming the file and containing %q", err, tc.want)
			}
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 1<<20+4*uint64(len(tc.file)) {
				t.Errorf("allocated %d bytes for a file of %d", allocated, len(tc.file))
			}
			if elapsed > time.Second {
				t.Errorf("took %s", elapsed)
			}
		})
	}
}

// FuzzReadStateDict: any bytes give a state dict or an error, never a
// panic, a hang or an allocation beyond a few times the file's size.
func FuzzReadStateDict(f *testing.F) {
	six := []float32{1, 2, 3, 4, 5, 6}
	state := statePickle(tensorSpec{name: "m", storage: "0", storageType: "FloatStorage", numel: 6, size: []int32{2, 3}, stride: []int32{3, 1}})
	f.Add(legacyPth(state, []string{"0"}, six))
	f.Add(zipPth(state, six))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		sd, err := parsePth(data)
		runtime.ReadMemStats(&after)
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 1<<20+8*uint64(len(data)) {
			t.Errorf("allocated %d bytes for %d bytes of input (error %v)", allocated, len(data), err)
		}
		for key, a := range sd {
			n := 1
			for _, d := range a.Shape {
				n *= d
			}
			if n != len(a.Data) {
				t.Errorf("%q: shape %v but %d values", key, a.Shape, len(a.Data))
			}
		}
	})
}
