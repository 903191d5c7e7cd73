package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
)

// fields maps the exact top-level keys of a JSON object to their raw
// values. encoding/json matches struct keys case-insensitively; the wire
// contract's keys are exact, so requests are split by hand and each field is
// decoded on its own.
type fields map[string]json.RawMessage

var errNotObject = errors.New("not a JSON object")

// splitObject splits a JSON object that json.Valid already accepted. For a
// repeated key the last occurrence wins, as with encoding/json.
func splitObject(b []byte) (fields, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errNotObject
	}
	f := fields{}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return f, nil
	}
	for i < len(b) {
		end := skipString(b, i)
		key := b[i:end]
		k, ok := knownKey(key)
		if !ok {
			if k, ok = plainString(key); !ok && json.Unmarshal(key, &k) != nil {
				return nil, errNotObject
			}
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // ':'
		vend := skipValue(b, i)
		f[k] = json.RawMessage(b[i:vend])
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == '}' {
			return f, nil
		}
		i = skipSpace(b, i+1) // ','
	}
	return nil, errNotObject
}

// knownKey returns the field names of the contract without allocating:
// every request splits a few objects, and their keys are these.
func knownKey(raw []byte) (string, bool) {
	if len(raw) < 2 {
		return "", false
	}
	switch string(raw[1 : len(raw)-1]) {
	case "protocol_version":
		return "protocol_version", true
	case "id":
		return "id", true
	case "method":
		return "method", true
	case "snapshot_id":
		return "snapshot_id", true
	case "policy_id":
		return "policy_id", true
	case "program_id":
		return "program_id", true
	case "auth":
		return "auth", true
	case "policy":
		return "policy", true
	case "payload":
		return "payload", true
	case "options":
		return "options", true
	case "snapshot_delivery":
		return "snapshot_delivery", true
	case "snapshot_key_base64":
		return "snapshot_key_base64", true
	case "snapshot_key_digest":
		return "snapshot_key_digest", true
	case "snapshot_token":
		return "snapshot_token", true
	case "type":
		return "type", true
	case "value":
		return "value", true
	case "inputs":
		return "inputs", true
	case "capabilities":
		return "capabilities", true
	case "limits":
		return "limits", true
	case "source":
		return "source", true
	}
	return "", false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] (of
// input validJSON accepted). It jumps from quote to quote, so long strings
// (tool results, base64) cost a memchr, not a loop per byte.
func skipString(b []byte, i int) int {
	for i++; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		i += q
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
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

// present reports whether a field is given and not null.
func (f fields) present(key string) bool {
	v, ok := f[key]
	return ok && string(v) != "null"
}

// plainString returns the contents of a JSON string literal that needs no
// unescaping; ok is false when it must go through the full decoder.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	return string(body), true
}
