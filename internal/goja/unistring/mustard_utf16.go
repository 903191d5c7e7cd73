package unistring

import "unicode/utf8"

// UTF16Len is the number of UTF-16 code units s stands for in the guest:
// one for each rune ranging over s yields below U+10000 (an invalid byte
// is one U+FFFD), two above. Runs of ASCII are counted eight bytes at a
// time, and two- and three-byte sequences in line.
func UTF16Len(s string) int {
	n, _ := UTF16LenValid(s)
	return n
}

// UTF16LenValid is UTF16Len, and whether s is well-formed UTF-8 (as
// utf8.ValidString tells), from the same pass.
func UTF16LenValid(s string) (int, bool) {
	n, i, valid := 0, 0, true
	for i < len(s) {
		c := s[i]
		switch {
		case c < utf8.RuneSelf:
			if len(s)-i >= 8 && word(s, i)&highBits == 0 {
				n, i = n+8, i+8
			} else {
				n, i = n+1, i+1
			}
		case c >= 0xC2 && c <= 0xDF && len(s)-i >= 2 && s[i+1]&0xC0 == 0x80:
			n, i = n+1, i+2
		case c >= 0xE0 && c <= 0xEF && len(s)-i >= 3 && cont3(c, s[i+1], s[i+2]):
			n, i = n+1, i+3
		default:
			r, w := utf8.DecodeRuneInString(s[i:])
			n, i = n+1, i+w
			if r > 0xFFFF {
				n++
			} else if r == utf8.RuneError && w == 1 {
				valid = false
			}
		}
	}
	return n, valid
}

// fillUTF16 writes s as UTF-16 into buf, which holds UTF16Len(s) units:
// what Scan's range loop wrote, with runs of ASCII taken eight bytes at a
// time and two- and three-byte sequences decoded in line.
func fillUTF16(buf []uint16, s string) {
	k, i := 0, 0
	for i < len(s) {
		c := s[i]
		switch {
		case c < utf8.RuneSelf:
			if len(s)-i >= 8 && len(buf)-k >= 8 {
				if w := word(s, i); w&highBits == 0 {
					b := buf[k : k+8 : k+8]
					b[0], b[1], b[2], b[3] = uint16(byte(w)), uint16(byte(w>>8)), uint16(byte(w>>16)), uint16(byte(w>>24))
					b[4], b[5], b[6], b[7] = uint16(byte(w>>32)), uint16(byte(w>>40)), uint16(byte(w>>48)), uint16(byte(w>>56))
					k, i = k+8, i+8
					continue
				}
			}
			buf[k] = uint16(c)
			k, i = k+1, i+1
		case c >= 0xC2 && c <= 0xDF && len(s)-i >= 2 && s[i+1]&0xC0 == 0x80:
			buf[k] = uint16(c&0x1F)<<6 | uint16(s[i+1]&0x3F)
			k, i = k+1, i+2
		case c >= 0xE0 && c <= 0xEF && len(s)-i >= 3 && cont3(c, s[i+1], s[i+2]):
			buf[k] = uint16(c&0x0F)<<12 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F)
			k, i = k+1, i+3
		default:
			r, w := utf8.DecodeRuneInString(s[i:])
			i += w
			if r <= 0xFFFF {
				buf[k] = uint16(r)
				k++
				continue
			}
			r -= 0x10000
			buf[k], buf[k+1] = uint16(0xD800+(r>>10)&0x3FF), uint16(0xDC00+r&0x3FF)
			k += 2
		}
	}
}

// highBits marks the high bit of each byte of a word: a word is ASCII
// when none is set.
const highBits = 0x8080808080808080

// cont3 reports whether c1 and c2 complete the three-byte lead c
// (E0-EF) well-formed: E0 not overlong (A0-BF next), ED not a surrogate
// (80-9F next), c2 a continuation byte.
func cont3(c, c1, c2 byte) bool {
	lo, hi := byte(0x80), byte(0xBF)
	if c == 0xE0 {
		lo = 0xA0
	} else if c == 0xED {
		hi = 0x9F
	}
	return c1 >= lo && c1 <= hi && c2&0xC0 == 0x80
}
