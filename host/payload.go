package host

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Payload is the answer to a capability call: a value the call returns, an
// error it throws in the guest, or cancellation. The zero Payload returns
// undefined.
type Payload struct {
	kind  payloadKind
	value value.Value
	err   CallError
}

type payloadKind uint8

const (
	payloadValue payloadKind = iota
	payloadError
	payloadCancelled
)

// Return answers with v: the capability call returns it.
func Return(v value.Value) Payload { return Payload{value: v} }

// Throw answers with e: the capability call throws a guest Error with e's
// name, message, code and details, which guest code can catch.
func Throw(e CallError) Payload { return Payload{kind: payloadError, err: e} }

// Cancel answers with cancellation: the execution ends with "Limit:
// execution cancelled", which guest code cannot catch.
func Cancel() Payload { return Payload{kind: payloadCancelled} }

// Value returns the value a Return payload carries.
func (p Payload) Value() (value.Value, bool) { return p.value, p.kind == payloadValue }

// Thrown returns the error a Throw payload carries.
func (p Payload) Thrown() (CallError, bool) { return p.err, p.kind == payloadError }

// Cancelled reports whether p is Cancel().
func (p Payload) Cancelled() bool { return p.kind == payloadCancelled }

func (p Payload) String() string {
	switch p.kind {
	case payloadError:
		return "throw " + p.err.Error()
	case payloadCancelled:
		return "cancel"
	}
	return "return " + string(p.value.AppendJSON(nil))
}

// CallError is an error a capability call throws in the guest: an Error
// whose own name, message, code and details properties are these (an
// empty Name is "Error"; empty Code and nil Details are left out).
type CallError struct {
	Name    string
	Message string
	Code    string
	Details *value.Value
}

func (e CallError) Error() string {
	name := e.Name
	if name == "" {
		name = "Error"
	}
	if e.Message == "" {
		return name
	}
	return name + ": " + e.Message
}

type wireCallError struct {
	Name    string       `json:"name,omitempty"`
	Message string       `json:"message"`
	Code    string       `json:"code,omitempty"`
	Details *value.Value `json:"details,omitempty"`
}

type wirePayload struct {
	Type  string         `json:"type"`
	Value *value.Value   `json:"value,omitempty"`
	Error *wireCallError `json:"error,omitempty"`
}

// MarshalJSON writes the wire form ({"type":"value","value":…} and so on),
// which stores use too.
func (p Payload) MarshalJSON() ([]byte, error) {
	var w wirePayload
	switch p.kind {
	case payloadValue:
		// Written directly: through encoding/json the value's text would
		// be checked and compacted again, about 8 ns a byte.
		if err := p.value.Validate(); err != nil {
			return nil, err
		}
		n := 64
		if p.value.Kind == value.KindString {
			n += len(p.value.Str) + len(p.value.Str)/8 // room for some escapes
		}
		b := append(make([]byte, 0, n), `{"`+wire.FieldType+`":"`+wire.PayloadValue+`","`+wire.FieldValue+`":`...)
		return append(p.value.AppendJSON(b), '}'), nil
	case payloadError:
		w = wirePayload{Type: "error", Error: &wireCallError{Name: p.err.Name, Message: p.err.Message, Code: p.err.Code, Details: p.err.Details}}
	case payloadCancelled:
		w = wirePayload{Type: "cancelled"}
	default:
		return nil, errors.New("invalid Payload")
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the wire form.
func (p *Payload) UnmarshalJSON(b []byte) error {
	var w wirePayload
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	switch w.Type {
	case "value":
		if w.Value == nil {
			return errors.New("payload of type value has no value")
		}
		*p = Return(*w.Value)
	case "error":
		if w.Error == nil {
			return errors.New("payload of type error has no error")
		}
		*p = Throw(CallError{Name: w.Error.Name, Message: w.Error.Message, Code: w.Error.Code, Details: w.Error.Details})
	case "cancelled":
		*p = Cancel()
	default:
		return fmt.Errorf("unknown payload type %q", w.Type)
	}
	return nil
}
