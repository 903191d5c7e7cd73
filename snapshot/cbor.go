package snapshot

import (
	"encoding/binary"
	"errors"
	"math"
)

// Minimal CBOR (RFC 8949) pieces for the snapshot's outer structure; values
// inside use the value package's codec.

const (
	majorUint  = 0
	majorNint  = 1
	majorBytes = 2
	majorText  = 3
	majorArray = 4
	cborNull   = 0xf6
)

func appendHead(b []byte, major byte, n uint64) []byte {
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

func appendText(b []byte, s string) []byte {
	return append(appendHead(b, majorText, uint64(len(s))), s...)
}

func appendBytes(b []byte, p []byte) []byte {
	return append(appendHead(b, majorBytes, uint64(len(p))), p...)
}

func appendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return appendHead(b, majorUint, uint64(v))
	}
	return appendHead(b, majorNint, uint64(-(v + 1)))
}

var errMalformed = errors.New("malformed snapshot")

type reader struct{ b []byte }

// head reads an item head in shortest form; anything else is malformed.
func (r *reader) head() (major byte, n uint64, err error) {
	if len(r.b) == 0 {
		return 0, 0, errMalformed
	}
	c := r.b[0]
	major, info := c>>5, c&0x1f
	r.b = r.b[1:]
	switch {
	case info < 24:
		return major, uint64(info), nil
	case info == 24 && len(r.b) >= 1:
		n = uint64(r.b[0])
		r.b = r.b[1:]
		if n < 24 {
			return 0, 0, errMalformed
		}
	case info == 25 && len(r.b) >= 2:
		n = uint64(binary.BigEndian.Uint16(r.b))
		r.b = r.b[2:]
		if n <= math.MaxUint8 {
			return 0, 0, errMalformed
		}
	case info == 26 && len(r.b) >= 4:
		n = uint64(binary.BigEndian.Uint32(r.b))
		r.b = r.b[4:]
		if n <= math.MaxUint16 {
			return 0, 0, errMalformed
		}
	case info == 27 && len(r.b) >= 8:
		n = binary.BigEndian.Uint64(r.b)
		r.b = r.b[8:]
		if n <= math.MaxUint32 {
			return 0, 0, errMalformed
		}
	default:
		return 0, 0, errMalformed
	}
	return major, n, nil
}

func (r *reader) expect(major byte) (uint64, error) {
	m, n, err := r.head()
	if err != nil || m != major {
		return 0, errMalformed
	}
	return n, nil
}

func (r *reader) array(n uint64) error {
	got, err := r.expect(majorArray)
	if err != nil || got != n {
		return errMalformed
	}
	return nil
}

func (r *reader) uint() (uint64, error) { return r.expect(majorUint) }

func (r *reader) int() (int64, error) {
	m, n, err := r.head()
	if err != nil || n > math.MaxInt64 {
		return 0, errMalformed
	}
	switch m {
	case majorUint:
		return int64(n), nil
	case majorNint:
		return -int64(n) - 1, nil
	}
	return 0, errMalformed
}

func (r *reader) raw(major byte) ([]byte, error) {
	n, err := r.expect(major)
	if err != nil || n > uint64(len(r.b)) {
		return nil, errMalformed
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p, nil
}

func (r *reader) text() (string, error) {
	p, err := r.raw(majorText)
	return string(p), err
}

func (r *reader) isNull() bool {
	if len(r.b) > 0 && r.b[0] == cborNull {
		r.b = r.b[1:]
		return true
	}
	return false
}
