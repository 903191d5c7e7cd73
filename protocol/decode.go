package protocol

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Version is the protocol version this sidecar speaks.
const Version = wire.ProtocolVersion

// FatalError ends the session: nothing in the request can be correlated.
type FatalError struct{ Msg string }

func (e *FatalError) Error() string { return e.Msg }

// envelope reads id and method, which every request must carry for its
// response to be correlated.
func envelope(header []byte, binary bool) (fields, uint64, string, error) {
	prefix := "invalid request"
	if binary {
		prefix = "invalid request header"
	}
	f, isObject, valid := validObject(header)
	if !valid {
		// validObject checks UTF-8 too; which check failed is told apart
		// only here, off the path of valid requests.
		if !utf8.Valid(header) {
			return nil, 0, "", &FatalError{prefix + ": not valid UTF-8"}
		}
		return nil, 0, "", &FatalError{prefix + ": not valid JSON"}
	}
	if !isObject {
		return nil, 0, "", &FatalError{prefix + ": not a JSON object"}
	}
	id, ok := parseUint(f.at(wire.FieldID))
	if !ok {
		return nil, 0, "", &FatalError{prefix + ": id must be an unsigned integer"}
	}
	// Unmarshal accepts null into a string; a method must be a real string.
	raw, ok := f.get(wire.FieldMethod)
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return nil, 0, "", &FatalError{prefix + ": method must be a string"}
	}
	if method, ok := knownMethod(raw); ok {
		return f, id, method, nil
	}
	var method string
	if json.Unmarshal(raw, &method) != nil {
		return nil, 0, "", &FatalError{prefix + ": method must be a string"}
	}
	return f, id, method, nil
}

// knownMethod returns the contract's method names without decoding or
// allocating; any other spelling goes through the decoder.
func knownMethod(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	switch string(raw[1 : len(raw)-1]) {
	case wire.MethodResume:
		return wire.MethodResume, true
	case wire.MethodStart:
		return wire.MethodStart, true
	case wire.MethodCompile:
		return wire.MethodCompile, true
	case wire.MethodCancel:
		return wire.MethodCancel, true
	case wire.MethodSnapshot:
		return wire.MethodSnapshot, true
	case wire.MethodStage:
		return wire.MethodStage, true
	case wire.MethodPing:
		return wire.MethodPing, true
	}
	return "", false
}

// parseUint accepts a plain JSON integer in [0, 2^64-1].
func parseUint(raw json.RawMessage) (uint64, bool) {
	if len(raw) == 0 || len(raw) > 20 {
		return 0, false
	}
	if raw[0] == '0' && len(raw) > 1 {
		return 0, false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return n, err == nil
}

func checkVersion(f fields) error {
	raw, ok := f.get(wire.FieldProtocolVersion)
	if !ok {
		return errorf(codeUnsupportedVersion, "unsupported sidecar protocol version missing; expected %d", Version)
	}
	if v, ok := parseUint(raw); !ok || v != Version {
		return errorf(codeUnsupportedVersion, "unsupported sidecar protocol version %s; expected %d", raw, Version)
	}
	return nil
}

func (f fields) string(key string) (string, bool, error) {
	if !f.present(key) {
		return "", false, nil
	}
	if s, ok := jsonscan.PlainString(f.at(key)); ok {
		return s, true, nil
	}
	var s string
	if err := json.Unmarshal(f.at(key), &s); err != nil {
		return "", false, errorf(codeInvalidField, "%s must be a string", key)
	}
	return s, true, nil
}

// guestString decodes a string that reaches guest code as WTF-8, so an
// unpaired surrogate (a \u escape) arrives as itself, not as U+FFFD.
func (f fields) guestString(key string) (string, bool, error) {
	if !f.present(key) {
		return "", false, nil
	}
	s, err := value.ParseJSONString(f.at(key))
	if err != nil {
		return "", false, errorf(codeInvalidField, "%s must be a string", key)
	}
	return s, true, nil
}

func (f fields) base64(key string) ([]byte, bool, error) {
	s, ok, err := f.string(key)
	if err != nil || !ok {
		return nil, ok, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false, errorf(codeInvalidBase64, "%s is not valid base64", key)
	}
	return b, true, nil
}

func (f fields) object(key string) (fields, bool, error) {
	if !f.present(key) {
		return nil, false, nil
	}
	sub, err := splitObject(f.at(key))
	if err != nil {
		return nil, false, errorf(codeInvalidField, "%s must be an object", key)
	}
	return sub, true, nil
}

func (f fields) bool(key string) (bool, error) {
	if !f.present(key) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(f.at(key), &b); err != nil {
		return false, errorf(codeInvalidField, "%s must be a boolean", key)
	}
	return b, nil
}

func (f fields) capabilities(key string) ([]string, error) {
	if !f.present(key) {
		return nil, nil
	}
	var caps []string
	if err := json.Unmarshal(f.at(key), &caps); err != nil {
		return nil, errorf(codeInvalidField, "%s must be an array of strings", key)
	}
	return caps, nil
}

func (f fields) limits(key string) (policy.Limits, error) {
	var spec policy.LimitsSpec
	if f.present(key) {
		if err := json.Unmarshal(f.at(key), &spec); err != nil {
			return policy.Limits{}, limitsError(err)
		}
	}
	return spec.Resolve(), nil
}

// limitsError keeps a custom decoder's message and hides encoding/json's
// own, which names Go types.
func limitsError(err error) error {
	var unknown *policy.UnknownFieldError
	if errors.As(err, &unknown) {
		return wrapError(codeUnknownField, err)
	}
	switch err.(type) {
	case *json.SyntaxError, *json.UnmarshalTypeError:
		return errorf(codeInvalidField, "limits must be an object")
	}
	return wrapError(codeInvalidField, err)
}

func (f fields) inputs(key string) ([]value.Member, error) {
	if !f.present(key) {
		return nil, nil
	}
	obj, err := splitObject(f.at(key))
	if err != nil {
		return nil, errorf(codeInvalidField, "%s must be an object of StructuredValues", key)
	}
	members := make([]value.Member, 0, len(obj))
	for _, fl := range obj {
		k, raw := fl.key, fl.raw
		iv, err := value.ParseJSON(raw) // valid when it parses (FuzzParseJSON)
		if err != nil {
			return nil, errorf(codeInvalidValue, "invalid input %q: %s", k, err.Error())
		}
		members = append(members, value.Member{Key: k, Value: iv})
	}
	return members, nil
}

// uint reads an optional unsigned integer field.
func (f fields) uint(key string) (uint64, bool, error) {
	if !f.present(key) {
		return 0, false, nil
	}
	n, ok := parseUint(f.at(key))
	if !ok {
		return 0, false, errorf(codeInvalidField, "%s must be an unsigned integer", key)
	}
	return n, true, nil
}

// stageIDRule is the rule a stage id must follow, after the field's name.
const stageIDRule = " must be 1 to 64 characters of [A-Za-z0-9_-]"

// stageID reads an optional stage_id and checks its form.
func (f fields) stageID(key string) (string, bool, error) {
	id, ok, err := f.string(key)
	if err != nil || !ok {
		return "", ok, err
	}
	if len(id) == 0 || len(id) > 64 {
		return "", false, errorf(codeInvalidField, "%s%s", key, stageIDRule)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return "", false, errorf(codeInvalidField, "%s%s", key, stageIDRule)
		}
	}
	return id, true, nil
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// delivery is a start/resume's snapshot_delivery.
type delivery int

const (
	deliverFull  delivery = iota // the whole snapshot
	deliverDelta                 // the bytes appended to the resumed snapshot
	deliverNone                  // no bytes; the host fetches them if it wants them
)

// delivery reads snapshot_delivery: "full" (also when absent or null),
// "delta" or "none".
func (f fields) delivery(key string) (delivery, error) {
	if !f.present(key) {
		return deliverFull, nil
	}
	v, _, err := f.string(key)
	if err != nil {
		return 0, err
	}
	switch v {
	case wire.DeliveryFull:
		return deliverFull, nil
	case wire.DeliveryDelta:
		return deliverDelta, nil
	case wire.DeliveryNone:
		return deliverNone, nil
	}
	return 0, errorf(codeUnknownDelivery, "unknown snapshot_delivery `%s`", v)
}

// language reads compile's language: "javascript" (also when absent or
// null) or "typescript".
func (f fields) language() (engine.Language, error) {
	if !f.present(wire.FieldLanguage) {
		return engine.JavaScript, nil
	}
	v, _, err := f.string(wire.FieldLanguage)
	if err != nil {
		return "", err
	}
	lang, ok := engine.ParseLanguage(v)
	if !ok {
		return "", errorf(codeUnknownLanguage, "unknown language `%s`", v)
	}
	return lang, nil
}

// Closed structures: the objects inside a request whose keys are all known.
// Any other key fails the request, so that a misspelt field never silently
// means its default ("instructions" for "instruction_budget" would run on
// the default budget). Top-level keys stay open: hosts may add their own.
// limits is closed by policy.LimitsSpec.
var (
	optionsKeys      = []string{wire.FieldInputs, wire.FieldInputsStageID, wire.FieldCapabilities, wire.FieldLimits, wire.FieldHostCalls, wire.FieldConsole, wire.FieldEntry, wire.FieldSealKeyBase64}
	policyKeys       = []string{wire.FieldCapabilities, wire.FieldLimits, wire.FieldHostCalls, wire.FieldConsole, wire.FieldSnapshotID, wire.FieldSnapshotKeyBase64, wire.FieldSnapshotKeyDigest, wire.FieldSnapshotToken, wire.FieldSealKeyBase64}
	answerKeys       = []string{wire.FieldCallID, wire.FieldPayload, wire.FieldPayloadStageID}
	authKeys         = []string{wire.FieldSnapshotKeyBase64, wire.FieldSnapshotKeyDigest, wire.FieldSnapshotToken, wire.FieldSealKeyBase64}
	payloadKeys      = []string{wire.FieldType, wire.FieldValue, wire.FieldError}
	payloadErrorKeys = []string{wire.FieldName, wire.FieldMessage, wire.FieldCode, wire.FieldDetails}
)

// closedObject reads f[key] as an object that may hold only the known
// keys; structure names it in the error.
func (f fields) closedObject(key, structure string, known []string) (fields, bool, error) {
	sub, ok, err := f.object(key)
	if err != nil || !ok {
		return sub, ok, err
	}
	if err := checkClosed(sub, f.at(key), structure, known); err != nil {
		return nil, false, err
	}
	return sub, true, nil
}

// unknownIn checks f[key] when it is an object; anything else is left for
// the step that reads the field to report.
func (f fields) unknownIn(key, structure string, known []string) error {
	if !f.present(key) {
		return nil
	}
	sub, err := splitObject(f.at(key))
	if err != nil {
		return nil
	}
	return checkClosed(sub, f.at(key), structure, known)
}

// checkClosed fails with the first unknown key of raw, in document order,
// so the error is the same on every run. The common case, every key known,
// costs one look per key.
func checkClosed(sub fields, raw []byte, structure string, known []string) error {
	for _, fl := range sub {
		if !slices.Contains(known, fl.key) {
			return errorf(codeUnknownField, "unknown field `%s` in %s", firstUnknownKey(raw, known), structure)
		}
	}
	return nil
}

// firstUnknownKey walks an object splitObject accepted and returns its
// first key that is not known.
func firstUnknownKey(b []byte, known []string) (unknown string) {
	jsonscan.Members(b, func(key, _ []byte) bool {
		k, ok := jsonscan.PlainString(key)
		if !ok {
			_ = json.Unmarshal(key, &k)
		}
		if !slices.Contains(known, k) {
			unknown = k
			return false
		}
		return true
	})
	return unknown
}

// hostCalls reads a host_calls mode: "one" (also when absent or null) or
// "batch".
func (f fields) hostCalls(key string) (policy.HostCalls, error) {
	v, ok, err := f.string(key)
	if err != nil || !ok {
		return policy.HostCallsOne, err
	}
	m, err := policy.ParseHostCalls(v)
	if err != nil {
		return 0, wrapError(codeUnknownHostCalls, err)
	}
	return m, nil
}

// console reads a console mode: "off" (also when absent or null) or
// "collect".
func (f fields) console(key string) (policy.Console, error) {
	v, ok, err := f.string(key)
	if err != nil || !ok {
		return policy.ConsoleOff, err
	}
	c, err := policy.ParseConsole(v)
	if err != nil {
		return 0, wrapError(codeUnknownConsole, err)
	}
	return c, nil
}

// entry reads how a start enters its program: "script" (also when absent
// or null) or "call".
func (f fields) entry(key string) (snapshot.Entry, error) {
	v, ok, err := f.string(key)
	if err != nil || !ok {
		return snapshot.EntryScript, err
	}
	e, err := snapshot.ParseEntry(v)
	if err != nil {
		return 0, wrapError(codeUnknownEntry, err)
	}
	return e, nil
}
