package bench

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// benchKey is the benchmark host's snapshot key.
var benchKey = []byte("0123456789abcdef0123456789abcdef")

var (
	benchKeyB64    = base64.StdEncoding.EncodeToString(benchKey)
	benchKeyDigest = wire.KeyDigest(benchKey)
	// requestPrefix starts every request the driver writes by hand, up
	// to its id.
	requestPrefix = `{"` + wire.FieldProtocolVersion + `":` + strconv.Itoa(wire.ProtocolVersion) + `,"` + wire.FieldID + `":`
)

// host is a lean embedding host: requests are assembled from prepared
// fragments and responses are read raw, so what is timed is mostly the
// sidecar and the pipes.
type host struct {
	sc    *hosttest.Sidecar
	jsonl bool
	id    uint64
	line  []byte
}

func newHost(jsonl bool) (*host, error) { return newHostEnv(nil, jsonl) }

// newHostEnv is newHost with env added to the sidecar's environment.
func newHostEnv(env []string, jsonl bool) (*host, error) {
	var args []string
	if jsonl {
		args = append(args, "--jsonl")
	}
	sc, err := hosttest.StartEnv(env, args...)
	if err != nil {
		return nil, err
	}
	return &host{sc: sc, jsonl: jsonl}, nil
}

func (h *host) close() {
	if code, stderr := h.sc.Wait(); code != 0 {
		logf(nil, "sidecar exited %d: %s", code, stderr)
	}
}

func (h *host) nextID() uint64 { h.id++; return h.id }

// roundTrip sends one request and reads its response.
func (h *host) roundTrip(header, payload []byte) ([]byte, []byte, error) {
	if err := h.send(header, payload); err != nil {
		return nil, nil, err
	}
	return h.sc.RecvRaw()
}

func (h *host) send(header, payload []byte) error {
	if !h.jsonl {
		return h.sc.SendRaw(header, payload)
	}
	if len(payload) > 0 {
		return fmt.Errorf("raw bytes over JSONL are not used by the driver")
	}
	h.line = append(append(h.line[:0], header...), '\n')
	return h.sc.WriteBytes(h.line)
}

// call is roundTrip plus decoding; a failed response is an error.
func (h *host) call(header, payload []byte) (*stepResponse, []byte, error) {
	hdr, pl, err := h.roundTrip(header, payload)
	if err != nil {
		return nil, nil, err
	}
	r, err := parseResponse(hdr)
	return r, pl, err
}

type stepResponse struct {
	OK     bool   `json:"ok"`
	Error  string `json:"error"`
	Result struct {
		Kind      string `json:"kind"`
		ProgramID string `json:"program_id"`
		Step      struct {
			Type       string          `json:"type"`
			Capability string          `json:"capability"`
			Args       json.RawMessage `json:"args"`
			Value      json.RawMessage `json:"value"`
			// Calls lists every outstanding call in batch mode
			// (host_calls "batch"); parseCalls reads it.
			Calls json.RawMessage `json:"calls"`
		} `json:"step"`
		SnapshotID string `json:"snapshot_id"`
		// SnapshotBaseID names the snapshot a delta extends; without
		// it, the bytes are the whole snapshot.
		SnapshotBaseID string `json:"snapshot_base_id"`
		PolicyID       string `json:"policy_id"`
	} `json:"result"`
}

// parseResponse reads what the driver uses from a response. It walks the
// text with jsonscan, as a lean host would: encoding/json's reflection
// was the largest part of the host's own time per call. Args and Value
// alias hdr. A failed response, or one with an escaped string where the
// driver reads a string, goes through encoding/json instead.
func parseResponse(hdr []byte) (*stepResponse, error) {
	var r stepResponse
	if !leanResponse(hdr, &r) {
		r = stepResponse{}
		if err := json.Unmarshal(hdr, &r); err != nil {
			return nil, fmt.Errorf("bad response %.200q: %v", hdr, err)
		}
	}
	if !r.OK {
		return &r, fmt.Errorf("request failed: %s", r.Error)
	}
	return &r, nil
}

// leanResponse fills r from a successful response and reports whether it
// could; hdr is the sidecar's own output, so it is valid JSON.
func leanResponse(hdr []byte, r *stepResponse) bool {
	plain := true
	str := func(dst *string, raw []byte) {
		var ok bool
		if *dst, ok = jsonscan.PlainString(raw); !ok {
			plain = false
		}
	}
	res := &r.Result
	step := func(k, v []byte) bool {
		switch string(k) {
		case `"` + wire.FieldType + `"`:
			str(&res.Step.Type, v)
		case `"` + wire.FieldCapability + `"`:
			str(&res.Step.Capability, v)
		case `"` + wire.FieldArgs + `"`:
			res.Step.Args = v
		case `"` + wire.FieldCalls + `"`:
			res.Step.Calls = v
		case `"` + wire.FieldValue + `"`:
			res.Step.Value = v
		}
		return plain
	}
	result := func(k, v []byte) bool {
		switch string(k) {
		case `"` + wire.FieldKind + `"`:
			str(&res.Kind, v)
		case `"` + wire.FieldProgramID + `"`:
			str(&res.ProgramID, v)
		case `"` + wire.FieldSnapshotID + `"`:
			str(&res.SnapshotID, v)
		case `"` + wire.FieldPolicyID + `"`:
			str(&res.PolicyID, v)
		case `"` + wire.FieldSnapshotBaseID + `"`:
			str(&res.SnapshotBaseID, v)
		case `"` + wire.FieldStep + `"`:
			plain = jsonscan.Members(v, step) && plain
		}
		return plain
	}
	object := jsonscan.Members(hdr, func(k, v []byte) bool {
		switch string(k) {
		case `"` + wire.FieldOK + `"`:
			r.OK = string(v) == "true"
		case `"` + wire.FieldResult + `"`:
			plain = jsonscan.Members(v, result) && plain
		}
		return plain
	})
	return object && plain && r.OK
}

var snapshotIDKey = []byte(`"` + wire.FieldSnapshotID + `":"`)

// snapshotIDOf finds result.snapshot_id without decoding the response.
func snapshotIDOf(hdr []byte) (string, bool) {
	at := bytes.LastIndex(hdr, snapshotIDKey)
	if at < 0 || len(hdr) < at+len(snapshotIDKey)+64 {
		return "", false
	}
	at += len(snapshotIDKey)
	return string(hdr[at : at+64]), true
}

func compileRequest(id uint64, source string) []byte {
	b, _ := json.Marshal(map[string]any{wire.FieldProtocolVersion: wire.ProtocolVersion, wire.FieldID: id, wire.FieldMethod: wire.MethodCompile, wire.FieldSource: source})
	return b
}

// compileRequestIn compiles source written in language.
func compileRequestIn(id uint64, source, language string) []byte {
	b, _ := json.Marshal(map[string]any{wire.FieldProtocolVersion: wire.ProtocolVersion, wire.FieldID: id, wire.FieldMethod: wire.MethodCompile, wire.FieldSource: source, wire.FieldLanguage: language})
	return b
}

// startRequest starts a cached program; inputs is a JSON object of
// StructuredValues, capsJSON a JSON array of names.
func startRequest(id uint64, programID string, inputs, capsJSON []byte) []byte {
	return startRequestMode(id, programID, inputs, capsJSON, false)
}

// startRequestMode is startRequest with host_calls "batch" when batch is
// set.
func startRequestMode(id uint64, programID string, inputs, capsJSON []byte, batch bool) []byte {
	b := []byte(requestPrefix)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"`+wire.FieldMethod+`":"`+wire.MethodStart+`","`+wire.FieldProgramID+`":"`...)
	b = append(b, programID...)
	b = append(b, `","`+wire.FieldOptions+`":{"`+wire.FieldInputs+`":`...)
	b = append(b, inputs...)
	b = append(b, `,"`+wire.FieldCapabilities+`":`...)
	b = append(b, capsJSON...)
	if batch {
		return append(b, `,"`+wire.FieldLimits+`":{},"`+wire.FieldHostCalls+`":"`+wire.HostCallsBatch+`"}}`...)
	}
	return append(b, `,"`+wire.FieldLimits+`":{}}}`...)
}

// tokenSigner appends snapshot tokens under one key, keeping the keyed
// HMAC as a host does rather than deriving it again for every resume.
type tokenSigner struct {
	mu  sync.Mutex
	mac hash.Hash
	sum [sha256.Size]byte
}

var benchTokens = &tokenSigner{mac: hmac.New(sha256.New, benchKey)}

func (t *tokenSigner) append(dst []byte, snapshotID string) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mac.Reset()
	t.mac.Write([]byte(snapshotID))
	return hex.AppendEncode(dst, t.mac.Sum(t.sum[:0]))
}

// resumeRequest resumes a cached snapshot under a cached policy, signing
// the snapshot id as the host must.
func resumeRequest(dst []byte, id uint64, snapshotID, policyID string, payload []byte) []byte {
	b := append(resumeHead(dst, id, snapshotID, policyID), `"`+wire.FieldPayload+`":`...)
	b = append(b, payload...)
	return append(b, '}')
}

// resumeHead is a cached resume request up to its answer: everything but
// the payload (one mode) or the answers (batch mode), ending with a comma.
func resumeHead(dst []byte, id uint64, snapshotID, policyID string) []byte {
	b := append(dst, requestPrefix...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"`+wire.FieldMethod+`":"`+wire.MethodResume+`","`+wire.FieldSnapshotID+`":"`...)
	b = append(b, snapshotID...)
	b = append(b, `","`+wire.FieldPolicyID+`":"`...)
	b = append(b, policyID...)
	b = append(b, `","`+wire.FieldAuth+`":{"`+wire.FieldSnapshotKeyBase64+`":"`...)
	b = append(b, benchKeyB64...)
	b = append(b, `","`+wire.FieldSnapshotKeyDigest+`":"`...)
	b = append(b, benchKeyDigest...)
	b = append(b, `","`+wire.FieldSnapshotToken+`":"`...)
	b = benchTokens.append(b, snapshotID)
	return append(b, `"},`...)
}

// rawResumeRequest resumes snapshot bytes (sent as the binary payload)
// under a full policy, as after a restart.
func rawResumeRequest(id uint64, snapshotID string, caps []string, payload []byte) []byte {
	b, _ := json.Marshal(map[string]any{
		wire.FieldProtocolVersion: wire.ProtocolVersion, wire.FieldID: id, wire.FieldMethod: wire.MethodResume,
		wire.FieldPolicy:  hosttest.Policy(benchKey, snapshotID, caps, map[string]any{}),
		wire.FieldPayload: json.RawMessage(payload),
	})
	return b
}

func mustJSONText(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
