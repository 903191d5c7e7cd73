package protocol

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The envelope writes the protocol version as the text "2": this fails to
// compile unless wire.ProtocolVersion is 2.
const _ = uint(wire.ProtocolVersion-2) + uint(2-wire.ProtocolVersion)

func appendEnvelope(b []byte, id uint64, ok bool) []byte {
	b = append(b, `{"`+wire.FieldProtocolVersion+`":2,"`+wire.FieldID+`":`...)
	b = strconv.AppendUint(b, id, 10)
	if ok {
		return append(b, `,"`+wire.FieldOK+`":true`...)
	}
	return append(b, `,"`+wire.FieldOK+`":false`...)
}

// resultOf starts a success response's result, up to the opening quote of
// its kind: resultOf+wire.KindStep+`"` is `,"result":{"kind":"step"`.
const resultOf = `,"` + wire.FieldResult + `":{"` + wire.FieldKind + `":"`

// result is a method's successful answer. Each encodes its whole response
// (okHeader, its "result" object, raw bytes through appendRaw), so a
// method's wire form sits beside the code that serves it.
type result interface {
	encode(id uint64, jsonl bool) Response
}

// okHeader starts a success response with room for rawLen raw bytes, which
// JSONL carries as base64 in the header.
func okHeader(id uint64, jsonl bool, rawLen int) []byte {
	size := 256
	if jsonl {
		size += base64.StdEncoding.EncodedLen(rawLen)
	}
	return appendEnvelope(make([]byte, 0, size), id, true)
}

// failure is the ok:false response to a request that failed: its phrase,
// then its code (codes.go), after the console lines of a run that failed.
// A failure never carries a profile.
func failure(id uint64, err error) Response {
	c, text := describe(err)
	b := appendEnvelope(make([]byte, 0, 128), id, false)
	if se, ok := err.(*stepError); ok {
		// A failed run's console lines, before the error: error_code
		// stays the last member, as on every failure.
		b = appendLogs(b, se.logs)
	}
	b = append(b, `,"`+wire.FieldError+`":`...)
	b = appendString(b, text)
	b = append(b, `,"`+wire.FieldErrorCode+`":"`...)
	b = append(b, c...)
	return Response{Header: append(b, `"}`...)}
}

// appendString writes a JSON string. Text from the guest is WTF-8: an
// unpaired surrogate is written as its \u escape, any other invalid byte as
// U+FFFD, so the output is always valid JSON in valid UTF-8. U+2028 and
// U+2029 are escaped too. A string without them (nearly every one) is
// written by value.AppendJSONText, which writes the rest the same way
// and takes a long string (a page of console output) a block at a time,
// four times as fast as the loop below.
func appendString(b []byte, s string) []byte {
	if !strings.Contains(s, "\u2028") && !strings.Contains(s, "\u2029") {
		return value.AppendJSONText(b, s)
	}
	return appendStringSeparators(b, s)
}

// appendStringSeparators is appendString a byte at a time, for a string
// with U+2028 or U+2029.
func appendStringSeparators(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\r':
				b = append(b, `\r`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if i+2 < len(s) && c == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
				u := 0xD000 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F)
				b = append(b, '\\', 'u', hex[u>>12], hex[(u>>8)&0xf], hex[(u>>4)&0xf], hex[u&0xf])
				i += 3
				continue
			}
			b = append(b, `\ufffd`...)
			i++
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendRaw places raw bytes where the transport carries them: a base64
// field (JSONL) appended to the header, or the frame's payload (binary).
func appendRaw(b []byte, jsonl bool, field string, raw []byte) (header, payload []byte) {
	if !jsonl {
		return b, raw
	}
	b = append(b, `,"`...)
	b = append(b, field...)
	b = append(b, `":"`...)
	b = base64.StdEncoding.AppendEncode(b, raw)
	return append(b, '"'), nil
}

// appendLogs writes a step's "logs" member, when it has lines.
func appendLogs(b []byte, logs []engine.Log) []byte {
	if len(logs) == 0 {
		return b
	}
	b = append(b, `,"`+wire.FieldLogs+`":[`...)
	for i, l := range logs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"`+wire.FieldLevel+`":`...)
		b = appendString(b, l.Level)
		b = append(b, `,"`+wire.FieldText+`":`...)
		b = appendString(b, l.Text)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendArgs writes a call's "args" member.
func appendArgs(b []byte, args []value.Value) []byte {
	b = append(b, `,"`+wire.FieldArgs+`":[`...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		b = a.AppendJSON(b)
	}
	return append(b, ']')
}

// Response is one encoded response.
type Response struct {
	Header  []byte
	Payload []byte
}
