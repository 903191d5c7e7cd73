package protocol

import (
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
)

// validJSON reports whether b is exactly one JSON value (RFC 8259) with
// optional whitespace around it, and valid UTF-8: what encoding/json.Valid
// and utf8.Valid together accept, in one pass without a per-byte state
// function, since every request header goes through it (FuzzValidJSON
// checks they agree). Outside strings only ASCII is JSON, so the strings'
// UTF-8 is the only UTF-8 to check: a header that is mostly a long answer
// is not walked a second time for it. Nesting is tracked on an explicit
// stack, so no input can exhaust the Go stack.
func validJSON(b []byte) bool { return validMembers(b, nil) }

// validObject validates a request header as validJSON does and splits it
// as splitObject does, in the same pass: a resume's header is mostly its
// answer, which a split after validating would walk a second time. isObject
// is false for valid JSON that is not an object.
func validObject(b []byte) (f fields, isObject, valid bool) {
	var fb fieldsBuilder
	if !validMembers(b, fb.add) {
		return nil, false, false
	}
	i := jsonscan.SkipSpace(b, 0)
	if b[i] != '{' {
		return nil, false, true
	}
	f, err := fb.done()
	return f, err == nil, true
}

// validMembers is validJSON; when b is an object, it also calls member
// with each of its members (the raw key literal and the raw value) as
// jsonscan.Members would, in order, until member returns false.
func validMembers(b []byte, member func(key, value []byte) bool) bool {
	var inline [32]byte
	stack := inline[:0] // '{' or '[' per open container
	// The top-level member being read, when member is set: its key and
	// where its value starts.
	var key []byte
	valueAt := 0
	i := jsonscan.SkipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{':
			if len(stack) >= maxJSONDepth {
				return false
			}
			i = jsonscan.SkipSpace(b, i+1)
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			stack = append(stack, '{')
			start := i
			keyEnd := 0
			if keyEnd, i = objectKey(b, i); i < 0 {
				return false
			}
			if member != nil && len(stack) == 1 {
				key, valueAt = b[start:keyEnd], i
			}
			continue
		case '[':
			if len(stack) >= maxJSONDepth {
				return false
			}
			i = jsonscan.SkipSpace(b, i+1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			stack = append(stack, '[')
			continue
		case '"':
			if i = scanString(b, i); i < 0 {
				return false
			}
		case 't':
			if i = literal(b, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = literal(b, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = literal(b, i, "null"); i < 0 {
				return false
			}
		default:
			if i = scanNumber(b, i); i < 0 {
				return false
			}
		}
		// A value ended at b[i]: close containers, or go on to the next
		// element or member.
		for {
			if member != nil && len(stack) == 1 && stack[0] == '{' && key != nil {
				if !member(key, b[valueAt:i]) {
					member = nil
				}
				key = nil
			}
			i = jsonscan.SkipSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = jsonscan.SkipSpace(b, i+1)
				if top == '{' {
					start := i
					keyEnd := 0
					if keyEnd, i = objectKey(b, i); i < 0 {
						return false
					}
					if member != nil && len(stack) == 1 {
						key, valueAt = b[start:keyEnd], i
					}
				}
				break
			}
			if top == '{' && b[i] == '}' || top == '[' && b[i] == ']' {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return false
		}
	}
}

// maxJSONDepth is encoding/json's nesting bound, an empty container at the
// deepest level included.
const maxJSONDepth = 10000

// objectKey reads `"key" :` at b[i] and returns where the key ends and
// where the member's value starts; valueAt is -1 if they are not there.
func objectKey(b []byte, i int) (keyEnd, valueAt int) {
	if i >= len(b) || b[i] != '"' {
		return 0, -1
	}
	if keyEnd = scanString(b, i); keyEnd < 0 {
		return 0, -1
	}
	i = jsonscan.SkipSpace(b, keyEnd)
	if i >= len(b) || b[i] != ':' {
		return 0, -1
	}
	return keyEnd, jsonscan.SkipSpace(b, i+1)
}

// scanString returns the index just past the valid string literal at b[i],
// valid UTF-8 included, or -1.
func scanString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		if i = jsonscan.PlainRun(b, i); i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return -1
			}
			i += size - 1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber returns the index just past the number at b[i], or -1:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i
}
