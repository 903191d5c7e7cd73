package protocol

import (
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
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
// is false for valid JSON that is not an object. A payload object among
// its members, and each answer of a batch, are split in the same pass too
// (splitValue): a payload's value is transcoded instead of validated (what
// TranscodeJSON accepts is valid JSON), and the field keeps the result.
func validObject(b []byte) (f fields, isObject, valid bool) {
	var fb fieldsBuilder
	i := jsonscan.SkipSpace(b, 0)
	end := validValue(b, i, 0, fb.add, fb.readMembers(b, 1))
	if end < 0 || jsonscan.SkipSpace(b, end) != len(b) {
		return nil, false, false
	}
	if b[i] != '{' {
		return nil, false, true
	}
	f, err := fb.done()
	return f, err == nil, true
}

// readMember reads a request's payload or answers, the value of the
// member key at b[at] (depth containers deep), when it is one: it returns
// where the valid value ends and what it read, or -1 to leave the value
// to validValue.
func readMember(b []byte, key []byte, at, depth int) (int, *splitValue) {
	switch {
	case string(key) == `"`+wire.FieldPayload+`"` && b[at] == '{':
		return readPayload(b, at, depth)
	case string(key) == `"`+wire.FieldAnswers+`"` && b[at] == '[' && depth == 1:
		if end, a := validAnswers(b, at, depth); end >= 0 {
			return end, &splitValue{answers: a}
		}
	}
	return -1, nil
}

// readMembers is validValue's read hook for an object whose members are
// depth containers deep: readMember, what it read going to the member fb
// takes next.
func (fb *fieldsBuilder) readMembers(b []byte, depth int) func(key []byte, at int) int {
	return func(key []byte, at int) int {
		end, split := readMember(b, key, at, depth)
		fb.pending = split
		return end
	}
}

// readPayload validates and splits the payload object at b[at] (depth
// containers deep) as validPayload does: where it ends and what it read,
// or -1.
func readPayload(b []byte, at, depth int) (int, *splitValue) {
	sv := &splitValue{}
	if end := validPayload(b, at, depth, &sv.read); end >= 0 {
		sv.payload = &sv.read
		return end, sv
	}
	return -1, nil
}

// validMembers is validJSON; when b is an object, it also calls member
// with each of its members (the raw key literal and the raw value) as
// jsonscan.Members would, in order, until member returns false.
func validMembers(b []byte, member func(key, value []byte) bool) bool {
	end := validValue(b, jsonscan.SkipSpace(b, 0), 0, member, nil)
	return end >= 0 && jsonscan.SkipSpace(b, end) == len(b)
}

// validValue returns the index just past the valid JSON value at b[i], or
// -1; depth is how deeply it is nested. When the value is an object and
// member is set, it calls member with each of the object's members, as
// validMembers does; read, if set, is offered each member's value first
// (its key, where the value starts) and returns where the valid value it
// read ends, or -1 to have it validated here.
func validValue(b []byte, i, depth int, member func(key, value []byte) bool, read func(key []byte, at int) int) int {
	var inline [32]byte
	stack := inline[:0] // '{' or '[' per open container
	// The top-level member being read, when member is set: its key and
	// where its value starts.
	var key []byte
	valueAt := 0
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return -1
		}
		if key != nil && read != nil && len(stack) == 1 {
			if end := read(key, i); end >= 0 {
				i = end
				goto ended
			}
		}
		switch c := b[i]; c {
		case '{':
			if depth+len(stack) >= maxJSONDepth {
				return -1
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
				return -1
			}
			if member != nil && len(stack) == 1 {
				key, valueAt = b[start:keyEnd], i
			}
			continue
		case '[':
			if depth+len(stack) >= maxJSONDepth {
				return -1
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
				return -1
			}
		case 't':
			if i = literal(b, i, "true"); i < 0 {
				return -1
			}
		case 'f':
			if i = literal(b, i, "false"); i < 0 {
				return -1
			}
		case 'n':
			if i = literal(b, i, "null"); i < 0 {
				return -1
			}
		default:
			if i = scanNumber(b, i); i < 0 {
				return -1
			}
		}
	ended:
		// A value ended at b[i]: close containers, or go on to the next
		// element or member.
		for {
			if member != nil && len(stack) == 1 && stack[0] == '{' && key != nil {
				if !member(key, b[valueAt:i]) {
					member = nil
				}
				key = nil
			}
			if len(stack) == 0 {
				return i
			}
			i = jsonscan.SkipSpace(b, i)
			if i >= len(b) {
				return -1
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = jsonscan.SkipSpace(b, i+1)
				if top == '{' {
					start := i
					keyEnd := 0
					if keyEnd, i = objectKey(b, i); i < 0 {
						return -1
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
			return -1
		}
	}
}

// validPayload validates the payload object at b[i], depth containers
// deep, as validValue would, and splits it into p as splitPayload does:
// the member "value" is transcoded, and validated only when that fails.
// It returns where the object ends, or -1 if it is not valid JSON.
func validPayload(b []byte, i, depth int, p *payloadFields) int {
	var fb fieldsBuilder
	end := validValue(b, i, depth, fb.add, func(key []byte, at int) int {
		if string(key) != `"`+wire.FieldValue+`"` {
			return -1
		}
		enc, n, err := value.TranscodeJSONValue(b[at:])
		p.read, p.enc, p.readErr = b[at:], enc, err
		if err != nil {
			return -1 // validated here, its error kept for the resume
		}
		return at + n
	})
	if end < 0 {
		return -1
	}
	f, err := fb.done()
	if err != nil {
		return -1
	}
	p.fields = f
	return end
}

// validAnswers validates a batch resume's answers, the array at b[i]
// (depth containers deep), as validValue would, and splits each element
// that is an object, its payload as validPayload does. It returns where
// the array ends, or -1 if it is not valid JSON.
func validAnswers(b []byte, i, depth int) (int, []splitAnswer) {
	var out []splitAnswer
	if i = jsonscan.SkipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return i + 1, out
	}
	for i < len(b) {
		var end int
		var f fields
		if b[i] == '{' {
			var fb fieldsBuilder
			end = validValue(b, i, depth+1, fb.add, fb.readMembers(b, depth+2))
			if end >= 0 {
				var err error
				if f, err = fb.done(); err != nil {
					return -1, nil
				}
			}
		} else {
			end = validValue(b, i, depth+1, nil, nil)
		}
		if end < 0 {
			return -1, nil
		}
		out = append(out, splitAnswer{raw: b[i:end], f: f})
		if i = jsonscan.SkipSpace(b, end); i >= len(b) {
			return -1, nil
		}
		switch b[i] {
		case ']':
			return i + 1, out
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		default:
			return -1, nil
		}
	}
	return -1, nil
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
