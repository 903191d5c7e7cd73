// Package wire holds the facts of the wire contract that both ends speak:
// the protocol version, the request limit, the chunk sizes of staged and
// fetched bytes, the names of methods and fields, and the snapshot key's
// digest and token. The sidecar (frame, protocol, snapshot) and every Go
// host (host, the test and benchmark drivers) take them from here, so each
// is written once. It uses the standard library only: the host package
// imports it.
package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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
