// Package detcbor is the deterministic CBOR (RFC 8949 §4.2) the sidecar's
// byte formats share: item heads in shortest form and a strict reader over
// them. The value, snapshot and policy formats build on it; what the items
// mean is theirs.
package detcbor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Major types.
const (
	MajorUint   byte = 0
	MajorNint   byte = 1
	MajorBytes  byte = 2
	MajorText   byte = 3
	MajorArray  byte = 4
	MajorMap    byte = 5
	MajorTag    byte = 6
	MajorSimple byte = 7
)

// The one-byte items false, true and null.
const (
	False = 0xf4
	True  = 0xf5
	Null  = 0xf6
)

// AppendHead writes a major type and argument in shortest form.
func AppendHead(b []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(b, m|byte(n))
	case n <= math.MaxUint8:
		return append(b, m|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, m|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, m|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, m|27), n)
}

// AppendUint writes an unsigned integer.
func AppendUint(b []byte, v uint64) []byte { return AppendHead(b, MajorUint, v) }

// AppendInt writes a signed integer.
func AppendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return AppendHead(b, MajorUint, uint64(v))
	}
	return AppendHead(b, MajorNint, uint64(-(v + 1)))
}

// AppendText writes a text string (the caller guarantees UTF-8).
func AppendText(b []byte, s string) []byte {
	return append(AppendHead(b, MajorText, uint64(len(s))), s...)
}

// AppendBytes writes a byte string.
func AppendBytes(b []byte, p []byte) []byte {
	return append(AppendHead(b, MajorBytes, uint64(len(p))), p...)
}

// Errors, each wrapped in an *Error that says where.
var (
	ErrTruncated   = errors.New("unexpected end of data")
	ErrIndefinite  = errors.New("indefinite-length item")
	ErrReserved    = errors.New("malformed item header")
	ErrNonShortest = errors.New("non-shortest length")
	ErrType        = errors.New("unexpected item type")
	ErrLength      = errors.New("unexpected item length")
	ErrRange       = errors.New("integer out of range")
)

// Error is a decoding failure at a byte offset of the input.
type Error struct {
	Offset int
	Err    error
}

func (e *Error) Error() string { return fmt.Sprintf("%v at byte %d", e.Err, e.Offset) }
func (e *Error) Unwrap() error { return e.Err }

// ReadHead reads the head of the item at b[at:]: its major type, its
// argument (for major 7, the simple value or float bits) and where its
// content starts. Only the shortest form is accepted.
func ReadHead(b []byte, at int) (major byte, n uint64, next int, err error) {
	if at >= len(b) {
		return 0, 0, 0, &Error{len(b), ErrTruncated}
	}
	c := b[at]
	major, ai := c>>5, c&31
	var size int
	switch {
	case ai < 24:
		return major, uint64(ai), at + 1, nil
	case ai == 24:
		size = 1
	case ai == 25:
		size = 2
	case ai == 26:
		size = 4
	case ai == 27:
		size = 8
	case ai == 31:
		return 0, 0, 0, &Error{at, ErrIndefinite}
	default:
		return 0, 0, 0, &Error{at, ErrReserved}
	}
	if len(b)-at-1 < size {
		return 0, 0, 0, &Error{len(b), ErrTruncated}
	}
	p := b[at+1 : at+1+size]
	var min uint64
	switch size {
	case 1:
		n, min = uint64(p[0]), 24
	case 2:
		n, min = uint64(binary.BigEndian.Uint16(p)), 1<<8
	case 4:
		n, min = uint64(binary.BigEndian.Uint32(p)), 1<<16
	default:
		n, min = binary.BigEndian.Uint64(p), 1<<32
	}
	// Floats (major 7) have fixed widths, not lengths: shortest form does
	// not apply to their bits.
	if n < min && major != MajorSimple {
		return 0, 0, 0, &Error{at, ErrNonShortest}
	}
	return major, n, at + 1 + size, nil
}

// Reader reads items strictly from the front of a byte slice. Its methods
// return *Error values that carry the offset from the reader's start.
type Reader struct {
	b   []byte
	off int
}

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Offset is how many bytes have been read.
func (r *Reader) Offset() int { return r.off }

// Consumed is the bytes read since offset start.
func (r *Reader) Consumed(start int) []byte { return r.b[start:r.off] }

// Rest is the unread bytes.
func (r *Reader) Rest() []byte { return r.b[r.off:] }

// Len is the number of unread bytes.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Skip marks the next n bytes read (n must not exceed Len): for items
// decoded elsewhere from Rest.
func (r *Reader) Skip(n int) { r.off += n }

// Head reads the next item's head.
func (r *Reader) Head() (major byte, n uint64, err error) {
	major, n, next, err := ReadHead(r.b, r.off)
	if err != nil {
		return 0, 0, err
	}
	r.off = next
	return major, n, nil
}

// Peek reports the next item's major type without reading it.
func (r *Reader) Peek() (major byte, ok bool) {
	if r.off >= len(r.b) {
		return 0, false
	}
	return r.b[r.off] >> 5, true
}

// Expect reads a head of the given major type.
func (r *Reader) Expect(major byte) (uint64, error) {
	at := r.off
	m, n, err := r.Head()
	if err != nil {
		return 0, err
	}
	if m != major {
		r.off = at
		return 0, &Error{at, ErrType}
	}
	return n, nil
}

// Array reads the head of an array of exactly n items.
func (r *Reader) Array(n uint64) error {
	at := r.off
	got, err := r.Expect(MajorArray)
	if err != nil {
		return err
	}
	if got != n {
		r.off = at
		return &Error{at, ErrLength}
	}
	return nil
}

// Uint reads an unsigned integer.
func (r *Reader) Uint() (uint64, error) { return r.Expect(MajorUint) }

// Int reads an integer that fits an int64.
func (r *Reader) Int() (int64, error) {
	at := r.off
	m, n, err := r.Head()
	if err != nil {
		return 0, err
	}
	switch {
	case m != MajorUint && m != MajorNint:
		r.off = at
		return 0, &Error{at, ErrType}
	case n > math.MaxInt64:
		r.off = at
		return 0, &Error{at, ErrRange}
	case m == MajorNint:
		return -int64(n) - 1, nil
	}
	return int64(n), nil
}

// Raw reads a byte or text string's content (aliasing the input).
func (r *Reader) Raw(major byte) ([]byte, error) {
	at := r.off
	n, err := r.Expect(major)
	if err != nil {
		return nil, err
	}
	if n > uint64(r.Len()) {
		r.off = at
		return nil, &Error{len(r.b), ErrTruncated}
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p, nil
}

// Text reads a text string's content. UTF-8 is the caller's to check.
func (r *Reader) Text() (string, error) {
	p, err := r.Raw(MajorText)
	return string(p), err
}

// Bool reads a boolean.
func (r *Reader) Bool() (bool, error) {
	if r.off < len(r.b) {
		switch r.b[r.off] {
		case False:
			r.off++
			return false, nil
		case True:
			r.off++
			return true, nil
		}
	}
	return false, ErrType
}

// Null reads a null if one is next.
func (r *Reader) Null() bool {
	if r.off < len(r.b) && r.b[r.off] == Null {
		r.off++
		return true
	}
	return false
}
