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
