package goja

import "strings"

// A Go substring shares the memory of the string it is cut from, so an
// ASCII piece a guest keeps would hold its whole source alive while the
// heap walk (mustard_retained.go) counts only the piece: a guest keeping
// two characters of each of many megabyte strings would hold megabytes
// counted as bytes. Pieces are therefore copied, as a non-ASCII piece
// always was, unless they are the whole string. The copy is reported
// where the piece is made (substringBytes).

// asciiPiece returns s[start:end] in memory of its own, s itself when
// the piece is all of it.
func asciiPiece(s asciiString, start, end int) asciiString {
	return ownPiece(s, string(s[start:end]))
}

// ownPiece returns piece, a substring of s, in memory of its own, s
// itself when the piece is all of it.
func ownPiece(s asciiString, piece string) asciiString {
	switch len(piece) {
	case len(s):
		return s
	case 0:
		return ""
	case 1:
		return asciiChars[piece[0]]
	}
	return asciiString(strings.Clone(piece))
}

// asciiChars holds every one-byte string, so that a one-character piece
// (indexing, charAt, split with "") copies nothing.
var asciiChars = func() (t [256]asciiString) {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	all := string(b)
	for i := range t {
		t[i] = asciiString(all[i : i+1])
	}
	return t
}()

// asciiPieceBytes is what asciiPiece allocates for a piece of n bytes of
// s: nothing for the whole string or one character.
func asciiPieceBytes(s String, n int) int {
	if n <= 1 || n >= s.Length() {
		return 0
	}
	return n
}
