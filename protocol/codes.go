package protocol

import (
	"errors"
	"fmt"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// Error codes (the error codes extension): every ok:false response carries
// "error_code", a stable snake_case name of the failure beside its English
// phrase, so hosts branch on the code. Each code is listed, with its
// phrases, in docs/protocol.md ("Error codes"); a code, once published,
// keeps its meaning. The names are internal/wire's; code is their type
// here, so that a failure cannot carry any other string.
//
// A request failure is a requestError, which cannot be built without its
// code (errorf takes it first); an engine failure's code follows from its
// Kind and, for a limit, its message (engineCode). Nothing else reaches a
// response but the "internal" fallback, which no request should meet.
type code string

const (
	// The envelope and the fields of a request.
	codeUnsupportedVersion code = wire.CodeUnsupportedVersion
	codeUnknownMethod      code = wire.CodeUnknownMethod
	codeInvalidField       code = wire.CodeInvalidField  // a field of the wrong type or form
	codeInvalidBase64      code = wire.CodeInvalidBase64 // a base64 field that does not decode
	codeUnknownField       code = wire.CodeUnknownField  // a key a closed structure does not define
	codeMissingField       code = wire.CodeMissingField  // a required field is absent
	codeUnexpectedPayload  code = wire.CodeUnexpectedPayload
	codeBinaryField        code = wire.CodeBinaryField
	codeInvalidValue       code = wire.CodeInvalidValue // a StructuredValue that does not decode or validate
	codeInvalidCapability  code = wire.CodeInvalidCapability
	codeUnknownHostCalls   code = wire.CodeUnknownHostCalls
	codeUnknownDelivery    code = wire.CodeUnknownDelivery
	codeUnknownLanguage    code = wire.CodeUnknownLanguage
	codeUnknownConsole     code = wire.CodeUnknownConsole
	codeUnknownEntry       code = wire.CodeUnknownEntry

	// start.
	codeMissingProgram    code = wire.CodeMissingProgram
	codeProgramIDMismatch code = wire.CodeProgramIDMismatch
	codeUnknownProgramID  code = wire.CodeUnknownProgramID
	codeEvictedProgramID  code = wire.CodeEvictedProgramID // held once, evicted since
	codeRetiredFormat     code = wire.CodeRetiredFormat    // program bytes of format 1 or 2

	// resume, in the order of its checks.
	codeMissingSnapshot        code = wire.CodeMissingSnapshot
	codeSnapshotAndStage       code = wire.CodeSnapshotAndStage
	codeSnapshotIDMismatch     code = wire.CodeSnapshotIDMismatch
	codeUnknownSnapshotID      code = wire.CodeUnknownSnapshotID
	codeEvictedSnapshotID      code = wire.CodeEvictedSnapshotID
	codeMissingPolicy          code = wire.CodeMissingPolicy
	codeMissingLimits          code = wire.CodeMissingLimits
	codePolicyIDMismatch       code = wire.CodePolicyIDMismatch
	codeUnknownPolicyID        code = wire.CodeUnknownPolicyID
	codeEvictedPolicyID        code = wire.CodeEvictedPolicyID
	codeMissingAuth            code = wire.CodeMissingAuth
	codeKeyDigestMismatch      code = wire.CodeKeyDigestMismatch
	codeTamperedSnapshot       code = wire.CodeTamperedSnapshot
	codeUnauthorizedCapability code = wire.CodeUnauthorizedCapability
	codeHostCallsMismatch      code = wire.CodeHostCallsMismatch
	codeConsoleMismatch        code = wire.CodeConsoleMismatch
	codeUnknownCallID          code = wire.CodeUnknownCallID
	codeCallAnsweredTwice      code = wire.CodeCallAnsweredTwice
	codeNoAnswers              code = wire.CodeNoAnswers

	// Sealed snapshots.
	codeInvalidSealKey    code = wire.CodeInvalidSealKey
	codeSealKeyRequired   code = wire.CodeSealKeyRequired
	codeSnapshotNotSealed code = wire.CodeSnapshotNotSealed
	codeWrongSealKey      code = wire.CodeWrongSealKey

	// snapshot (fetch) and stage.
	codeOffsetPastEnd       code = wire.CodeOffsetPastEnd
	codeUnknownStageID      code = wire.CodeUnknownStageID
	codeTooManyStages       code = wire.CodeTooManyStages
	codeStageOffsetMismatch code = wire.CodeStageOffsetMismatch
	codeStageTooLarge       code = wire.CodeStageTooLarge

	// Values past 1 MiB (staged.go).
	codeValueAndStage code = wire.CodeValueAndStage
	codeInvalidStaged code = wire.CodeInvalidStaged

	// Guest-side failures: one per Kind, and one per limit.
	codeParse                 code = wire.CodeParse
	codeValidation            code = wire.CodeValidation
	codeRuntime               code = wire.CodeRuntime
	codeSerialization         code = wire.CodeSerialization
	codeLimit                 code = wire.CodeLimit // a limit without a code of its own; none today
	codeLimitInstructions     code = wire.CodeLimitInstructions
	codeLimitHeap             code = wire.CodeLimitHeap
	codeLimitAllocations      code = wire.CodeLimitAllocations
	codeLimitCallDepth        code = wire.CodeLimitCallDepth
	codeLimitOutstandingCalls code = wire.CodeLimitOutstandingCalls
	codeLimitCancelled        code = wire.CodeLimitCancelled
	codeLimitWallTime         code = wire.CodeLimitWallTime
	codeLimitSnapshotSize     code = wire.CodeLimitSnapshotSize
	codeLimitMemoryBudget     code = wire.CodeLimitMemoryBudget

	// A failure the sidecar did not expect ("request failed").
	codeInternal code = wire.CodeInternal
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

// refusalCode is the code of a resume the engine refused.
func refusalCode(r engine.RefusalReason) code {
	switch r {
	case engine.SealKeyRequired:
		return codeSealKeyRequired
	case engine.NotSealed:
		return codeSnapshotNotSealed
	case engine.WrongSealKey:
		return codeWrongSealKey
	case engine.ModeMismatch:
		return codeHostCallsMismatch
	case engine.ConsoleMismatch:
		return codeConsoleMismatch
	case engine.Unauthorized:
		return codeUnauthorizedCapability
	}
	return codeInternal
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
	var rf *engine.Refusal
	if errors.As(err, &rf) {
		return refusalCode(rf.Reason), rf.Msg
	}
	return codeInternal, "request failed"
}

// ErrorCodes lists every error code a response may carry, in the order
// docs/protocol.md lists them.
func ErrorCodes() []string { return wire.Codes() }

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
