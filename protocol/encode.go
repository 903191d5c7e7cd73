package protocol

import (
	"encoding/base64"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func appendEnvelope(b []byte, id uint64, ok bool) []byte {
	b = append(b, `{"protocol_version":2,"id":`...)
	b = strconv.AppendUint(b, id, 10)
	if ok {
		return append(b, `,"ok":true`...)
	}
	return append(b, `,"ok":false`...)
}

func (s *Session) failure(id uint64, err error) Response {
	b := appendEnvelope(make([]byte, 0, 128), id, false)
	b = append(b, `,"error":`...)
	b = appendString(b, errorText(err))
	return Response{Header: append(b, '}')}
}

func (s *Session) success(id uint64, o *outcome) Response {
	jsonl := s.opts.Transport == JSONL
	snap, baseID := o.delivered()
	size := 256
	if jsonl {
		size += base64.StdEncoding.EncodedLen(len(snap))
		if o.fetched != nil {
			size += base64.StdEncoding.EncodedLen(len(o.fetched.bytes))
		}
	}
	b := appendEnvelope(make([]byte, 0, size), id, true)
	var payload []byte
	b = append(b, `,"result":{"kind":`...)
	if ft := o.fetched; ft != nil {
		b = append(b, `"snapshot","snapshot_id":`...)
		b = appendString(b, ft.snapID)
		b = append(b, `,"offset":`...)
		b = strconv.AppendUint(b, ft.offset, 10)
		b = append(b, `,"total_bytes":`...)
		b = strconv.AppendInt(b, int64(ft.total), 10)
		b, payload = appendRaw(b, jsonl, "snapshot_base64", ft.bytes)
		return Response{Header: append(b, "}}"...), Payload: payload}
	}
	if c := o.cancel; c != nil {
		b = append(b, `"cancelled","target_id":`...)
		b = strconv.AppendUint(b, c.target, 10)
		b = append(b, `,"was_running":`...)
		b = strconv.AppendBool(b, c.wasRunning)
		return Response{Header: append(b, "}}"...)}
	}
	if o.pong {
		b = s.appendPong(b)
		return Response{Header: append(b, "}}"...)}
	}
	if st := o.staged; st != nil {
		b = append(b, `"staged","stage_id":`...)
		b = appendString(b, st.stageID)
		b = append(b, `,"total_bytes":`...)
		b = strconv.AppendInt(b, int64(st.total), 10)
		return Response{Header: append(b, "}}"...)}
	}
	if p := o.program; p != nil {
		b = append(b, `"program","program_id":"`...)
		b = append(b, p.ID...)
		b = append(b, '"')
		b, payload = appendRaw(b, jsonl, "program_base64", p.Bytes)
		return Response{Header: append(b, "}}"...), Payload: payload}
	}
	b = append(b, `"step","step":{"type":`...)
	if o.step.Done {
		b = append(b, `"completed","value":`...)
		b = o.step.Value.AppendJSON(b)
		b = append(b, "}}"...)
	} else {
		b = append(b, `"suspended","capability":`...)
		b = appendString(b, o.step.Capability)
		b = append(b, `,"args":[`...)
		for i, a := range o.step.Args {
			if i > 0 {
				b = append(b, ',')
			}
			b = a.AppendJSON(b)
		}
		b = append(b, ']')
		if o.delivery != deliverNone { // none: the session keeps them for a snapshot fetch
			b, payload = appendRaw(b, jsonl, "snapshot_base64", snap)
		}
		b = append(b, `},"snapshot_id":"`...)
		b = append(b, o.snapID...)
		b = append(b, `","policy_id":"`...)
		b = append(b, o.policy...)
		if baseID != "" {
			b = append(b, `","snapshot_base_id":"`...)
			b = append(b, baseID...)
		}
		b = append(b, `"}`...)
	}
	if o.profile {
		b = append(b, `,"profile":{"execution_ns":`...)
		b = strconv.AppendInt(b, o.execNS, 10)
		b = append(b, `,"response_prepare_ns":`...)
		b = strconv.AppendInt(b, time.Since(o.started).Nanoseconds()-o.execNS, 10)
		b = append(b, `,"instructions":`...)
		b = strconv.AppendUint(b, o.step.Meter.Instructions, 10)
		b = append(b, '}')
	}
	return Response{Header: append(b, '}'), Payload: payload}
}

// appendString writes a JSON string. Text from the guest is WTF-8: an
// unpaired surrogate is written as its \u escape, any other invalid byte as
// U+FFFD, so the output is always valid JSON in valid UTF-8.
func appendString(b []byte, s string) []byte {
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

var _ = value.KindNull

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
