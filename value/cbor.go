package value

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
)

// The binary form is a deterministic subset of CBOR (RFC 8949):
//
//	Undefined  0xf7 (simple value 23)
//	Null       0xf6
//	Hole       0xe0 (simple value 0)
//	Bool       0xf4 / 0xf5
//	Number     0xfb + IEEE 754 binary64, big-endian; NaN is 0x7ff8000000000000
//	String     byte string (major type 2) of the WTF-8 bytes, so unpaired
//	           surrogates survive
//	Array      major type 4, definite length
//	Object     major type 5, definite length, byte-string keys in order
//
// Lengths use their shortest form. Every value has exactly one encoding and
// the decoder accepts nothing else, so decoding and re-encoding gives back
// the same bytes.

const (
	cborHole      = 0xe0
	cborFalse     = 0xf4
	cborTrue      = 0xf5
	cborNull      = 0xf6
	cborUndefined = 0xf7
	cborFloat64   = 0xfb

	majorBytes = detcbor.MajorBytes
	majorArray = detcbor.MajorArray
	majorMap   = detcbor.MajorMap

	canonicalNaN = 0x7ff8000000000000
)

// AppendCBOR appends the binary form of v to dst. It writes whatever v
// holds, even a value that Validate rejects; an unknown kind is written as
// 0xff, which no decoder accepts.
func (v Value) AppendCBOR(dst []byte) []byte {
	return appendCBOR(dst, &v)
}

// MarshalCBOR returns the binary form of v, or the Validate error if v
// cannot cross the boundary.
func (v Value) MarshalCBOR() ([]byte, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return appendCBOR(nil, &v), nil
}

// UnmarshalCBOR decodes exactly one value in binary form, with no bytes
// after it. A general CBOR decoder calling it for a struct field checks
// nesting and sizes first, with defaults (fxamacker/cbor: 32 levels, 131072
// elements) below MaxDepth and MaxArrayLength; raise them in its DecOptions.
func (v *Value) UnmarshalCBOR(b []byte) error {
	x, rest, err := DecodeCBOR(b)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return invalidf("unexpected data after the value at byte %d", len(b)-len(rest))
	}
	*v = x
	return nil
}

func appendCBOR(dst []byte, v *Value) []byte {
	switch v.Kind {
	case KindUndefined:
		return append(dst, cborUndefined)
	case KindNull:
		return append(dst, cborNull)
	case KindHole:
		return append(dst, cborHole)
	case KindBool:
		if v.Bool {
			return append(dst, cborTrue)
		}
		return append(dst, cborFalse)
	case KindNumber:
		bits := math.Float64bits(v.Num)
		if v.Num != v.Num {
			bits = canonicalNaN
		}
		return binary.BigEndian.AppendUint64(append(dst, cborFloat64), bits)
	case KindString:
		dst = detcbor.AppendHead(dst, majorBytes, uint64(len(v.Str)))
		return append(dst, v.Str...)
	case KindArray:
		dst = detcbor.AppendHead(dst, majorArray, uint64(len(v.Elems)))
		for i := range v.Elems {
			dst = appendCBOR(dst, &v.Elems[i])
		}
		return dst
	case KindObject:
		dst = detcbor.AppendHead(dst, majorMap, uint64(len(v.Members)))
		for i := range v.Members {
			m := &v.Members[i]
			dst = detcbor.AppendHead(dst, majorBytes, uint64(len(m.Key)))
			dst = append(dst, m.Key...)
			dst = appendCBOR(dst, &m.Value)
		}
		return dst
	}
	return append(dst, 0xff)
}

// DecodeCBOR decodes one value in binary form from the start of b and
// returns it with the bytes that follow it. Anything outside the
// deterministic subset is rejected: indefinite lengths, tags, integers,
// text strings, other simple values and float widths, non-shortest
// lengths, non-canonical NaNs, strings that are not WTF-8, duplicate keys,
// a Hole outside an array, nesting deeper than MaxDepth and arrays longer
// than MaxArrayLength. No length is trusted before the input is known to be
// long enough, so memory use is linear in len(b). On error rest is nil.
func DecodeCBOR(b []byte) (v Value, rest []byte, err error) { return decodeCBOR(b, false) }

// DecodeCBOROwned is DecodeCBOR for a b the caller gives away: b must
// not be changed afterwards, and a string that is most of it shares its
// memory instead of being copied out of it (a decompressed journal record,
// whose one large string would otherwise be copied whole). Shorter strings
// are copied, so that keeping one does not keep all of b.
func DecodeCBOROwned(b []byte) (v Value, rest []byte, err error) { return decodeCBOR(b, true) }

// CheckCBOR reports whether DecodeCBOR would accept the value at the start
// of b, with the same error and the same rest, without building it: a
// snapshot's answers are checked when it is read and imported only when a
// replay reaches each one. It allocates nothing but the key set of an
// object of many keys, which DecodeCBOR makes too.
func CheckCBOR(b []byte) (rest []byte, err error) {
	d := cborDecoder{b: b, owned: true, check: true, scratch: getScratch()}
	defer d.release()
	if _, err := d.value(0, posTop); err != nil {
		return nil, err
	}
	return b[d.i:], nil
}

func decodeCBOR(b []byte, owned bool) (v Value, rest []byte, err error) {
	d := cborDecoder{b: b, owned: owned, scratch: getScratch()}
	defer d.release()
	v, err = d.value(0, posTop)
	if err != nil {
		return Value{}, nil, err
	}
	return v, b[d.i:], nil
}

type cborDecoder struct {
	b     []byte
	i     int
	owned bool // strings may alias b (DecodeCBOROwned)
	check bool // CheckCBOR: arrays and objects are read, not built
	// Arrays and objects are collected on the scratch stacks instead of
	// being preallocated from their declared counts, which a hostile input
	// could inflate at every level.
	*scratch
}

// head reads the argument of the item at d.i whose major type the caller
// has already checked, enforcing the shortest form.
func (d *cborDecoder) head() (uint64, error) {
	_, n, next, err := detcbor.ReadHead(d.b, d.i)
	if err != nil {
		return 0, invalidf("%v", err)
	}
	d.i = next
	return n, nil
}

// remaining is the number of unread bytes.
func (d *cborDecoder) remaining() uint64 { return uint64(len(d.b) - d.i) }

func (d *cborDecoder) bytes() (string, error) {
	at := d.i
	n, err := d.head()
	if err != nil {
		return "", err
	}
	if n > d.remaining() {
		return "", invalidf("string length exceeds the data at byte %d", at)
	}
	var s string
	if d.owned && n > 0 && (d.check || sharesWhole(int(n), cap(d.b))) {
		s = unsafe.String(&d.b[d.i], int(n))
	} else {
		s = string(d.b[d.i : d.i+int(n)])
	}
	if !ValidWTF8(s) {
		return "", invalidf("string is not well-formed UTF-8 at byte %d", at)
	}
	d.i += int(n)
	return s, nil
}

func (d *cborDecoder) value(depth int, pos position) (Value, error) {
	if d.i >= len(d.b) {
		return Value{}, invalidf("unexpected end of data at byte %d", d.i)
	}
	at := d.i
	c := d.b[at]
	switch c >> 5 {
	case majorBytes:
		s, err := d.bytes()
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: KindString, Str: s}, nil
	case majorArray:
		if depth >= MaxDepth {
			return Value{}, errNesting
		}
		return d.array(depth + 1)
	case majorMap:
		if depth >= MaxDepth {
			return Value{}, errNesting
		}
		return d.object(depth + 1)
	}
	switch c {
	case cborUndefined:
		d.i++
		return Value{}, nil
	case cborNull:
		d.i++
		return Value{Kind: KindNull}, nil
	case cborHole:
		if pos != posElem {
			return Value{}, errHolePlacement
		}
		d.i++
		return Value{Kind: KindHole}, nil
	case cborFalse:
		d.i++
		return Value{Kind: KindBool}, nil
	case cborTrue:
		d.i++
		return Value{Kind: KindBool, Bool: true}, nil
	case cborFloat64:
		if len(d.b)-at < 9 {
			return Value{}, invalidf("unexpected end of data at byte %d", len(d.b))
		}
		bits := binary.BigEndian.Uint64(d.b[at+1:])
		f := math.Float64frombits(bits)
		if f != f && bits != canonicalNaN {
			return Value{}, invalidf("non-canonical NaN at byte %d", at)
		}
		d.i = at + 9
		return Value{Kind: KindNumber, Num: f}, nil
	}
	return Value{}, invalidf("unsupported item 0x%02x at byte %d", c, at)
}

func (d *cborDecoder) array(depth int) (Value, error) {
	at := d.i
	n, err := d.head()
	if err != nil {
		return Value{}, err
	}
	if n > MaxArrayLength {
		return Value{}, errArrayTooLong
	}
	// Every element takes at least one byte.
	if n > d.remaining() {
		return Value{}, invalidf("array length exceeds the data at byte %d", at)
	}
	if n == 0 {
		return Value{Kind: KindArray}, nil
	}
	base := len(d.elems)
	for range n {
		v, err := d.value(depth, posElem)
		if err != nil {
			return Value{}, err
		}
		if !d.check {
			d.elems = append(d.elems, v)
		}
	}
	if d.check {
		return Value{Kind: KindArray}, nil
	}
	return Value{Kind: KindArray, Elems: d.takeElems(base)}, nil
}

func (d *cborDecoder) object(depth int) (Value, error) {
	at := d.i
	n, err := d.head()
	if err != nil {
		return Value{}, err
	}
	// Every member takes at least two bytes.
	if n > d.remaining()/2 {
		return Value{}, invalidf("object size exceeds the data at byte %d", at)
	}
	if n == 0 {
		return Value{Kind: KindObject}, nil
	}
	base := len(d.members)
	var keys keySet
	for range n {
		if d.i >= len(d.b) {
			return Value{}, invalidf("unexpected end of data at byte %d", d.i)
		}
		if d.b[d.i]>>5 != majorBytes {
			return Value{}, invalidf("object key is not a byte string at byte %d", d.i)
		}
		key, err := d.bytes()
		if err != nil {
			return Value{}, err
		}
		if !keys.add(d.members[base:], key) {
			return Value{}, errDuplicateKey(key)
		}
		v, err := d.value(depth, posMember)
		if err != nil {
			return Value{}, err
		}
		if d.check {
			v = Value{} // the keys alone find a repeated key
		}
		d.members = append(d.members, Member{Key: key, Value: v})
	}
	if d.check {
		clear(d.members[base:])
		d.members = d.members[:base]
		return Value{Kind: KindObject}, nil
	}
	return Value{Kind: KindObject, Members: d.takeMembers(base)}, nil
}
