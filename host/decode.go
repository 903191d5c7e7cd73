package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// A response carrying large values (a completed step's value, a
// suspension's arguments) is decoded without encoding/json's passes over
// them. encoding/json checks the whole text, then walks it again to find
// each value's end before value.ParseJSON reads it, and a step's result
// went through that twice (decodeResponse, then step): four passes over
// 50 KB of arguments at 3-8 ns a byte, where ParseJSON alone makes one
// (BenchmarkResumeLargeAnswer/echo). The fast decoder checks the
// punctuation of the objects and arrays it walks, and hands every value to
// a decoder that checks it. A header shorter than fastDecodeFrom takes
// encoding/json as before: the two read the same members from any valid
// response (TestFastDecodeReadsWhatEncodingJSONReads).
const fastDecodeFrom = 8 << 10

var errSyntax = errors.New("malformed JSON")

// membersAt walks the object at b[i] (space before it aside): it calls fn
// with each member's key, decoded, and the index of its value's first
// byte; fn reads or checks the value there and returns the index just
// past it. membersAt returns the index just past the object. A value
// that is itself an object or array is walked in place, once, rather
// than skipped over first and walked again.
func membersAt(b []byte, i int, fn func(key string, at int) (int, error)) (int, error) {
	return itemsAt(b, i, '{', '}', func(i int) (int, error) {
		if b[i] != '"' {
			return 0, errSyntax
		}
		kend := jsonscan.SkipString(b, i)
		key, ok := jsonscan.PlainString(b[i:kend])
		if !ok {
			if err := json.Unmarshal(b[i:kend], &key); err != nil {
				return 0, err
			}
		}
		if i = jsonscan.SkipSpace(b, kend); i >= len(b) || b[i] != ':' {
			return 0, errSyntax
		}
		if i = jsonscan.SkipSpace(b, i+1); i >= len(b) {
			return 0, errSyntax
		}
		return fn(key, i)
	})
}

// elementsAt walks the array at b[i] as membersAt walks an object.
func elementsAt(b []byte, i int, fn func(at int) (int, error)) (int, error) {
	return itemsAt(b, i, '[', ']', fn)
}

// itemsAt walks the object or array (open, close) at b[i]: it calls item
// at each item's first byte, which returns where the item ends, checks
// the commas between items and the close after them, and returns the
// index just past the close.
func itemsAt(b []byte, i int, open, close byte, item func(i int) (int, error)) (int, error) {
	i = jsonscan.SkipSpace(b, i)
	if i >= len(b) || b[i] != open {
		return 0, errSyntax
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == close {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return 0, errSyntax
		}
		iend, err := item(i)
		if err != nil {
			return 0, err
		}
		switch i = jsonscan.SkipSpace(b, iend); {
		case i < len(b) && b[i] == ',':
			i = jsonscan.SkipSpace(b, i+1)
		case i < len(b) && b[i] == close:
			return i + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

// rawAt returns the value at b[i], raw, and the index just past it. The
// caller reads or checks it.
func rawAt(b []byte, i int) ([]byte, int, error) {
	vend := jsonscan.SkipValue(b, i)
	if vend == i {
		return nil, 0, errSyntax
	}
	return b[i:vend], vend, nil
}

// members calls fn with each member of the object that is all of b (space
// around it aside): its key, decoded, and its raw value. fn must decode
// or check every value it is given.
func members(b []byte, fn func(key string, raw []byte) error) error {
	end, err := membersAt(b, 0, func(key string, i int) (int, error) {
		raw, vend, err := rawAt(b, i)
		if err != nil {
			return 0, err
		}
		return vend, fn(key, raw)
	})
	return whole(b, end, err)
}

// whole is the result of a walk of b from its start that ended at end:
// err, or a syntax error if anything but space follows.
func whole(b []byte, end int, err error) error {
	if err != nil {
		return err
	}
	if jsonscan.SkipSpace(b, end) != len(b) {
		return errSyntax
	}
	return nil
}

// nullAt reads the null at b[i], which encoding/json takes as none where
// it reads a slice; any other value there is a syntax error.
func nullAt(b []byte, i int) (int, error) {
	raw, vend, err := rawAt(b, i)
	if err != nil || !bytes.Equal(raw, jsonNull) {
		return 0, errSyntax
	}
	return vend, nil
}

// checked is a member this decoder does not read: it is still JSON.
func checked(raw []byte) error {
	if !json.Valid(raw) {
		return errSyntax
	}
	return nil
}

var jsonNull = []byte("null")

// parseValuesAt reads the array of StructuredValues at b[i] as
// encoding/json reads a []value.Value (null is none), and returns the
// index just past it.
func parseValuesAt(b []byte, i int) ([]value.Value, int, error) {
	if b[i] != '[' {
		end, err := nullAt(b, i)
		return nil, end, err
	}
	out := []value.Value{}
	end, err := elementsAt(b, i, func(i int) (int, error) {
		raw, vend, err := rawAt(b, i)
		if err != nil {
			return 0, err
		}
		v, err := value.ParseJSON(raw)
		out = append(out, v)
		return vend, err
	})
	return out, end, err
}

// decodeHeader reads a response header into r.
func decodeHeader(b []byte, r *response) error {
	if len(b) < fastDecodeFrom {
		return json.Unmarshal(b, r)
	}
	return decodeHeaderFast(b, r)
}

func decodeHeaderFast(b []byte, r *response) error {
	small := map[string]any{wire.FieldProtocolVersion: &r.ProtocolVersion, wire.FieldID: &r.ID, wire.FieldOK: &r.OK,
		wire.FieldError: &r.Error, wire.FieldErrorCode: &r.ErrorCode, wire.FieldLogs: &r.Logs, wire.FieldProfile: &r.Profile}
	return members(b, func(key string, raw []byte) error {
		if key == wire.FieldResult {
			// Checked where it is read: decodeStep, or encoding/json
			// for the other results.
			r.Result = raw
			return nil
		}
		return member(small, key, raw)
	})
}

// member decodes a member named in small into its target with
// encoding/json, and checks any other.
func member(small map[string]any, key string, raw []byte) error {
	if p, ok := small[key]; ok {
		return json.Unmarshal(raw, p)
	}
	return checked(raw)
}

// wireStep is a start or resume response's result.
type wireStep struct {
	Kind string `json:"kind"`
	Step struct {
		Type           string          `json:"type"`
		Value          json.RawMessage `json:"value"`
		Capability     string          `json:"capability"`
		Args           []value.Value   `json:"args"`
		Calls          []wireCall      `json:"calls"`
		SnapshotBase64 string          `json:"snapshot_base64"`
		Logs           []LogLine       `json:"logs"`
		// parsed is Value, parsed by the fast decoder.
		parsed *value.Value
	} `json:"step"`
	SnapshotID     string `json:"snapshot_id"`
	PolicyID       string `json:"policy_id"`
	SnapshotBaseID string `json:"snapshot_base_id"`
}

// wireCall is one outstanding call of a batch-mode suspension.
type wireCall struct {
	CallID     uint64        `json:"call_id"`
	Capability string        `json:"capability"`
	Args       []value.Value `json:"args"`
}

// decodeStep reads a start or resume response's result into res.
func decodeStep(b []byte, res *wireStep) error {
	if len(b) < fastDecodeFrom {
		return json.Unmarshal(b, res)
	}
	return decodeStepFast(b, res)
}

func decodeStepFast(b []byte, res *wireStep) error {
	st := &res.Step
	stepSmall := map[string]any{wire.FieldType: &st.Type, wire.FieldCapability: &st.Capability,
		wire.FieldSnapshotBase64: &st.SnapshotBase64, wire.FieldLogs: &st.Logs}
	small := map[string]any{wire.FieldKind: &res.Kind, wire.FieldSnapshotID: &res.SnapshotID,
		wire.FieldPolicyID: &res.PolicyID, wire.FieldSnapshotBaseID: &res.SnapshotBaseID}
	// smallAt reads the value at b[i] into its target in m, or checks it.
	smallAt := func(m map[string]any, key string, i int) (int, error) {
		raw, vend, err := rawAt(b, i)
		if err != nil {
			return 0, err
		}
		return vend, member(m, key, raw)
	}
	call := func(i int) (int, error) {
		var k wireCall
		callSmall := map[string]any{wire.FieldCallID: &k.CallID, wire.FieldCapability: &k.Capability}
		end, err := membersAt(b, i, func(key string, i int) (end int, err error) {
			if key == wire.FieldArgs {
				k.Args, end, err = parseValuesAt(b, i)
				return end, err
			}
			return smallAt(callSmall, key, i)
		})
		st.Calls = append(st.Calls, k)
		return end, err
	}
	step := func(key string, i int) (end int, err error) {
		switch key {
		case wire.FieldValue:
			raw, vend, err := rawAt(b, i)
			if err != nil {
				return 0, err
			}
			v, err := value.ParseJSON(raw)
			if err != nil {
				return 0, err
			}
			st.Value, st.parsed = raw, &v
			return vend, nil
		case wire.FieldArgs:
			st.Args, end, err = parseValuesAt(b, i)
			return end, err
		case wire.FieldCalls:
			if b[i] != '[' {
				st.Calls = nil
				return nullAt(b, i)
			}
			st.Calls = []wireCall{}
			return elementsAt(b, i, call)
		}
		return smallAt(stepSmall, key, i)
	}
	end, err := membersAt(b, 0, func(key string, i int) (int, error) {
		if key == wire.FieldStep {
			end, err := membersAt(b, i, step)
			if err != nil {
				return 0, fmt.Errorf("step: %w", err)
			}
			return end, nil
		}
		return smallAt(small, key, i)
	})
	return whole(b, end, err)
}
