package protocol

import (
	"errors"
	"fmt"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
)

// Error codes (the error codes extension): every ok:false response carries
// "error_code", a stable snake_case name of the failure beside its English
// phrase, so hosts branch on the code. Each code is listed, with its
// phrases, in docs/protocol.md ("Error codes"); a code, once published,
// keeps its meaning.
//
// A request failure is a requestError, which cannot be built without its
// code (errorf takes it first); an engine failure's code follows from its
// Kind and, for a limit, its message (engineCode). Nothing else reaches a
// response but the "internal" fallback, which no request should meet.
type code string

const (
	// The envelope and the fields of a request.
	codeUnsupportedVersion code = "unsupported_protocol_version"
	codeUnknownMethod      code = "unknown_method"
	codeInvalidField       code = "invalid_field"  // a field of the wrong type or form
	codeInvalidBase64      code = "invalid_base64" // a base64 field that does not decode
	codeUnknownField       code = "unknown_field"  // a key a closed structure does not define
	codeMissingField       code = "missing_field"  // a required field is absent
	codeUnexpectedPayload  code = "unexpected_payload"
	codeBinaryField        code = "base64_field_in_binary"
	codeInvalidValue       code = "invalid_value" // a StructuredValue that does not decode or validate
	codeInvalidCapability  code = "invalid_capability"
	codeUnknownHostCalls   code = "unknown_host_calls"
	codeUnknownDelivery    code = "unknown_snapshot_delivery"
	codeUnknownLanguage    code = "unknown_language"
	codeUnknownConsole     code = "unknown_console"
	codeUnknownEntry       code = "unknown_entry"

	// start.
	codeMissingProgram    code = "missing_program"
	codeProgramIDMismatch code = "program_id_mismatch"
	codeUnknownProgramID  code = "unknown_program_id"
	codeEvictedProgramID  code = "evicted_program_id"     // held once, evicted since
	codeRetiredFormat     code = "retired_program_format" // program bytes of format 1 or 2

	// resume, in the order of its checks.
	codeMissingSnapshot        code = "missing_snapshot"
	codeSnapshotAndStage       code = "snapshot_bytes_and_stage_id"
	codeSnapshotIDMismatch     code = "snapshot_id_mismatch"
	codeUnknownSnapshotID      code = "unknown_snapshot_id"
	codeEvictedSnapshotID      code = "evicted_snapshot_id"
	codeMissingPolicy          code = "missing_policy"
	codeMissingLimits          code = "missing_limits"
	codePolicyIDMismatch       code = "policy_id_mismatch"
	codeUnknownPolicyID        code = "unknown_policy_id"
	codeEvictedPolicyID        code = "evicted_policy_id"
	codeMissingAuth            code = "missing_auth"
	codeKeyDigestMismatch      code = "key_digest_mismatch"
	codeTamperedSnapshot       code = "tampered_snapshot"
	codeUnauthorizedCapability code = "unauthorized_capability"
	codeHostCallsMismatch      code = "host_calls_mismatch"
	codeConsoleMismatch        code = "console_mismatch"
	codeUnknownCallID          code = "unknown_call_id"
	codeCallAnsweredTwice      code = "call_answered_twice"
	codeNoAnswers              code = "no_answers"

	// Sealed snapshots.
	codeInvalidSealKey    code = "invalid_seal_key"
	codeSealKeyRequired   code = "seal_key_required"
	codeSnapshotNotSealed code = "snapshot_not_sealed"
	codeWrongSealKey      code = "wrong_seal_key"

	// snapshot (fetch) and stage.
	codeOffsetPastEnd       code = "offset_past_end"
	codeUnknownStageID      code = "unknown_stage_id"
	codeTooManyStages       code = "too_many_stages"
	codeStageOffsetMismatch code = "stage_offset_mismatch"
	codeStageTooLarge       code = "stage_too_large"

	// Values past 1 MiB (staged.go).
	codeValueAndStage code = "value_and_stage_id"
	codeInvalidStaged code = "invalid_staged_bytes"

	// Guest-side failures: one per Kind, and one per limit.
	codeParse                 code = "parse"
	codeValidation            code = "validation"
	codeRuntime               code = "runtime"
	codeSerialization         code = "serialization"
	codeLimit                 code = "limit" // a limit without a code of its own; none today
	codeLimitInstructions     code = "limit_instruction_budget"
	codeLimitHeap             code = "limit_heap"
	codeLimitAllocations      code = "limit_allocation_budget"
	codeLimitCallDepth        code = "limit_call_depth"
	codeLimitOutstandingCalls code = "limit_outstanding_host_calls"
	codeLimitCancelled        code = "limit_cancelled"
	codeLimitWallTime         code = "limit_wall_time"
	codeLimitSnapshotSize     code = "limit_snapshot_size"
	codeLimitMemoryBudget     code = "limit_memory_budget"

	// A failure the sidecar did not expect ("request failed").
	codeInternal code = "internal"
)

// limitCodes are the limit failures' codes, by message: the engine's
// limits are values of one type, told apart by their text.
var limitCodes = map[string]code{
	engine.ErrInstructionBudget.Message: codeLimitInstructions,
	engine.ErrHeapLimit.Message:         codeLimitHeap,
	engine.ErrAllocationBudget.Message:  codeLimitAllocations,
	engine.ErrCallDepth.Message:         codeLimitCallDepth,
	engine.ErrOutstandingCalls.Message:  codeLimitOutstandingCalls,
	engine.ErrCancelled.Message:         codeLimitCancelled,
	engine.ErrWallTime.Message:          codeLimitWallTime,
	ErrSnapshotTooLarge.Message:         codeLimitSnapshotSize,
	engine.ErrCompileMemory.Message:     codeLimitMemoryBudget,
}

// engineCode is a guest-side failure's code.
func engineCode(e *engine.Error) code {
	switch e.Kind {
	case engine.KindParse:
		return codeParse
	case engine.KindValidation:
		return codeValidation
	case engine.KindRuntime:
		return codeRuntime
	case engine.KindSerialization:
		if e.Message == engine.ErrRetiredProgramFormat.Message {
			return codeRetiredFormat
		}
		return codeSerialization
	case engine.KindLimit:
		if c, ok := limitCodes[e.Message]; ok {
			return c
		}
		return codeLimit
	}
	return codeInternal
}

// answerCode is the code of a batch resume's answers that do not fit the
// outstanding calls.
func answerCode(r engine.AnswerReason) code {
	switch r {
	case engine.UnknownCall:
		return codeUnknownCallID
	case engine.AnsweredTwice:
		return codeCallAnsweredTwice
	}
	return codeNoAnswers
}

// describe is a failure as the host sees it: its code and its text.
func describe(err error) (code, string) {
	var se *stepError
	if errors.As(err, &se) {
		err = se.err
	}
	var ee *engine.Error
	if errors.As(err, &ee) {
		return engineCode(ee), ee.Error()
	}
	var re *requestError
	if errors.As(err, &re) {
		return re.code, re.msg
	}
	var ae *engine.AnswerError
	if errors.As(err, &ae) {
		return answerCode(ae.Reason), ae.Msg
	}
	return codeInternal, "request failed"
}

// ErrorCodes lists every error code a response may carry, in the order
// docs/protocol.md lists them.
func ErrorCodes() []string {
	out := make([]string, len(allCodes))
	for i, c := range allCodes {
		out[i] = string(c)
	}
	return out
}

var allCodes = []code{
	codeUnsupportedVersion, codeUnknownMethod, codeInvalidField, codeInvalidBase64,
	codeUnknownField, codeMissingField, codeUnexpectedPayload, codeBinaryField,
	codeInvalidValue, codeInvalidCapability, codeUnknownHostCalls, codeUnknownDelivery,
	codeUnknownLanguage, codeUnknownConsole, codeUnknownEntry,
	codeMissingProgram, codeProgramIDMismatch, codeUnknownProgramID, codeEvictedProgramID, codeRetiredFormat,
	codeMissingSnapshot, codeSnapshotAndStage, codeSnapshotIDMismatch, codeUnknownSnapshotID, codeEvictedSnapshotID,
	codeMissingPolicy, codeMissingLimits, codePolicyIDMismatch, codeUnknownPolicyID, codeEvictedPolicyID,
	codeMissingAuth, codeKeyDigestMismatch, codeTamperedSnapshot, codeUnauthorizedCapability,
	codeHostCallsMismatch, codeConsoleMismatch, codeUnknownCallID, codeCallAnsweredTwice, codeNoAnswers,
	codeInvalidSealKey, codeSealKeyRequired, codeSnapshotNotSealed, codeWrongSealKey,
	codeOffsetPastEnd, codeUnknownStageID, codeTooManyStages, codeStageOffsetMismatch, codeStageTooLarge,
	codeValueAndStage, codeInvalidStaged,
	codeParse, codeValidation, codeRuntime, codeSerialization, codeLimit,
	codeLimitInstructions, codeLimitHeap, codeLimitAllocations, codeLimitCallDepth,
	codeLimitOutstandingCalls, codeLimitCancelled, codeLimitWallTime, codeLimitSnapshotSize,
	codeLimitMemoryBudget, codeInternal,
}

// requestError fails one request; the session goes on. Its code is the
// response's error_code (codes.go): a failure cannot be made without one.
type requestError struct {
	code code
	msg  string
}

func (e *requestError) Error() string { return e.msg }

// errorf is a request failure with its code and its phrase.
func errorf(c code, format string, args ...any) error {
	return &requestError{code: c, msg: fmt.Sprintf(format, args...)}
}

// wrapError is a request failure with its code whose phrase another
// package wrote.
func wrapError(c code, err error) error { return &requestError{code: c, msg: err.Error()} }

// stepError is a start or resume whose execution failed, with the console
// lines its last segment wrote: the failure response carries them.
type stepError struct {
	err  error
	logs []engine.Log
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// failedStep is the error a failed step answers with.
func failedStep(s engine.Step) error {
	if len(s.Logs) == 0 {
		return s.Err
	}
	return &stepError{err: s.Err, logs: s.Logs}
}

// ErrSnapshotTooLarge ends an execution whose next snapshot would be larger
// than the stage bound: no process could ever resume it from its bytes.
var ErrSnapshotTooLarge = &engine.Error{Kind: engine.KindLimit, Message: "snapshot size limit exceeded"}
