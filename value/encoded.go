package value

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
)

// Encoded reads a value's binary form item by item, without building the
// value: the engine imports an answer into the guest from it, a resume's
// (TranscodeJSON) and a replay's (a journal's record) alike, where a
// decoded answer of structured data took many times its encoding as a
// Value tree that lived only until it was imported.
//
// The bytes must be a value CheckCBOR accepted; Encoded trusts its
// lengths and nesting and only guards against reading past the end.
type Encoded struct {
	b     []byte
	i     int
	owned bool
	view  bool              // NewEncodedView: every string shares b
	keys  map[string]string // short keys read so far: records repeat them
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

// ErrNotChecked is returned when Encoded meets bytes that are not a value's
// binary form. It does not look for everything CheckCBOR refuses: it is
// for bytes already checked.
var ErrNotChecked = errors.New("not a checked value encoding")

// NewEncoded reads the value encoded at the start of b. With owned, b is
// the caller's to give away, as for DecodeCBOROwned: a string that is most
// of it shares its memory instead of being copied.
func NewEncoded(b []byte, owned bool) *Encoded { return &Encoded{b: b, owned: owned} }

// NewEncodedView reads the value encoded at the start of b to look at it,
// not to keep it: every string it returns shares b's memory and is valid
// only while b is unchanged. Counting what a value will take reads it so
// without copying anything.
func NewEncodedView(b []byte) *Encoded { return &Encoded{b: b, view: true} }

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

// Key reads an object member's key. A short key read before is the same
// string again, as ParseJSON interns them.
func (e *Encoded) Key() (string, error) {
	if e.i >= len(e.b) || e.b[e.i]>>5 != majorBytes {
		return "", ErrNotChecked
	}
	_, n, next, err := detcbor.ReadHead(e.b, e.i)
	if err != nil || n > uint64(len(e.b)-next) || n > maxInternedKeyLen || e.view {
		return e.text()
	}
	kb := e.b[next : next+int(n)]
	if k, ok := e.keys[string(kb)]; ok {
		e.i = next + int(n)
		return k, nil
	}
	k, err := e.text()
	if err == nil && len(e.keys) < maxInternedKeys {
		if e.keys == nil {
			e.keys = make(map[string]string, 16)
		}
		e.keys[k] = k
	}
	return k, err
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
	if e.view || e.owned && sharesWhole(int(n), cap(e.b)) {
		return unsafe.String(&e.b[next], int(n)), nil
	}
	return string(e.b[next:e.i]), nil
}

// sharesWhole reports whether a string of n bytes may share the memory of
// an owned encoding in size bytes (its capacity): only when it is most of
// it. A string
// that shares the memory keeps all of it alive, and a guest that kept a
// short string from each of many large answers would otherwise hold every
// answer whole while its heap counts only the strings.
func sharesWhole(n, size int) bool { return 2*n >= size }
