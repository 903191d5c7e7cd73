// Package unistring contains an implementation of a hybrid ASCII/UTF-16 string.
// For ASCII strings the underlying representation is equivalent to a normal Go string.
// For unicode strings the underlying representation is UTF-16 as []uint16 with 0th element set to 0xFEFF.
// unicode.String allows representing malformed UTF-16 values (e.g. stand-alone parts of surrogate pairs)
// which cannot be represented in UTF-8.
// At the same time it is possible to use unicode.String as property keys just as efficiently as simple strings,
// (the leading 0xFEFF ensures there is no clash with ASCII string), and it is possible to convert it
// to valueString without extra allocations.
package unistring

import (
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

const (
	BOM = 0xFEFF
)

type String string

// Scan checks if the string contains any unicode characters. If it does, converts to an array suitable for creating
// a String using FromUtf16, otherwise returns nil.
func Scan(s string) []uint16 {
	utf16Size := ASCIIPrefix(s) // mustard(unistring-ascii)
	if utf16Size < len(s) {
		goto unicode
	}
	return nil
unicode:
	// mustard(unistring-utf16): counted and converted by the loops of
	// mustard_utf16.go, which take ASCII a word at a time, instead of two
	// range loops.
	buf := make([]uint16, 1+utf16Size+UTF16Len(s[utf16Size:])) // mustard(unistring-utf16)
	buf[0] = BOM
	fillUTF16(buf[1:], s) // mustard(unistring-utf16)
	return buf
}

func NewFromString(s string) String {
	if buf := Scan(s); buf != nil {
		return FromUtf16(buf)
	}
	return String(s)
}

func NewFromRunes(s []rune) String {
	ascii := true
	size := 0
	for _, c := range s {
		if c >= utf8.RuneSelf {
			ascii = false
			if c > 0xFFFF {
				size++
			}
		}
		size++
	}
	if ascii {
		return String(s)
	}
	b := make([]uint16, size+1)
	b[0] = BOM
	i := 1
	for _, c := range s {
		if c <= 0xFFFF {
			b[i] = uint16(c)
		} else {
			first, second := utf16.EncodeRune(c)
			b[i] = uint16(first)
			i++
			b[i] = uint16(second)
		}
		i++
	}
	return FromUtf16(b)
}

func FromUtf16(b []uint16) String {
	return String(unsafe.String((*byte)(unsafe.Pointer(&b[0])), len(b)*2))
}

func (s String) String() string {
	if b := s.AsUtf16(); b != nil {
		return string(utf16.Decode(b[1:]))
	}

	return string(s)
}

func (s String) AsUtf16() []uint16 {
	if len(s) < 4 || len(s)&1 != 0 {
		return nil
	}

	a := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.StringData(string(s)))), len(s)/2)

	if a[0] == BOM {
		return a
	}

	return nil
}

// ASCIIPrefix is the length of s's leading run of ASCII bytes (len(s) when
// s is ASCII). It reads 32 bytes at a time while none has its high bit
// set, then eight: a tool's answer of 50 KB is checked in a few
// microseconds. // mustard(unistring-ascii)
func ASCIIPrefix(s string) int {
	const highs = 0x8080808080808080
	i := 0
	for ; len(s)-i >= 32; i += 32 {
		if (word(s, i)|word(s, i+8)|word(s, i+16)|word(s, i+24))&highs != 0 {
			break
		}
	}
	for ; len(s)-i >= 8; i += 8 {
		if word(s, i)&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// word is the eight bytes of s at i, little-endian: one load.
// mustard(unistring-ascii)
func word(s string, i int) uint64 {
	p := s[i : i+8]
	return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
		uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
}
