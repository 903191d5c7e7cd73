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

// members calls fn with each member of the object that is all of b (space
// around it aside): its key, decoded, and its raw value. fn must decode
// or check every value it is given.
func members(b []byte, fn func(key string, raw []byte) error) error {
	return items(b, '{', '}', func(i int) (int, error) {
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
		i = jsonscan.SkipSpace(b, i+1)
		vend := jsonscan.SkipValue(b, i)
		if vend == i {
			return 0, errSyntax
		}
		return vend, fn(key, b[i:vend])
	})
}

// elements calls fn with each element of the array that is all of b, raw.
func elements(b []byte, fn func(raw []byte) error) error {
	return items(b, '[', ']', func(i int) (int, error) {
		vend := jsonscan.SkipValue(b, i)
		if vend == i {
			return 0, errSyntax
		}
		return vend, fn(b[i:vend])
	})
}

// items walks the object or array (open, close) that is all of b: it
// calls item at each item's first byte, which returns where the item
// ends, and checks the commas between items and the close after them.
func items(b []byte, open, close byte, item func(i int) (int, error)) error {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != open {
		return errSyntax
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == close {
		return end(b, i+1)
	}
	for {
		if i >= len(b) {
			return errSyntax
		}
		iend, err := item(i)
		if err != nil {
			return err
		}
		switch i = jsonscan.SkipSpace(b, iend); {
		case i < len(b) && b[i] == ',':
			i = jsonscan.SkipSpace(b, i+1)
		case i < len(b) && b[i] == close:
			return end(b, i+1)
		default:
			return errSyntax
		}
	}
}

// end checks that nothing but space follows position i.
func end(b []byte, i int) error {
	if jsonscan.SkipSpace(b, i) != len(b) {
		return errSyntax
	}
	return nil
}

// checked is a member this decoder does not read: it is still JSON.
func checked(raw []byte) error {
	if !json.Valid(raw) {
		return errSyntax
	}
	return nil
}

var jsonNull = []byte("null")

// parseValues reads an array of StructuredValues as encoding/json reads
// a []value.Value: null is none.
func parseValues(raw []byte) ([]value.Value, error) {
	if bytes.Equal(raw, jsonNull) {
		return nil, nil
	}
	out := []value.Value{}
	err := elements(raw, func(e []byte) error {
		v, err := value.ParseJSON(e)
		out = append(out, v)
		return err
	})
	return out, err
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
	step := func(key string, raw []byte) (err error) {
		switch key {
		case wire.FieldValue:
			v, err := value.ParseJSON(raw)
			if err != nil {
				return err
			}
			st.Value, st.parsed = raw, &v
			return nil
		case wire.FieldArgs:
			st.Args, err = parseValues(raw)
			return err
		case wire.FieldCalls:
			if bytes.Equal(raw, jsonNull) {
				st.Calls = nil
				return nil
			}
			st.Calls = []wireCall{}
			return elements(raw, func(e []byte) error {
				var k wireCall
				small := map[string]any{wire.FieldCallID: &k.CallID, wire.FieldCapability: &k.Capability}
				err := members(e, func(key string, raw []byte) (err error) {
					if key == wire.FieldArgs {
						k.Args, err = parseValues(raw)
						return err
					}
					return member(small, key, raw)
				})
				st.Calls = append(st.Calls, k)
				return err
			})
		}
		return member(stepSmall, key, raw)
	}
	small := map[string]any{wire.FieldKind: &res.Kind, wire.FieldSnapshotID: &res.SnapshotID,
		wire.FieldPolicyID: &res.PolicyID, wire.FieldSnapshotBaseID: &res.SnapshotBaseID}
	return members(b, func(key string, raw []byte) error {
		if key == wire.FieldStep {
			if err := members(raw, step); err != nil {
				return fmt.Errorf("step: %w", err)
			}
			return nil
		}
		return member(small, key, raw)
	})
}
