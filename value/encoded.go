package value

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
)

// Encoded reads a value's binary form item by item, without building the
// value: a replay imports a journaled answer straight into the guest from
// it, where a decoded answer of structured data took many times its
// encoding as a Value tree that lived only until it was imported.
//
// The bytes must be a value CheckCBOR accepted; Encoded trusts its
// lengths and nesting and only guards against reading past the end.
type Encoded struct {
	b     []byte
	i     int
	owned bool
}

// Item is one item of an Encoded value. An Array or Object item is
// followed by its Len elements, or its Len members (each a Key, then the
// member's value).
type Item struct {
	Kind Kind
	Bool bool
	Num  float64
	Str  string // KindString
	Len  int    // KindArray and KindObject
}

// ErrNotChecked is returned by Encoded for bytes CheckCBOR would not have
// accepted.
var ErrNotChecked = errors.New("not a checked value encoding")

// NewEncoded reads the value encoded at the start of b. With owned, b is
// the caller's to give away, as for DecodeCBOROwned: strings may share its
// memory.
func NewEncoded(b []byte, owned bool) *Encoded { return &Encoded{b: b, owned: owned} }

// Done reports whether every byte was read.
func (e *Encoded) Done() bool { return e.i == len(e.b) }

// Next reads the next item.
func (e *Encoded) Next() (Item, error) {
	if e.i >= len(e.b) {
		return Item{}, ErrNotChecked
	}
	c := e.b[e.i]
	switch c >> 5 {
	case majorBytes:
		s, err := e.text()
		return Item{Kind: KindString, Str: s}, err
	case majorArray, majorMap:
		_, n, next, err := detcbor.ReadHead(e.b, e.i)
		if err != nil || n > uint64(len(e.b)-next) {
			return Item{}, ErrNotChecked
		}
		e.i = next
		k := KindArray
		if c>>5 == majorMap {
			k = KindObject
		}
		return Item{Kind: k, Len: int(n)}, nil
	}
	e.i++
	switch c {
	case cborUndefined:
		return Item{}, nil
	case cborNull:
		return Item{Kind: KindNull}, nil
	case cborHole:
		return Item{Kind: KindHole}, nil
	case cborFalse:
		return Item{Kind: KindBool}, nil
	case cborTrue:
		return Item{Kind: KindBool, Bool: true}, nil
	case cborFloat64:
		if len(e.b)-e.i < 8 {
			return Item{}, ErrNotChecked
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(e.b[e.i:]))
		e.i += 8
		return Item{Kind: KindNumber, Num: f}, nil
	}
	return Item{}, ErrNotChecked
}

// Key reads an object member's key.
func (e *Encoded) Key() (string, error) {
	if e.i >= len(e.b) || e.b[e.i]>>5 != majorBytes {
		return "", ErrNotChecked
	}
	return e.text()
}

func (e *Encoded) text() (string, error) {
	_, n, next, err := detcbor.ReadHead(e.b, e.i)
	if err != nil || n > uint64(len(e.b)-next) {
		return "", ErrNotChecked
	}
	e.i = next + int(n)
	if n == 0 {
		return "", nil
	}
	if e.owned {
		return unsafe.String(&e.b[next], int(n)), nil
	}
	return string(e.b[next:e.i]), nil
}
