package value

import (
	"strings"
	"unicode/utf8"
)

// Surrogate ranges of UTF-16.
const (
	surrHighMin = 0xD800
	surrLowMin  = 0xDC00
	surrMax     = 0xDFFF
)

// FromUTF16 converts UTF-16 code units (a JavaScript string) to WTF-8.
// Surrogate pairs become the 4-byte UTF-8 form; an unpaired surrogate is
// kept as its 3-byte generalized UTF-8 sequence so the conversion is lossless.
func FromUTF16(u []uint16) string {
	n := 0
	ascii := true
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c < 0x80:
			n++
			continue
		case c < 0x800:
			n += 2
		case c >= surrHighMin && c < surrLowMin && i+1 < len(u) && u[i+1] >= surrLowMin && u[i+1] <= surrMax:
			n += 4
			i++
		default:
			n += 3
		}
		ascii = false
	}
	var sb strings.Builder
	sb.Grow(n)
	if ascii {
		for _, c := range u {
			sb.WriteByte(byte(c))
		}
		return sb.String()
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c < 0x80:
			sb.WriteByte(byte(c))
		case c < 0x800:
			sb.WriteByte(0xC0 | byte(c>>6))
			sb.WriteByte(0x80 | byte(c&0x3F))
		case c >= surrHighMin && c < surrLowMin && i+1 < len(u) && u[i+1] >= surrLowMin && u[i+1] <= surrMax:
			r := 0x10000 + (rune(c-surrHighMin)<<10 | rune(u[i+1]-surrLowMin))
			sb.WriteByte(0xF0 | byte(r>>18))
			sb.WriteByte(0x80 | byte(r>>12)&0x3F)
			sb.WriteByte(0x80 | byte(r>>6)&0x3F)
			sb.WriteByte(0x80 | byte(r)&0x3F)
			i++
		default:
			// Any other BMP unit, including an unpaired surrogate.
			sb.WriteByte(0xE0 | byte(c>>12))
			sb.WriteByte(0x80 | byte(c>>6)&0x3F)
			sb.WriteByte(0x80 | byte(c)&0x3F)
		}
	}
	return sb.String()
}

// ToUTF16 converts WTF-8 to UTF-16 code units, the inverse of FromUTF16.
// Bytes that are not WTF-8 each become U+FFFD, as in a UTF-8 decoder.
func ToUTF16(s string) []uint16 {
	out := make([]uint16, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			out = append(out, uint16(c))
			i++
			continue
		}
		if u, ok := surrogateAt(s, i); ok {
			out = append(out, u)
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(surrHighMin+(r>>10)), uint16(surrLowMin+(r&0x3FF)))
		} else {
			out = append(out, uint16(r))
		}
		i += size
	}
	return out
}

// surrogateAt reports whether s[i:] starts with the 3-byte generalized
// UTF-8 encoding of a surrogate, and returns that code unit.
func surrogateAt(s string, i int) (uint16, bool) {
	if len(s)-i < 3 || s[i] != 0xED || s[i+1] < 0xA0 || s[i+1] > 0xBF || s[i+2]&0xC0 != 0x80 {
		return 0, false
	}
	return 0xD000 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F), true
}

// ValidWTF8 reports whether s is well-formed WTF-8: valid UTF-8 plus
// unpaired surrogates. A high surrogate directly followed by a low one is
// rejected because that pair has to be written in its 4-byte form; allowing
// both spellings would give one JavaScript string two encodings.
func ValidWTF8(s string) bool {
	if utf8.ValidString(s) {
		return true
	}
	prevHigh := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			prevHigh = false
			i++
			continue
		}
		if u, ok := surrogateAt(s, i); ok {
			high := u < surrLowMin
			if !high && prevHigh {
				return false
			}
			prevHigh = high
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		prevHigh = false
		i += size
	}
	return true
}

// IsASCII reports whether s holds only 7-bit bytes, in which case its
// UTF-16 form has exactly one code unit per byte.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
