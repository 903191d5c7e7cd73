package protocol

import (
	"encoding/json"
	"errors"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
)

// fields are the exact top-level keys of a JSON object with their raw
// values, in document order, each key once. encoding/json matches struct
// keys case-insensitively; the wire contract's keys are exact, so requests
// are split by hand and each field is decoded on its own. A slice, not a
// map: a request splits a few objects of a few keys each, and building
// maps for them was a third of the bytes a hot resume allocated.
type fields []field

type field struct {
	key string
	raw json.RawMessage
	// split is what the validator read of the value on its way
	// (validObject), or nil.
	split *splitValue
}

// splitValue is a member's value as the request validator read it: a
// resume's payload split with its value transcoded (splitPayload's
// result), or a batch resume's answers, each split so.
type splitValue struct {
	payload *payloadFields // or nil
	answers []splitAnswer

	read payloadFields // payload's memory: one allocation for both
}

// splitAnswer is one element of a batch resume's answers: its text, and
// its members when it is an object (nil otherwise), its payload split.
type splitAnswer struct {
	raw []byte
	f   fields
}

// get returns the value of key, if the object has it.
func (f fields) get(key string) (json.RawMessage, bool) {
	for i := range f {
		if f[i].key == key {
			return f[i].raw, true
		}
	}
	return nil, false
}

// split returns what the validator read of key's value on its way, or
// nil.
func (f fields) split(key string) *splitValue {
	for i := range f {
		if f[i].key == key {
			return f[i].split
		}
	}
	return nil
}

// at returns the value of key, or nil.
func (f fields) at(key string) json.RawMessage {
	v, _ := f.get(key)
	return v
}

// indexFrom is the number of keys from which splitObject finds repeated
// keys through a map: a linear look per key would make an object of many
// keys (a hostile request) quadratic.
const indexFrom = 16

var errNotObject = errors.New("not a JSON object")

// splitObject splits a JSON object that json.Valid already accepted. For a
// repeated key the last occurrence wins, as with encoding/json.
func splitObject(b []byte) (fields, error) {
	var fb fieldsBuilder
	if !jsonscan.Members(b, fb.add) {
		return nil, errNotObject
	}
	return fb.done()
}

// fieldsBuilder collects an object's members as splitObject, or the
// validator reading a request header (validObject), finds them.
type fieldsBuilder struct {
	f       fields
	index   map[string]int // key → position, once the object is large
	bad     bool
	pending *splitValue // the next member's value, read (readMembers)
}

// add takes the next member: its key as a raw string literal and its raw
// value. It reports false, to stop, on a key it cannot decode.
func (fb *fieldsBuilder) add(key, value []byte) bool {
	k, ok := knownKey(key)
	if !ok {
		if k, ok = jsonscan.PlainString(key); !ok {
			// Its own variable: &k would put k on the heap for every key.
			var escaped string
			if json.Unmarshal(key, &escaped) != nil {
				fb.bad = true
				return false
			}
			k = escaped
		}
	}
	if fb.f == nil {
		fb.f = make(fields, 0, 8)
	}
	fl := field{k, json.RawMessage(value), fb.pending}
	fb.pending = nil
	// A repeated key: the last occurrence wins, in the first's place.
	switch {
	case fb.index != nil:
		if at, ok := fb.index[k]; ok {
			fb.f[at] = fl
		} else {
			fb.index[k] = len(fb.f)
			fb.f = append(fb.f, fl)
		}
	case fb.f.set(fl):
	default:
		fb.f = append(fb.f, fl)
		if len(fb.f) == indexFrom {
			fb.index = make(map[string]int, 2*indexFrom)
			for at, fl := range fb.f {
				fb.index[fl.key] = at
			}
		}
	}
	return true
}

// done returns the object's fields: none for an empty object.
func (fb *fieldsBuilder) done() (fields, error) {
	if fb.bad {
		return nil, errNotObject
	}
	if fb.f == nil {
		return fields{}, nil
	}
	return fb.f, nil
}

// knownKey returns the field names of the contract without allocating:
// every request splits a few objects, and their keys are these.
func knownKey(raw []byte) (string, bool) {
	if len(raw) < 2 {
		return "", false
	}
	switch string(raw[1 : len(raw)-1]) {
	case wire.FieldProtocolVersion:
		return wire.FieldProtocolVersion, true
	case wire.FieldID:
		return wire.FieldID, true
	case wire.FieldMethod:
		return wire.FieldMethod, true
	case wire.FieldSnapshotID:
		return wire.FieldSnapshotID, true
	case wire.FieldPolicyID:
		return wire.FieldPolicyID, true
	case wire.FieldProgramID:
		return wire.FieldProgramID, true
	case wire.FieldAuth:
		return wire.FieldAuth, true
	case wire.FieldPolicy:
		return wire.FieldPolicy, true
	case wire.FieldPayload:
		return wire.FieldPayload, true
	case wire.FieldOptions:
		return wire.FieldOptions, true
	case wire.FieldSnapshotDelivery:
		return wire.FieldSnapshotDelivery, true
	case wire.FieldSnapshotKeyBase64:
		return wire.FieldSnapshotKeyBase64, true
	case wire.FieldSnapshotKeyDigest:
		return wire.FieldSnapshotKeyDigest, true
	case wire.FieldSnapshotToken:
		return wire.FieldSnapshotToken, true
	case wire.FieldType:
		return wire.FieldType, true
	case wire.FieldValue:
		return wire.FieldValue, true
	case wire.FieldInputs:
		return wire.FieldInputs, true
	case wire.FieldCapabilities:
		return wire.FieldCapabilities, true
	case wire.FieldLimits:
		return wire.FieldLimits, true
	case wire.FieldSource:
		return wire.FieldSource, true
	}
	return "", false
}

// set replaces the field of fl's key if f has it.
func (f fields) set(fl field) bool {
	for i := range f {
		if f[i].key == fl.key {
			f[i] = fl
			return true
		}
	}
	return false
}

// present reports whether a field is given and not null.
func (f fields) present(key string) bool {
	v, ok := f.get(key)
	return ok && string(v) != "null"
}
