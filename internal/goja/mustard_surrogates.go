package goja

import (
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

// Lone surrogates through string methods that change nothing (a
// mustard-sidecar fix; see PATCHES.md). normalize, toUpperCase,
// toLowerCase and the trims worked on the string converted to UTF-8, where
// a lone surrogate (an unpaired UTF-16 half, which a JavaScript string may
// hold) has no encoding and became U+FFFD: `'a\ud800b'.normalize()` lost
// the \ud800 that a host answer had carried in intact. They now apply to
// the well-formed runs between lone surrogates and keep those as they are;
// the trims work on UTF-16 units directly.

// loneSurrogateAt reports whether s's unit at i is a surrogate without
// its pair.
func loneSurrogateAt(s String, i int) bool {
	c := uint16(s.CharAt(i))
	switch {
	case isUTF16FirstSurrogate(c):
		return i+1 >= s.Length() || !isUTF16SecondSurrogate(uint16(s.CharAt(i+1)))
	case isUTF16SecondSurrogate(c):
		return i == 0 || !isUTF16FirstSurrogate(uint16(s.CharAt(i-1)))
	}
	return false
}

// hasLoneSurrogate reports whether s holds a lone surrogate.
func hasLoneSurrogate(s String) bool {
	if _, ascii := s.(asciiString); ascii {
		return false
	}
	for i := 0; i < s.Length(); i++ {
		if loneSurrogateAt(s, i) {
			return true
		}
	}
	return false
}

// mapWellFormed applies f to each run of s between lone surrogates,
// keeping the lone surrogates as they are.
func mapWellFormed(s String, f func(string) string) String {
	var b StringBuilder
	start := 0
	flush := func(end int) {
		if end > start {
			b.WriteUTF8String(f(s.Substring(start, end).String()))
		}
	}
	for i := 0; i < s.Length(); i++ {
		if loneSurrogateAt(s, i) {
			flush(i)
			b.WriteSubstring(s, i, i+1)
			start = i + 1
		}
	}
	flush(s.Length())
	return b.String()
}

// transformString is f on s as a Go string, or run by run when s holds a
// lone surrogate.
func transformString(s String, f func(string) string) String {
	if hasLoneSurrogate(s) {
		return mapWellFormed(s, f)
	}
	return newStringValue(f(s.String()))
}

// trimUnits trims JavaScript whitespace (all of it in the BMP) from s's
// UTF-16 units, at the start, the end or both. What is left is a copy
// unless it is all of s (mustard_substrings.go).
func (r *Runtime) trimUnits(s String, start, end bool) String {
	isSpace := func(i int) bool {
		c := s.CharAt(i)
		return !isUTF16FirstSurrogate(uint16(c)) && !isUTF16SecondSurrogate(uint16(c)) &&
			strings.ContainsRune(parser.WhitespaceChars, rune(c))
	}
	i, j := 0, s.Length()
	for start && i < j && isSpace(i) {
		i++
	}
	for end && j > i && isSpace(j-1) {
		j--
	}
	if isASCIIKind(s) { // scanCopy reported the copy of any other
		r.produce(asciiPieceBytes(s, j-i))
	}
	return s.Substring(i, j)
}
