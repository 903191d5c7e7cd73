// Package jsonscan walks JSON text that is already known to be valid
// (checked by a validator, or written by the sidecar itself) without
// decoding it: positions in, positions out, nothing allocated. The
// request decoder splits objects with it, and so does the benchmark host
// when it reads responses, so both stay off encoding/json's reflection.
//
// None of these functions validates: on invalid input they return some
// position within b, never panic, and never loop forever.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// SkipSpace returns the index of the first non-space byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index just past the string starting at b[i]. It
// looks for the closing quote eight bytes at a time, so a long string
// costs a pass at word speed even when it is dense with escaped quotes, as
// JSON carried inside JSON is (a tool's answer, a document).
func SkipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		if i = quote(b, i); i >= len(b) {
			return len(b)
		}
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
	}
	return len(b)
}

// quote returns the index of the first '"' at or after i, or len(b).
func quote(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; len(b)-i >= 8; i += 8 {
		q := binary.LittleEndian.Uint64(b[i:]) ^ 0x2222222222222222 // a zero byte where there is '"'
		// Borrows only run upwards from a zero byte, so the lowest bit
		// set marks the first quote.
		if m := (q - ones) &^ q & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b) && b[i] != '"'; i++ {
	}
	return i
}

// SkipValue returns the index just past the value starting at b[i].
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = SkipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// PlainString returns the contents of a JSON string literal that needs no
// unescaping; ok is false when it must go through a full decoder.
func PlainString(raw []byte) (string, bool) {
	body, ok := PlainBytes(raw)
	return string(body), ok
}

// PlainBytes is PlainString without the copy: the contents alias raw.
func PlainBytes(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			return nil, false
		}
	}
	return body, true
}

// Members calls fn with each member of the object at the start of b (after
// any space): its key as a raw string literal, quotes included, and its raw
// value. It stops early when fn returns false, and reports false when b
// does not start with an object.
func Members(b []byte, fn func(key, value []byte) bool) bool {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	for i = SkipSpace(b, i+1); i < len(b) && b[i] == '"'; {
		end := SkipString(b, i)
		key := b[i:end]
		i = SkipSpace(b, SkipSpace(b, end)+1) // ':'
		vend := SkipValue(b, i)
		if !fn(key, b[i:vend]) {
			return true
		}
		i = SkipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = SkipSpace(b, i+1)
	}
	return true
}

// Elements calls fn with each element of the array at the start of b
// (after any space), raw. It stops early when fn returns false, and
// reports false when b does not start with an array.
func Elements(b []byte, fn func(elem []byte) bool) bool {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	for i = SkipSpace(b, i+1); i < len(b) && b[i] != ']'; {
		end := SkipValue(b, i)
		if end == i || !fn(b[i:end]) {
			return true
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = SkipSpace(b, i+1)
	}
	return true
}

// PlainRun returns the index of the first byte at or after i that a JSON
// string's scanner has to look at: a quote, a backslash, a control
// character or a byte of a multi-byte UTF-8 sequence; len(b) if there is
// none. It looks at eight bytes at a time.
func PlainRun(b []byte, i int) int {
	for ; len(b)-i >= 8; i += 8 {
		if m := Specials(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// Specials marks, in the word x of eight bytes read little-endian, the
// bytes PlainRun stops at: the high bit of each such byte is set in the
// result, and the lowest bit set is the first one
// (bits.TrailingZeros64(m)/8 is its index). Higher marks may be false
// positives. It is small enough to inline into a decoder's loop.
func Specials(x uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	q := x ^ 0x2222222222222222 // a zero byte where x has '"'
	s := x ^ 0x5c5c5c5c5c5c5c5c // where x has '\\'
	// A byte's high bit is set if it is zero in q or s, below 0x20 in x,
	// or has its own high bit set. Borrows only run from a byte that is
	// one of those upwards, so the lowest bit set is the first such byte.
	return ((q-ones)&^q | (s-ones)&^s | (x-0x2020202020202020)&^x | x) & highs
}

// SpecialsBlock returns a mask of the bytes of b[:64] PlainRun stops at:
// bit j is set if and only if b[j] is one. Unlike Specials it marks no
// byte falsely, so a decoder can walk the mask's bits without looking at
// the bytes between them. b must hold at least 64 bytes.
func SpecialsBlock[T []byte | string](b T) uint64 {
	_ = b[63]
	return gatherHighs(specialsExact(Word(b, 0))) |
		gatherHighs(specialsExact(Word(b, 8)))<<8 |
		gatherHighs(specialsExact(Word(b, 16)))<<16 |
		gatherHighs(specialsExact(Word(b, 24)))<<24 |
		gatherHighs(specialsExact(Word(b, 32)))<<32 |
		gatherHighs(specialsExact(Word(b, 40)))<<40 |
		gatherHighs(specialsExact(Word(b, 48)))<<48 |
		gatherHighs(specialsExact(Word(b, 56)))<<56
}

// Word is the eight bytes of b from i, little-endian: one load, for a
// string as for a []byte.
func Word[T []byte | string](b T, i int) uint64 {
	_ = b[i+7]
	return uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
		uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
}

// specialsExact is Specials without false marks: each byte's tests are
// made on its low seven bits, where an addition cannot carry into the
// next byte.
func specialsExact(x uint64) uint64 {
	const (
		lows  = 0x7f7f7f7f7f7f7f7f
		highs = 0x8080808080808080
	)
	// Adding 0x7f to a byte's low bits sets its high bit unless they are
	// all zero (the byte is '"' in t^0x22.., '\\' in t^0x5c..); adding
	// 0x60 sets it unless the byte is below 0x20. A byte with its high
	// bit clear in all three is one of those, and one with its own high
	// bit set (x) is part of a multi-byte sequence.
	t := x & lows
	q := (t ^ 0x2222222222222222) + lows
	s := (t ^ 0x5c5c5c5c5c5c5c5c) + lows
	c := t + 0x6060606060606060
	return (^(q & s & c) | x) & highs
}

// gatherHighs moves the high bit of each byte of m, which has no other
// bit set, to bit j of the result for byte j.
func gatherHighs(m uint64) uint64 {
	return (m >> 7) * 0x0102040810204080 >> 56
}
