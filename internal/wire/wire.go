// Package wire holds the facts of the wire contract that both ends speak:
// the protocol version, the request limit, the chunk sizes of staged and
// fetched bytes, the names of methods, fields, error codes, result kinds
// and mode values, the limits object, and the snapshot key's digest and
// token (and their Verifier). The sidecar
// (frame, protocol, policy, snapshot) and every Go host (host, the test
// and benchmark drivers) take them from here, so each is written once;
// Methods, Fields and Codes list them, and ./gen writes those lists for
// the Node package's tests. It uses the standard library only: the host
// package imports it.
package wire

//go:generate go run ./gen -o ../../clients/node/test/fixtures/wire-names.json

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"io"
)

// ProtocolVersion is the protocol version every request and response
// carries.
const ProtocolVersion = 2

// MaxRequestBytes is the largest request the sidecar reads: header plus
// payload of a binary frame, or a JSONL line without its newline.
const MaxRequestBytes = 1 << 20

// MaxFetchBytes is the most snapshot bytes one fetch returns, and the most
// raw bytes a host puts in one binary stage request: a binary message of
// that many bytes and a header stays under MaxRequestBytes.
const MaxFetchBytes = 960 << 10

// MaxJSONLChunk is the most raw bytes per stage request (or fetch) in
// JSONL, where base64 makes them a third longer: the line stays under
// MaxRequestBytes.
const MaxJSONLChunk = 737_280

// Methods.
const (
	MethodCompile  = "compile"
	MethodStart    = "start"
	MethodResume   = "resume"
	MethodPing     = "ping"
	MethodCancel   = "cancel"
	MethodSnapshot = "snapshot"
	MethodStage    = "stage"
	MethodStats    = "stats"
)

// FieldLanguage is compile's language (the TypeScript programs
// extension): LanguageJavaScript, the default, or LanguageTypeScript.
const (
	FieldLanguage      = "language"
	LanguageJavaScript = "javascript"
	LanguageTypeScript = "typescript"
)

// Fields that carry raw bytes in JSONL, as standard base64.
const (
	FieldProgramBase64  = "program_base64"
	FieldSnapshotBase64 = "snapshot_base64"
	FieldBytesBase64    = "bytes_base64"
)

// Fields that name a stage in place of a value (the stage and stage_values
// extensions).
const (
	FieldStageID        = "stage_id"         // resume: the snapshot bytes
	FieldSourceStageID  = "source_stage_id"  // compile: the source
	FieldProgramStageID = "program_stage_id" // start: the program bytes
	FieldInputsStageID  = "inputs_stage_id"  // start, in options: the inputs
	FieldPayloadStageID = "payload_stage_id" // resume, and each batch answer: the payload
)

// Fields of the request envelope, which every request carries.
const (
	FieldProtocolVersion = "protocol_version"
	FieldID              = "id"
	FieldMethod          = "method"
)

// Fields of the requests' bodies, by the method that reads them first.
const (
	FieldSource            = "source"            // compile
	FieldProgramID         = "program_id"        // start
	FieldOptions           = "options"           // start
	FieldInputs            = "inputs"            // start, in options
	FieldCapabilities      = "capabilities"      // start's options, resume's policy
	FieldLimits            = "limits"            // start's options, resume's policy
	FieldHostCalls         = "host_calls"        // start's options, resume's policy
	FieldConsole           = "console"           // start's options, resume's policy
	FieldEntry             = "entry"             // start, in options
	FieldSealKeyBase64     = "seal_key_base64"   // start's options, resume's policy or auth
	FieldProfile           = "profile"           // start, resume
	FieldSnapshotDelivery  = "snapshot_delivery" // start, resume
	FieldSnapshotID        = "snapshot_id"       // resume, its policy or auth; snapshot
	FieldPolicyID          = "policy_id"         // resume
	FieldPolicy            = "policy"            // resume
	FieldAuth              = "auth"              // resume
	FieldPayload           = "payload"           // resume, and each batch answer
	FieldAnswers           = "answers"           // resume
	FieldCallID            = "call_id"           // each batch answer
	FieldSnapshotKeyBase64 = "snapshot_key_base64"
	FieldSnapshotKeyDigest = "snapshot_key_digest"
	FieldSnapshotToken     = "snapshot_token"
	FieldTargetID          = "target_id" // cancel
	FieldOffset            = "offset"    // stage, snapshot
	FieldMaxBytes          = "max_bytes" // snapshot
)

// Fields of a ResumePayload, and of its error.
const (
	FieldType    = "type"
	FieldValue   = "value"
	FieldError   = "error"
	FieldName    = "name"
	FieldMessage = "message"
	FieldCode    = "code"
	FieldDetails = "details"
)

// Fields of the response envelope: every response carries
// FieldProtocolVersion, FieldID and FieldOK, then FieldResult (ok) or
// FieldError and FieldErrorCode (not ok); FieldLogs and FieldProfile when
// they apply.
const (
	FieldOK        = "ok"
	FieldResult    = "result"
	FieldErrorCode = "error_code"
	FieldLogs      = "logs" // a step's, and a failed start or resume's
)

// Fields of the responses' results, by the method that writes them first.
const (
	FieldKind              = "kind"                // every result: one of the Kind values
	FieldStep              = "step"                // start, resume: the step ({type, value} or {type, capability, args, calls})
	FieldCalls             = "calls"               // a batch-mode suspended step
	FieldCapability        = "capability"          // a suspended step, and each of its calls
	FieldArgs              = "args"                // a suspended step, and each of its calls
	FieldSnapshotBaseID    = "snapshot_base_id"    // a step delivered as a delta
	FieldTotalBytes        = "total_bytes"         // snapshot, stage
	FieldWasRunning        = "was_running"         // cancel
	FieldSidecarVersion    = "sidecar_version"     // ping
	FieldProtocolVersions  = "protocol_versions"   // ping
	FieldTransport         = "transport"           // ping
	FieldFeatures          = "features"            // ping
	FieldDefaultLimits     = "default_limits"      // ping
	FieldMaxRequestBytes   = "max_request_bytes"   // ping
	FieldLevel             = "level"               // each console line
	FieldText              = "text"                // each console line
	FieldExecutionNS       = "execution_ns"        // the profile
	FieldResponsePrepareNS = "response_prepare_ns" // the profile
	FieldInstructions      = "instructions"        // the profile
)

// Fields of stats' result: what the session holds now, and counters since
// it began.
const (
	FieldMemoryBudgetBytes   = "memory_budget_bytes"
	FieldMemoryUsedBytes     = "memory_used_bytes"
	FieldMemoryReservedBytes = "memory_reserved_bytes"
	FieldParkedExecutions    = "parked_executions"
	FieldCachedPrograms      = "cached_programs"
	FieldCachedSnapshots     = "cached_snapshots"
	FieldCachedPolicies      = "cached_policies"
	FieldStagedBytes         = "staged_bytes"
	FieldCompiles            = "compiles"
	FieldHotResumes          = "hot_resumes"
	FieldReplays             = "replays"
	FieldEvictedExecutions   = "evicted_executions"
	FieldEvictions           = "evictions"
)

// Fields of a limits object (start's options, resume's policy, ping's
// default_limits), in policy_id order.
const (
	FieldInstructionBudget       = "instruction_budget"
	FieldHeapLimitBytes          = "heap_limit_bytes"
	FieldAllocationBudget        = "allocation_budget"
	FieldCallDepthLimit          = "call_depth_limit"
	FieldMaxOutstandingHostCalls = "max_outstanding_host_calls"
	FieldWallTimeMS              = "wall_time_ms"
	FieldMaxLogBytes             = "max_log_bytes"
)

// Kinds of result, the value of FieldKind.
const (
	KindProgram   = "program"   // compile
	KindStep      = "step"      // start, resume
	KindPong      = "pong"      // ping
	KindCancelled = "cancelled" // cancel
	KindSnapshot  = "snapshot"  // snapshot
	KindStaged    = "staged"    // stage
	KindStats     = "stats"     // stats
)

// Types of step, the value of a step's FieldType.
const (
	StepCompleted = "completed"
	StepSuspended = "suspended"
)

// Types of ResumePayload, the value of its FieldType.
const (
	PayloadValue     = "value"
	PayloadError     = "error"
	PayloadCancelled = "cancelled"
)

// The values of the mode fields: FieldHostCalls, FieldSnapshotDelivery,
// FieldConsole, FieldEntry, and ping's FieldTransport. The first of each
// is the default.
const (
	HostCallsOne   = "one"
	HostCallsBatch = "batch"

	DeliveryFull  = "full"
	DeliveryDelta = "delta"
	DeliveryNone  = "none"

	ConsoleOff     = "off"
	ConsoleCollect = "collect"

	EntryScript = "script"
	EntryCall   = "call"

	TransportJSONL  = "jsonl"
	TransportBinary = "binary"
)

// Error codes: the error_code of every ok:false response (the error codes
// extension), in the order docs/protocol.md lists them. A code, once
// published, keeps its meaning.
const (
	// The envelope and the fields of a request.
	CodeUnsupportedVersion = "unsupported_protocol_version"
	CodeUnknownMethod      = "unknown_method"
	CodeInvalidField       = "invalid_field"  // a field of the wrong type or form
	CodeInvalidBase64      = "invalid_base64" // a base64 field that does not decode
	CodeUnknownField       = "unknown_field"  // a key a closed structure does not define
	CodeMissingField       = "missing_field"  // a required field is absent
	CodeUnexpectedPayload  = "unexpected_payload"
	CodeBinaryField        = "base64_field_in_binary"
	CodeInvalidValue       = "invalid_value" // a StructuredValue that does not decode or validate
	CodeInvalidCapability  = "invalid_capability"
	CodeUnknownHostCalls   = "unknown_host_calls"
	CodeUnknownDelivery    = "unknown_snapshot_delivery"
	CodeUnknownLanguage    = "unknown_language"
	CodeUnknownConsole     = "unknown_console"
	CodeUnknownEntry       = "unknown_entry"

	// start.
	CodeMissingProgram    = "missing_program"
	CodeProgramIDMismatch = "program_id_mismatch"
	CodeUnknownProgramID  = "unknown_program_id"
	CodeEvictedProgramID  = "evicted_program_id"     // held once, evicted since
	CodeRetiredFormat     = "retired_program_format" // program bytes of format 1 or 2

	// resume, in the order of its checks.
	CodeMissingSnapshot        = "missing_snapshot"
	CodeSnapshotAndStage       = "snapshot_bytes_and_stage_id"
	CodeSnapshotIDMismatch     = "snapshot_id_mismatch"
	CodeUnknownSnapshotID      = "unknown_snapshot_id"
	CodeEvictedSnapshotID      = "evicted_snapshot_id"
	CodeMissingPolicy          = "missing_policy"
	CodeMissingLimits          = "missing_limits"
	CodePolicyIDMismatch       = "policy_id_mismatch"
	CodeUnknownPolicyID        = "unknown_policy_id"
	CodeEvictedPolicyID        = "evicted_policy_id"
	CodeMissingAuth            = "missing_auth"
	CodeKeyDigestMismatch      = "key_digest_mismatch"
	CodeTamperedSnapshot       = "tampered_snapshot"
	CodeUnauthorizedCapability = "unauthorized_capability"
	CodeHostCallsMismatch      = "host_calls_mismatch"
	CodeConsoleMismatch        = "console_mismatch"
	CodeUnknownCallID          = "unknown_call_id"
	CodeCallAnsweredTwice      = "call_answered_twice"
	CodeNoAnswers              = "no_answers"

	// Sealed snapshots.
	CodeInvalidSealKey    = "invalid_seal_key"
	CodeSealKeyRequired   = "seal_key_required"
	CodeSnapshotNotSealed = "snapshot_not_sealed"
	CodeWrongSealKey      = "wrong_seal_key"

	// snapshot (fetch) and stage.
	CodeOffsetPastEnd       = "offset_past_end"
	CodeUnknownStageID      = "unknown_stage_id"
	CodeTooManyStages       = "too_many_stages"
	CodeStageOffsetMismatch = "stage_offset_mismatch"
	CodeStageTooLarge       = "stage_too_large"

	// Values past the request limit, from a stage.
	CodeValueAndStage = "value_and_stage_id"
	CodeInvalidStaged = "invalid_staged_bytes"

	// Guest-side failures: one per kind, and one per limit.
	CodeParse                 = "parse"
	CodeValidation            = "validation"
	CodeRuntime               = "runtime"
	CodeSerialization         = "serialization"
	CodeLimit                 = "limit" // a limit without a code of its own; none today
	CodeLimitInstructions     = "limit_instruction_budget"
	CodeLimitHeap             = "limit_heap"
	CodeLimitAllocations      = "limit_allocation_budget"
	CodeLimitCallDepth        = "limit_call_depth"
	CodeLimitOutstandingCalls = "limit_outstanding_host_calls"
	CodeLimitCancelled        = "limit_cancelled"
	CodeLimitWallTime         = "limit_wall_time"
	CodeLimitSnapshotSize     = "limit_snapshot_size"
	CodeLimitMemoryBudget     = "limit_memory_budget"

	// A failure the sidecar did not expect ("request failed").
	CodeInternal = "internal"
)

// Methods lists every method.
func Methods() []string {
	return []string{MethodCompile, MethodStart, MethodResume, MethodPing, MethodCancel, MethodSnapshot, MethodStage, MethodStats}
}

// Fields lists every member name of a request or a response, at any
// depth (envelope, options, policy, auth, answers, payloads, results,
// steps, limits, profile, console lines), each once.
func Fields() []string {
	return []string{
		FieldProtocolVersion, FieldID, FieldMethod,
		FieldLanguage, FieldProgramBase64, FieldSnapshotBase64, FieldBytesBase64,
		FieldStageID, FieldSourceStageID, FieldProgramStageID, FieldInputsStageID, FieldPayloadStageID,
		FieldSource, FieldProgramID, FieldOptions, FieldInputs, FieldCapabilities, FieldLimits,
		FieldHostCalls, FieldConsole, FieldEntry, FieldSealKeyBase64, FieldProfile, FieldSnapshotDelivery,
		FieldSnapshotID, FieldPolicyID, FieldPolicy, FieldAuth, FieldPayload, FieldAnswers, FieldCallID,
		FieldSnapshotKeyBase64, FieldSnapshotKeyDigest, FieldSnapshotToken, FieldTargetID, FieldOffset, FieldMaxBytes,
		FieldType, FieldValue, FieldError, FieldName, FieldMessage, FieldCode, FieldDetails,
		FieldOK, FieldResult, FieldErrorCode, FieldLogs,
		FieldKind, FieldStep, FieldCalls, FieldCapability, FieldArgs, FieldSnapshotBaseID, FieldTotalBytes,
		FieldWasRunning, FieldSidecarVersion, FieldProtocolVersions, FieldTransport, FieldFeatures,
		FieldDefaultLimits, FieldMaxRequestBytes, FieldLevel, FieldText,
		FieldExecutionNS, FieldResponsePrepareNS, FieldInstructions,
		FieldInstructionBudget, FieldHeapLimitBytes, FieldAllocationBudget, FieldCallDepthLimit,
		FieldMaxOutstandingHostCalls, FieldWallTimeMS, FieldMaxLogBytes,
		FieldMemoryBudgetBytes, FieldMemoryUsedBytes, FieldMemoryReservedBytes, FieldParkedExecutions,
		FieldCachedPrograms, FieldCachedSnapshots, FieldCachedPolicies, FieldStagedBytes,
		FieldCompiles, FieldHotResumes, FieldReplays, FieldEvictedExecutions, FieldEvictions,
	}
}

// Codes lists every error code, in the order docs/protocol.md lists them.
func Codes() []string {
	return []string{
		CodeUnsupportedVersion, CodeUnknownMethod, CodeInvalidField, CodeInvalidBase64,
		CodeUnknownField, CodeMissingField, CodeUnexpectedPayload, CodeBinaryField,
		CodeInvalidValue, CodeInvalidCapability, CodeUnknownHostCalls, CodeUnknownDelivery,
		CodeUnknownLanguage, CodeUnknownConsole, CodeUnknownEntry,
		CodeMissingProgram, CodeProgramIDMismatch, CodeUnknownProgramID, CodeEvictedProgramID, CodeRetiredFormat,
		CodeMissingSnapshot, CodeSnapshotAndStage, CodeSnapshotIDMismatch, CodeUnknownSnapshotID, CodeEvictedSnapshotID,
		CodeMissingPolicy, CodeMissingLimits, CodePolicyIDMismatch, CodeUnknownPolicyID, CodeEvictedPolicyID,
		CodeMissingAuth, CodeKeyDigestMismatch, CodeTamperedSnapshot, CodeUnauthorizedCapability,
		CodeHostCallsMismatch, CodeConsoleMismatch, CodeUnknownCallID, CodeCallAnsweredTwice, CodeNoAnswers,
		CodeInvalidSealKey, CodeSealKeyRequired, CodeSnapshotNotSealed, CodeWrongSealKey,
		CodeOffsetPastEnd, CodeUnknownStageID, CodeTooManyStages, CodeStageOffsetMismatch, CodeStageTooLarge,
		CodeValueAndStage, CodeInvalidStaged,
		CodeParse, CodeValidation, CodeRuntime, CodeSerialization, CodeLimit,
		CodeLimitInstructions, CodeLimitHeap, CodeLimitAllocations, CodeLimitCallDepth,
		CodeLimitOutstandingCalls, CodeLimitCancelled, CodeLimitWallTime, CodeLimitSnapshotSize,
		CodeLimitMemoryBudget, CodeInternal,
	}
}

// SHA256Hex is the lowercase hex SHA-256 of b: program ids, snapshot ids
// and key digests.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// KeyDigest is snapshot_key_digest: the lowercase hex SHA-256 of the key.
func KeyDigest(key []byte) string { return SHA256Hex(key) }

// Token is snapshot_token: the lowercase hex HMAC-SHA256 of the snapshot
// id's text under the key, the proof that a host accepted the snapshot.
func Token(key []byte, snapshotID string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(snapshotID))
	return hex.EncodeToString(m.Sum(nil))
}

// Limits is the limits object of a start's options and a resume's policy:
// a nil member is left out (the sidecar's default), an explicit zero is
// sent. The sidecar reads it strictly (policy.LimitsSpec); hosts write it
// from their own types.
type Limits struct {
	InstructionBudget       *uint64 `json:"instruction_budget,omitempty"`
	HeapLimitBytes          *uint64 `json:"heap_limit_bytes,omitempty"`
	AllocationBudget        *uint64 `json:"allocation_budget,omitempty"`
	CallDepthLimit          *uint64 `json:"call_depth_limit,omitempty"`
	MaxOutstandingHostCalls *uint64 `json:"max_outstanding_host_calls,omitempty"`
	WallTimeMS              *uint64 `json:"wall_time_ms,omitempty"`
	MaxLogBytes             *uint64 `json:"max_log_bytes,omitempty"`
}

// Verifier checks key digests and tokens for one key. Its digest and HMAC
// state are computed once, so a sidecar that authenticates resumes under
// the same key pays for one HMAC per request and nothing else. Not safe
// for concurrent use.
type Verifier struct {
	digest string
	mac    hash.Hash
	sum    [sha256.Size]byte
	hex    [2 * sha256.Size]byte
}

// NewVerifier prepares the checks for key.
func NewVerifier(key []byte) *Verifier {
	return &Verifier{digest: KeyDigest(key), mac: hmac.New(sha256.New, key)}
}

// VerifyDigest reports, in constant time, whether digest is the key's
// digest.
func (v *Verifier) VerifyDigest(digest string) bool {
	return subtle.ConstantTimeCompare([]byte(v.digest), []byte(digest)) == 1
}

// VerifyToken reports, in constant time, whether token authenticates id.
func (v *Verifier) VerifyToken(snapshotID, token string) bool {
	v.mac.Reset()
	io.WriteString(v.mac, snapshotID)
	hex.Encode(v.hex[:], v.mac.Sum(v.sum[:0]))
	return subtle.ConstantTimeCompare(v.hex[:], []byte(token)) == 1
}
