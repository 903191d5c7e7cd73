package protocol

import (
	"fmt"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// payload reads f's payload, or the one its payload_stage_id staged;
// structure names f in the error for both.
func (set stagedSet) payload(f fields, structure string) (resumePayload, error) {
	b, ok, err := set.staged(f, wire.FieldPayloadStageID, wire.FieldPayload, structure)
	if err != nil {
		return resumePayload{}, err
	}
	if !ok {
		return f.payload(wire.FieldPayload)
	}
	stageKey := wire.FieldPayloadStageID
	if structure != wire.MethodResume {
		stageKey = structure + "." + wire.FieldPayloadStageID
	}
	sf, err := stagedPayload(stageKey, b)
	if err != nil {
		return resumePayload{}, err
	}
	return sf.payload(wire.FieldPayload)
}

// stagedPayload is stagedJSON for a staged payload: an object is
// validated and split in one pass, its value transcoded, as a request
// header's payload is (validPayload). A staged answer is one past 1 MiB.
func stagedPayload(stageKey string, b []byte) (fields, error) {
	if i := jsonscan.SkipSpace(b, 0); i < len(b) && b[i] == '{' {
		if end, sv := readPayload(b, i, 0); end >= 0 && jsonscan.SkipSpace(b, end) == len(b) {
			return fields{{key: wire.FieldPayload, raw: b, split: sv}}, nil
		}
	}
	return stagedJSON(stageKey, wire.FieldPayload, b)
}

// resumePayload decodes the host's answer to a suspended call.
type resumePayload struct {
	cancelled bool
	outcome   snapshot.Outcome
}

// engine is the payload as the engine takes it.
func (p resumePayload) engine() engine.Payload {
	return engine.Payload{Cancelled: p.cancelled, Outcome: p.outcome}
}

// answers reads a batch resume's answers: [{"call_id": N, "payload":
// ResumePayload}, ...], at least one. Which ids are outstanding is checked
// once the snapshot is known.
func (set stagedSet) answers(f fields, key string) ([]engine.Answer, error) {
	var out []engine.Answer
	var err error
	answer := func(raw []byte, a fields) bool {
		i := len(out)
		if a == nil {
			err = errorf(codeInvalidField, "%s[%d] must be an object", key, i)
			return false
		}
		if err = checkClosed(a, raw, key, answerKeys); err != nil {
			return false
		}
		id, ok, uerr := a.uint(wire.FieldCallID)
		if uerr != nil || !ok || id == 0 {
			err = errorf(codeInvalidField, "%s[%d].call_id must be a positive integer", key, i)
			return false
		}
		p, perr := set.payload(a, fmt.Sprintf("%s[%d]", key, i))
		if perr != nil {
			err = perr
			return false
		}
		out = append(out, engine.Answer{CallID: id, Payload: p.engine()})
		return true
	}
	isArray := true
	if split := f.split(key); split != nil && split.answers != nil {
		// The validator split them on its way, payloads read.
		for _, a := range split.answers {
			if !answer(a.raw, a.f) {
				break
			}
		}
	} else {
		isArray = jsonscan.Elements(f.at(key), func(raw []byte) bool {
			a, serr := splitObject(raw)
			if serr != nil {
				a = nil
			}
			return answer(raw, a)
		})
	}
	if err != nil {
		return nil, err
	}
	if !isArray || len(out) == 0 {
		return nil, errorf(codeInvalidField, "%s must be a non-empty array", key)
	}
	return out, nil
}

func (f fields) payload(key string) (resumePayload, error) {
	if !f.present(key) {
		return resumePayload{}, errorf(codeMissingField, "resume requires payload")
	}
	p, err := f.splitPayload(key)
	if err != nil {
		return resumePayload{}, errorf(codeInvalidField, "%s must be an object", key)
	}
	if err := checkClosed(p.fields, f.at(key), wire.FieldPayload, payloadKeys); err != nil {
		return resumePayload{}, err
	}
	kind, _, err := p.string(wire.FieldType)
	if err != nil {
		return resumePayload{}, errorf(codeInvalidField, "payload.type must be a string")
	}
	switch kind {
	case wire.FieldValue:
		if _, ok := p.get(wire.FieldValue); !ok {
			return resumePayload{}, errorf(codeMissingField, "payload.value is required")
		}
		// The answer goes to the journal and into the guest as its binary
		// form: TranscodeJSON accepts what ParseJSON accepts, only values
		// that may cross (FuzzParseJSON checks both), without building
		// the value. The split has read it already, unless its key was
		// spelled with escapes.
		enc, err := p.value()
		if err != nil {
			return resumePayload{}, errorf(codeInvalidValue, "invalid payload.value: %s", err.Error())
		}
		return resumePayload{outcome: snapshot.EncodedOutcome(enc)}, nil
	case wire.FieldError:
		e, ok, err := p.object(wire.FieldError)
		if err != nil || !ok {
			return resumePayload{}, errorf(codeInvalidField, "payload.error must be an object")
		}
		if err := checkClosed(e, p.at(wire.FieldError), "payload.error", payloadErrorKeys); err != nil {
			return resumePayload{}, err
		}
		he := &snapshot.HostError{}
		if he.Name, _, err = e.guestString(wire.FieldName); err != nil {
			return resumePayload{}, errorf(codeInvalidField, "payload.error.name must be a string")
		}
		if he.Message, _, err = e.guestString(wire.FieldMessage); err != nil {
			return resumePayload{}, errorf(codeInvalidField, "payload.error.message must be a string")
		}
		code, ok, err := e.guestString(wire.FieldCode)
		if err != nil {
			return resumePayload{}, errorf(codeInvalidField, "payload.error.code must be a string")
		}
		if ok {
			he.Code = &code
		}
		if raw, ok := e.get(wire.FieldDetails); ok {
			d, err := value.ParseJSON(raw)
			if err != nil {
				return resumePayload{}, errorf(codeInvalidValue, "invalid payload.error.details: %s", err.Error())
			}
			he.Details = &d
		}
		return resumePayload{outcome: snapshot.Outcome{Error: he}}, nil
	case "cancelled":
		return resumePayload{cancelled: true}, nil
	}
	return resumePayload{}, errorf(codeInvalidField, "payload.type must be \"value\", \"error\" or \"cancelled\"")
}

// payloadFields are a payload object's members, with its value member
// transcoded by the walk that split them.
type payloadFields struct {
	fields
	read    []byte // the input from the last member read as "value" on
	enc     []byte // its binary form
	readErr error  // or why it is not a structured value
}

// splitPayload is splitObject for a resume's payload that the request's
// validator did not read on its way (one from a staged batch, say):
// validPayload's walk, which transcodes the member "value" where it meets
// it rather than skipping it, so a long answer is walked once. b is valid
// JSON, as splitObject's input is.
func splitPayload(b []byte) (payloadFields, error) {
	var p payloadFields
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' || validPayload(b, i, 0, &p) < 0 {
		return payloadFields{}, errNotObject
	}
	return p, nil
}

// splitPayload is splitPayload(f.at(key)), split already when the
// request's validator did it.
func (f fields) splitPayload(key string) (payloadFields, error) {
	if split := f.split(key); split != nil && split.payload != nil {
		return *split.payload, nil
	}
	return splitPayload(f.at(key))
}

// value returns the binary form of the payload's value member: the one
// the walk read when it is the member that counts (the last of its key),
// else read now.
func (p payloadFields) value() ([]byte, error) {
	raw := p.at(wire.FieldValue)
	if len(raw) > 0 && len(p.read) > 0 && &raw[0] == &p.read[0] {
		return p.enc, p.readErr
	}
	return value.TranscodeJSON(raw)
}
