package protocol

import (
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// resumePayload decodes the host's answer to a suspended call.
type resumePayload struct {
	cancelled bool
	outcome   snapshot.Outcome
}

func (f fields) payload(key string) (resumePayload, error) {
	p, ok, err := f.closedObject(key, "payload", payloadKeys)
	if err != nil {
		return resumePayload{}, err
	}
	if !ok {
		return resumePayload{}, errorf("resume requires payload")
	}
	kind, _, err := p.string("type")
	if err != nil {
		return resumePayload{}, errorf("payload.type must be a string")
	}
	switch kind {
	case "value":
		if _, ok := p.get("value"); !ok {
			return resumePayload{}, errorf("payload.value is required")
		}
		v, err := value.ParseJSON(p.at("value"))
		if err == nil {
			err = v.Validate()
		}
		if err != nil {
			return resumePayload{}, errorf("invalid payload.value: %s", err.Error())
		}
		return resumePayload{outcome: snapshot.Outcome{Value: v}}, nil
	case "error":
		e, ok, err := p.object("error")
		if err != nil || !ok {
			return resumePayload{}, errorf("payload.error must be an object")
		}
		if err := checkClosed(e, p.at("error"), "payload.error", payloadErrorKeys); err != nil {
			return resumePayload{}, err
		}
		he := &snapshot.HostError{}
		if he.Name, _, err = e.guestString("name"); err != nil {
			return resumePayload{}, errorf("payload.error.name must be a string")
		}
		if he.Message, _, err = e.guestString("message"); err != nil {
			return resumePayload{}, errorf("payload.error.message must be a string")
		}
		code, ok, err := e.guestString("code")
		if err != nil {
			return resumePayload{}, errorf("payload.error.code must be a string")
		}
		if ok {
			he.Code = &code
		}
		if raw, ok := e.get("details"); ok {
			d, err := value.ParseJSON(raw)
			if err == nil {
				err = d.Validate()
			}
			if err != nil {
				return resumePayload{}, errorf("invalid payload.error.details: %s", err.Error())
			}
			he.Details = &d
		}
		return resumePayload{outcome: snapshot.Outcome{Error: he}}, nil
	case "cancelled":
		return resumePayload{cancelled: true}, nil
	}
	return resumePayload{}, errorf("payload.type must be \"value\", \"error\" or \"cancelled\"")
}
