package protocol

import (
	"encoding/json"
	"slices"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
)

// Closed structures: the objects inside a request whose keys are all known.
// Any other key fails the request, so that a misspelt field never silently
// means its default ("instructions" for "instruction_budget" would run on
// the default budget). Top-level keys stay open: hosts may add their own.
// limits is closed by policy.LimitsSpec.
var (
	optionsKeys      = []string{"inputs", inputsStageField, "capabilities", "limits", "host_calls", "console", "entry", sealKeyField}
	policyKeys       = []string{"capabilities", "limits", "host_calls", "console", "snapshot_id", "snapshot_key_base64", "snapshot_key_digest", "snapshot_token", sealKeyField}
	answerKeys       = []string{"call_id", "payload", payloadStageField}
	authKeys         = []string{"snapshot_key_base64", "snapshot_key_digest", "snapshot_token", sealKeyField}
	payloadKeys      = []string{"type", "value", "error"}
	payloadErrorKeys = []string{"name", "message", "code", "details"}
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
