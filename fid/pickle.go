package fid

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// A bounded reader of the pickles torch.save writes for a state dict — the
// idea of PyTorch's weights_only loading: only the opcodes and globals a
// state dict needs, every length checked against the bytes left before
// anything is allocated, nothing from the file ever executed.

// Values on the unpickler's stack besides nil, bool, int64, *big.Int,
// float64 and string.
type (
	pickleTuple []any
	pickleList  struct{ items []any }
	// pickleDict keeps insertion order, as the OrderedDict it stands for.
	pickleDict struct {
		keys   []any
		values map[any]any
	}
	pickleGlobal struct{ module, name string }
	// storageRef is a persistent id resolved: a storage's key, element type
	// and element count, whose bytes come from the archive or after the
	// legacy pickles.
	storageRef struct {
		key   string
		dtype storageType
		numel int64
	}
	// tensorRef is a tensor rebuilt over a storage.
	tensorRef struct {
		storage      *storageRef
		offset       int64
		size, stride []int64
	}
)

func newPickleDict() *pickleDict { return &pickleDict{values: map[any]any{}} }

func (d *pickleDict) set(k, v any) error {
	switch k.(type) {
	case nil, bool, int64, float64, string:
	default:
		return fmt.Errorf("dictionary key of type %T", k)
	}
	if _, ok := d.values[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.values[k] = v
	return nil
}

// storageType is a torch storage class: its name and element size.
type storageType struct {
	name string
	size int64
}

var storageTypes = map[string]storageType{
	"FloatStorage": {"FloatStorage", 4}, "DoubleStorage": {"DoubleStorage", 8},
	"HalfStorage": {"HalfStorage", 2}, "BFloat16Storage": {"BFloat16Storage", 2},
	"LongStorage": {"LongStorage", 8}, "IntStorage": {"IntStorage", 4},
	"ShortStorage": {"ShortStorage", 2}, "CharStorage": {"CharStorage", 1},
	"ByteStorage": {"ByteStorage", 1}, "BoolStorage": {"BoolStorage", 1},
}

// unpickler runs one pickle from data[pos:].
type unpickler struct {
	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[uint32]any
	// persistentLoad resolves a BINPERSID id; nil: the opcode is refused.
	persistentLoad func(id any) (any, error)
}

// errShort is the error of a length running past the end of the data.
var errShort = errors.New("truncated: a length or value runs past the end of the file")

func (u *unpickler) take(n int64) ([]byte, error) {
	if n < 0 || n > int64(len(u.data)-u.pos) {
		return nil, errShort
	}
	b := u.data[u.pos : u.pos+int(n)]
	u.pos += int(n)
	return b, nil
}

// uint reads an unsigned little-endian integer of width 1, 2 or 4 bytes.
func (u *unpickler) uint(width int64) (int64, error) {
	b, err := u.take(width)
	if err != nil {
		return 0, err
	}
	var v int64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | int64(b[i])
	}
	return v, nil
}

// prefixed reads bytes preceded by their count, an integer of width bytes.
func (u *unpickler) prefixed(width int64) ([]byte, error) {
	n, err := u.uint(width)
	if err != nil {
		return nil, err
	}
	return u.take(n)
}

func (u *unpickler) push(v any) { u.stack = append(u.stack, v) }

func (u *unpickler) pop() (any, error) {
	if len(u.stack) == 0 || (len(u.marks) > 0 && len(u.stack) <= u.marks[len(u.marks)-1]) {
		return nil, errors.New("stack underflow")
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	return v, nil
}

func (u *unpickler) popN(n int) ([]any, error) {
	if len(u.stack) < n || (len(u.marks) > 0 && len(u.stack)-n < u.marks[len(u.marks)-1]) {
		return nil, errors.New("stack underflow")
	}
	items := append([]any{}, u.stack[len(u.stack)-n:]...)
	u.stack = u.stack[:len(u.stack)-n]
	return items, nil
}

// popMark pops everything above the last MARK.
func (u *unpickler) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, errors.New("no MARK to pop to")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any{}, u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, nil
}

func (u *unpickler) top() (any, error) {
	if len(u.stack) == 0 || (len(u.marks) > 0 && len(u.stack) <= u.marks[len(u.marks)-1]) {
		return nil, errors.New("stack underflow")
	}
	return u.stack[len(u.stack)-1], nil
}

// run executes opcodes until STOP and returns the pickled object.
func (u *unpickler) run() (result any, err error) {
	if u.memo == nil {
		u.memo = map[uint32]any{}
	}
	for {
		at := u.pos
		op, err := u.uint(1)
		if err != nil {
			return nil, errors.New("truncated: no STOP opcode")
		}
		done, err := u.step(byte(op))
		if err != nil {
			return nil, fmt.Errorf("pickle opcode 0x%02x at byte %d: %w", op, at, err)
		}
		if done {
			if len(u.stack) != 1 || len(u.marks) != 0 {
				return nil, fmt.Errorf("pickle ends with %d values and %d marks, want one value", len(u.stack), len(u.marks))
			}
			return u.stack[0], nil
		}
	}
}

// step executes one opcode; done is true at STOP. Opcodes are grouped by
// what they do to the stack, one method a group.
func (u *unpickler) step(op byte) (done bool, err error) {
	switch op {
	case '.': // STOP
		return true, nil
	case 0x80: // PROTO
		v, err := u.uint(1)
		if err != nil || v < 2 || v > 5 {
			return false, fmt.Errorf("protocol %d (%v): want 2 to 5", v, err)
		}
		return false, nil
	case 0x95: // FRAME: a length hint only
		_, err := u.take(8)
		return false, err
	case '(': // MARK
		u.marks = append(u.marks, len(u.stack))
		return false, nil
	case ')', ']', '}', 'N', 0x88, 0x89:
		u.pushConstant(op)
		return false, nil
	case 'J', 'K', 'M', 0x8a, 'G', 'X', 'T', 0x8c, 'U':
		return false, u.pushScalar(op)
	case 'q', 'r', 0x94, 'h', 'j':
		return false, u.memoOp(op)
	case 't', 0x85, 0x86, 0x87, 'l':
		return false, u.collect(op)
	case 'a', 'e', 's', 'u':
		return false, u.extend(op)
	case 'c', 'R', 'b', 'Q':
		return false, u.object(op)
	}
	return false, errors.New("not an opcode torch.save writes for a state dict")
}

// pushConstant pushes an empty container, None, True or False.
func (u *unpickler) pushConstant(op byte) {
	switch op {
	case ')': // EMPTY_TUPLE
		u.push(pickleTuple{})
	case ']': // EMPTY_LIST
		u.push(&pickleList{})
	case '}': // EMPTY_DICT
		u.push(newPickleDict())
	case 'N':
		u.push(nil)
	case 0x88:
		u.push(true)
	case 0x89:
		u.push(false)
	}
}

// pushScalar reads an integer, float or string operand and pushes it.
func (u *unpickler) pushScalar(op byte) error {
	switch op {
	case 'J', 'K', 'M': // BININT, BININT1, BININT2
		width := map[byte]int64{'J': 4, 'K': 1, 'M': 2}[op]
		v, err := u.uint(width)
		if err != nil {
			return err
		}
		if op == 'J' {
			v = int64(int32(v)) // the only signed one
		}
		u.push(v)
	case 0x8a: // LONG1
		b, err := u.prefixed(1)
		if err != nil {
			return err
		}
		u.push(littleEndianInt(b))
	case 'G': // BINFLOAT
		b, err := u.take(8)
		if err != nil {
			return err
		}
		u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
	default: // BINUNICODE, BINSTRING (4-byte length); SHORT_BINUNICODE, SHORT_BINSTRING (1-byte)
		width := int64(4)
		if op == 0x8c || op == 'U' {
			width = 1
		}
		b, err := u.prefixed(width)
		if err != nil {
			return err
		}
		u.push(string(b))
	}
	return nil
}

// memoOp stores the stack's top in the memo (BINPUT, LONG_BINPUT,
// MEMOIZE) or pushes a stored value (BINGET, LONG_BINGET).
func (u *unpickler) memoOp(op byte) error {
	if op == 'h' || op == 'j' {
		idx, err := u.uint(memoWidth(op))
		if err != nil {
			return err
		}
		v, ok := u.memo[uint32(idx)]
		if !ok {
			return fmt.Errorf("memo %d was never stored", idx)
		}
		u.push(v)
		return nil
	}
	idx := int64(len(u.memo))
	if op != 0x94 {
		var err error
		if idx, err = u.uint(memoWidth(op)); err != nil {
			return err
		}
	}
	v, err := u.top()
	if err != nil {
		return err
	}
	u.memo[uint32(idx)] = v
	return nil
}

// collect pops items (to the mark, or one to three) into a tuple or list.
func (u *unpickler) collect(op byte) error {
	var items []any
	var err error
	if op == 't' || op == 'l' { // TUPLE, LIST
		items, err = u.popMark()
	} else { // TUPLE1, TUPLE2, TUPLE3
		items, err = u.popN(int(op - 0x84))
	}
	if err != nil {
		return err
	}
	if op == 'l' {
		u.push(&pickleList{items: items})
	} else {
		u.push(pickleTuple(items))
	}
	return nil
}

// extend pops one item or pair (APPEND, SETITEM) or all to the mark
// (APPENDS, SETITEMS) into the list or dictionary below them.
func (u *unpickler) extend(op byte) error {
	var items []any
	var err error
	switch op {
	case 'a':
		items, err = u.popN(1)
	case 's':
		items, err = u.popN(2)
	default:
		items, err = u.popMark()
	}
	if err != nil {
		return err
	}
	target, err := u.top()
	if err != nil {
		return err
	}
	if op == 'a' || op == 'e' {
		list, ok := target.(*pickleList)
		if !ok {
			return fmt.Errorf("appending to a %T", target)
		}
		list.items = append(list.items, items...)
		return nil
	}
	if len(items)%2 != 0 {
		return fmt.Errorf("%d items: want key, value pairs", len(items))
	}
	dict, ok := target.(*pickleDict)
	if !ok {
		return fmt.Errorf("setting items of a %T", target)
	}
	for i := 0; i < len(items); i += 2 {
		if err := dict.set(items[i], items[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// object runs the opcodes that make objects: GLOBAL (only the allowed
// ones), REDUCE, BUILD (an OrderedDict's attributes, ignored) and
// BINPERSID (a tensor's storage).
func (u *unpickler) object(op byte) error {
	switch op {
	case 'c': // GLOBAL module\nname\n
		module, err := u.line()
		if err != nil {
			return err
		}
		name, err := u.line()
		if err != nil {
			return err
		}
		g := pickleGlobal{module, name}
		if !allowedGlobal(g) {
			return fmt.Errorf("global %s.%s: not one a state dict needs (refused, never called)", module, name)
		}
		u.push(g)
	case 'R': // REDUCE
		args, err := u.pop()
		if err != nil {
			return err
		}
		callable, err := u.pop()
		if err != nil {
			return err
		}
		v, err := reduce(callable, args)
		if err != nil {
			return err
		}
		u.push(v)
	case 'b': // BUILD
		state, err := u.pop()
		if err != nil {
			return err
		}
		target, err := u.top()
		if err != nil {
			return err
		}
		if _, ok := target.(*pickleDict); !ok {
			return fmt.Errorf("setting the state of a %T", target)
		}
		if _, ok := state.(*pickleDict); !ok && state != nil {
			return fmt.Errorf("a dictionary's state is a %T", state)
		}
	case 'Q': // BINPERSID
		if u.persistentLoad == nil {
			return errors.New("persistent id outside the state dict's pickle")
		}
		id, err := u.pop()
		if err != nil {
			return err
		}
		v, err := u.persistentLoad(id)
		if err != nil {
			return err
		}
		u.push(v)
	}
	return nil
}

// memoWidth is the index width of the memo opcodes: 1 byte for BINPUT and
// BINGET, 4 for their LONG_ forms.
func memoWidth(op byte) int64 {
	if op == 'r' || op == 'j' {
		return 4
	}
	return 1
}

// line reads a GLOBAL operand: at most 256 bytes up to a newline.
func (u *unpickler) line() (string, error) {
	rest := u.data[u.pos:min(len(u.data), u.pos+257)]
	i := strings.IndexByte(string(rest), '\n')
	if i < 0 {
		return "", errors.New("global name without a newline within 256 bytes")
	}
	u.pos += i + 1
	return string(rest[:i]), nil
}

// littleEndianInt decodes LONG1's two's-complement bytes.
func littleEndianInt(b []byte) any {
	if len(b) <= 8 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		if len(b) > 0 && len(b) < 8 && b[len(b)-1]&0x80 != 0 {
			v |= ^uint64(0) << (8 * len(b)) // sign-extend
		}
		return int64(v)
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	v := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// allowedGlobal lists the globals a state dict's pickle names.
func allowedGlobal(g pickleGlobal) bool {
	switch g.module {
	case "collections":
		return g.name == "OrderedDict"
	case "torch._utils":
		return g.name == "_rebuild_tensor_v2" || g.name == "_rebuild_tensor"
	case "torch":
		_, ok := storageTypes[g.name]
		return ok
	}
	return false
}

// reduce applies one of the allowed callables.
func reduce(callable, args any) (any, error) {
	g, ok := callable.(pickleGlobal)
	if !ok {
		return nil, fmt.Errorf("calling a %T", callable)
	}
	a, ok := args.(pickleTuple)
	if !ok {
		return nil, fmt.Errorf("%s.%s called with a %T, want a tuple", g.module, g.name, args)
	}
	switch g.name {
	case "OrderedDict":
		if len(a) != 0 {
			return nil, fmt.Errorf("OrderedDict called with %d arguments, want none", len(a))
		}
		return newPickleDict(), nil
	case "_rebuild_tensor_v2", "_rebuild_tensor":
		// (storage, storage_offset, size, stride[, requires_grad, hooks[, metadata]])
		if len(a) < 4 || len(a) > 7 {
			return nil, fmt.Errorf("%s with %d arguments, want 4 to 7", g.name, len(a))
		}
		storage, ok := a[0].(*storageRef)
		if !ok {
			return nil, fmt.Errorf("%s: storage is a %T", g.name, a[0])
		}
		offset, ok := a[1].(int64)
		size, okSize := intTuple(a[2])
		stride, okStride := intTuple(a[3])
		if !ok || !okSize || !okStride {
			return nil, fmt.Errorf("%s: offset %v, size %v, stride %v: want an integer and two integer tuples", g.name, a[1], a[2], a[3])
		}
		t := &tensorRef{storage: storage, offset: offset, size: size, stride: stride}
		if err := t.check(); err != nil {
			return nil, err
		}
		return t, nil
	}
	return nil, fmt.Errorf("%s.%s is not callable here", g.module, g.name)
}

func intTuple(v any) ([]int64, bool) {
	t, ok := v.(pickleTuple)
	if !ok {
		return nil, false
	}
	out := make([]int64, len(t))
	for i, x := range t {
		if out[i], ok = x.(int64); !ok {
			return nil, false
		}
	}
	return out, true
}

// check bounds the tensor by its storage: sizes and strides of one rank,
// non-negative, and every element it reaches inside the storage; a state
// dict's tensor never has more elements than its storage.
func (t *tensorRef) check() error {
	if len(t.size) != len(t.stride) || len(t.size) > 32 {
		return fmt.Errorf("tensor of size %v and stride %v: want one stride per dimension (at most 32)", t.size, t.stride)
	}
	n, last := int64(1), t.offset
	if t.offset < 0 {
		return fmt.Errorf("tensor offset %d: negative", t.offset)
	}
	for i, d := range t.size {
		if d < 0 || t.stride[i] < 0 {
			return fmt.Errorf("tensor of size %v and stride %v: negative", t.size, t.stride)
		}
		if d == 0 {
			return nil // empty: reaches nothing
		}
		if d > t.storage.numel || n > t.storage.numel/d || (d-1) > 0 && t.stride[i] > (math.MaxInt64-last)/(d-1) {
			return fmt.Errorf("tensor of size %v and stride %v: more than its storage's %d elements", t.size, t.stride, t.storage.numel)
		}
		n *= d
		last += (d - 1) * t.stride[i]
	}
	if last >= t.storage.numel {
		return fmt.Errorf("tensor of size %v, stride %v and offset %d reaches element %d of a storage of %d", t.size, t.stride, t.offset, last, t.storage.numel)
	}
	return nil
}
