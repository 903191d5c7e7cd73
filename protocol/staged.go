package protocol

import (
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
)

// Values past 1 MiB (the stage_values extension): a compile's source, a
// start's program bytes and inputs, and a resume's answers may each come
// from a stage instead of the request itself, so that none of them is
// bounded by the request limit. The request names the stage in a field of
// its own beside the inline one:
//
//	compile  source_stage_id           UTF-8 source
//	start    program_stage_id          program bytes
//	         options.inputs_stage_id   a JSON object of StructuredValues
//	resume   payload_stage_id          the JSON of a ResumePayload
//	         answers[i].payload_stage_id
//
// (a resume's snapshot bytes come from stage_id, transfer.go). Every stage
// a request names is taken, and so dropped, when the request is served,
// before anything else about it is checked: whatever the outcome, a retry
// stages its bytes again, and no stage outlives the request that used it.
// Staged bytes are then checked exactly as the inline field would be.

// stagedSet holds the stages a request named, by stage id.
type stagedSet map[string][]byte

// takeNamed takes every stage that f names in one of the keys, leaving
// malformed ids to the step that reads the field.
func (s *Session) takeNamed(set stagedSet, f fields, keys ...string) stagedSet {
	for _, k := range keys {
		id, ok, err := f.stageID(k)
		if err != nil || !ok {
			continue
		}
		if _, done := set[id]; done {
			continue
		}
		if b, ok := s.stages.take(id); ok {
			if set == nil {
				set = stagedSet{}
			}
			if b == nil {
				b = []byte{}
			}
			set[id] = b
		}
	}
	return set
}

// takeAnswerStages takes the stages a batch resume's answers name.
func (s *Session) takeAnswerStages(set stagedSet, f fields) stagedSet {
	jsonscan.Elements(f.at("answers"), func(raw []byte) bool {
		if a, err := splitObject(raw); err == nil {
			set = s.takeNamed(set, a, payloadStageField)
		}
		return true
	})
	return set
}

// staged returns the bytes of the stage f[key] names; ok is false when f
// has no such key. inline is the field it stands in for: naming both fails.
func (set stagedSet) staged(f fields, key, inline, structure string) ([]byte, bool, error) {
	id, ok, err := f.stageID(key)
	if err != nil || !ok {
		return nil, false, err
	}
	if f.present(inline) {
		return nil, false, errorf(codeValueAndStage, "%s takes %s or %s, not both", structure, inline, key)
	}
	b, ok := set[id]
	if !ok {
		return nil, false, errorf(codeUnknownStageID, "unknown stage_id `%s`", id)
	}
	return b, true, nil
}

// stagedJSON wraps staged bytes that stand for the JSON value of field
// key as a one-field object, after the checks every request header gets:
// UTF-8, and exactly one JSON value.
func stagedJSON(stageKey, key string, b []byte) (fields, error) {
	if !utf8.Valid(b) {
		return nil, errorf(codeInvalidStaged, "%s: the staged bytes are not valid UTF-8", stageKey)
	}
	if !validJSON(b) {
		return nil, errorf(codeInvalidStaged, "%s: the staged bytes are not valid JSON", stageKey)
	}
	return fields{{key: key, raw: b}}, nil
}

const (
	sourceStageField  = "source_stage_id"
	programStageField = "program_stage_id"
	inputsStageField  = "inputs_stage_id"
	payloadStageField = "payload_stage_id"
)
