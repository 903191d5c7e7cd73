package protocol

import (
	"encoding/json"
	"slices"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

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
