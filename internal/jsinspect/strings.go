package jsinspect

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

// unitsOf is a guest string's UTF-16 code units.
func unitsOf(s goja.String) []uint16 {
	n := s.Length()
	u := make([]uint16, n)
	if goja.IsASCII(s) {
		str := s.String()
		for i := 0; i < n; i++ {
			u[i] = uint16(str[i])
		}
		return u
	}
	for i := 0; i < n; i++ {
		u[i] = s.CharAt(i)
	}
	return u
}

// utf16ToString is the UTF-8 text of code units, a lone surrogate becoming
// U+FFFD (as it does when Node writes the line).
func utf16ToString(u []uint16) string {
	ascii := true
	for _, c := range u {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		b := make([]byte, len(u))
		for i, c := range u {
			b[i] = byte(c)
		}
		return string(b)
	}
	return string(utf16.Decode(u))
}

// jsString is the text of a primitive string value (or v.String() of any
// other primitive).
func jsString(v goja.Value) string {
	if s, ok := v.(goja.String); ok {
		if _, isObj := v.(*goja.Object); !isObj {
			return utf16ToString(unitsOf(s))
		}
	}
	return v.String()
}

// keyUnits is a string property key's code units.
func keyUnits(k goja.Value) []uint16 {
	if s, ok := k.(goja.String); ok {
		return unitsOf(s)
	}
	return utf16.Encode([]rune(k.String()))
}

// symbolString is Symbol.prototype.toString: Symbol(description).
func symbolString(s *goja.Symbol) string {
	d := s.String()
	if strings.HasPrefix(d, "Symbol(") {
		return d
	}
	return "Symbol(" + d + ")"
}

// jsLen is the UTF-16 length of UTF-8 text (what .length gives in Node).
func jsLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size - 1
	}
	return n
}

// stringWidth is the columns text takes on a terminal, as Node's
// getStringWidth counts them (East Asian wide characters two, combining
// and control characters none).
func stringWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case r < 0x7f:
			if r >= 32 {
				w++
			}
		case isZeroWidth(r):
		case isFullWidth(r):
			w += 2
		default:
			w++
		}
	}
	return w
}

func isZeroWidth(c rune) bool {
	return c <= 0x1F || (c >= 0x7F && c <= 0x9F) || (c >= 0x300 && c <= 0x36F) ||
		(c >= 0x200B && c <= 0x200F) || (c >= 0x20D0 && c <= 0x20FF) ||
		(c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xFE20 && c <= 0xFE2F) ||
		(c >= 0xE0100 && c <= 0xE01EF)
}

func isFullWidth(c rune) bool {
	return c >= 0x1100 && (c <= 0x115f || c == 0x2329 || c == 0x232a ||
		(c >= 0x2e80 && c <= 0x3247 && c != 0x303f) ||
		(c >= 0x3250 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0xa4c6) ||
		(c >= 0xa960 && c <= 0xa97c) || (c >= 0xac00 && c <= 0xd7a3) ||
		(c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe10 && c <= 0xfe19) ||
		(c >= 0xfe30 && c <= 0xfe6b) || (c >= 0xff01 && c <= 0xff60) ||
		(c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1b000 && c <= 0x1b001) ||
		(c >= 0x1f200 && c <= 0x1f251) || (c >= 0x1f300 && c <= 0x1f64f) ||
		(c >= 0x20000 && c <= 0x3fffd))
}

// meta is Node's escape of a code unit below 0xA0 ("" = kept).
var meta = func() [0xa0]string {
	var m [0xa0]string
	for i := 0; i < 0x20; i++ {
		m[i] = fmt.Sprintf(`\x%02X`, i)
	}
	m['\b'], m['\t'], m['\n'], m['\f'], m['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	m['\''] = `\'`
	m['\\'] = `\\`
	for i := 0x7f; i < 0xa0; i++ {
		m[i] = fmt.Sprintf(`\x%02X`, i)
	}
	return m
}()

// escapeAll replaces every unit strEscapeSequencesReplacer matches (the
// controls, ', \, C1 controls and lone surrogates) with its escape.
func escapeAll(u []uint16) string {
	return escapeUnits(u, '\'')
}

// escapeUnits escapes controls, the backslash, quote (when not 0) and
// lone surrogates.
func escapeUnits(u []uint16, quote uint16) string {
	var b strings.Builder
	last := 0
	flush := func(i int) {
		if last < i {
			b.WriteString(utf16ToString(u[last:i]))
		}
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		if (c == quote && quote != 0) || c == '\\' || c < 32 || (c > 126 && c < 160) {
			flush(i)
			b.WriteString(meta[c])
			last = i + 1
		} else if c >= 0xd800 && c <= 0xdfff {
			if c <= 0xdbff && i+1 < len(u) && u[i+1] >= 0xdc00 && u[i+1] <= 0xdfff {
				i++
				continue
			}
			flush(i)
			fmt.Fprintf(&b, `\u%x`, c)
			last = i + 1
		}
	}
	flush(len(u))
	return b.String()
}

func containsUnit(u []uint16, c uint16) bool {
	for _, x := range u {
		if x == c {
			return true
		}
	}
	return false
}

// strEscape quotes a string as Node does: single quotes, unless the text
// holds one and no double quote (then double quotes), or holds both and
// no backtick or ${ (then backticks).
func strEscape(u []uint16) string {
	quote := uint16('\'')
	open := "'"
	if containsUnit(u, '\'') {
		if !containsUnit(u, '"') {
			quote, open = 0, `"`
		} else if !containsUnit(u, '`') && !containsDollarBrace(u) {
			quote, open = 0, "`"
		}
	}
	return open + escapeUnits(u, quote) + open
}

func containsDollarBrace(u []uint16) bool {
	for i := 0; i+1 < len(u); i++ {
		if u[i] == '$' && u[i+1] == '{' {
			return true
		}
	}
	return false
}

// isoString is Date.prototype.toISOString for a valid time value.
func isoString(ms float64) string {
	t := time.UnixMilli(int64(ms)).UTC()
	y := t.Year()
	var ys string
	switch {
	case y >= 0 && y <= 9999:
		ys = fmt.Sprintf("%04d", y)
	case y < 0:
		ys = fmt.Sprintf("-%06d", -y)
	default:
		ys = fmt.Sprintf("+%06d", y)
	}
	return fmt.Sprintf("%s-%02d-%02dT%02d:%02d:%02d.%03dZ", ys, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1e6)
}
