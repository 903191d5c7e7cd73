package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// The end-to-end tests drive the real sidecar over its stdin/stdout pipes:
// the test binary re-executes itself as the sidecar (hosttest.RunAsSidecar).

func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	os.Exit(hosttest.RunTests(m))
}

type transport struct {
	name  string
	jsonl bool
}

var transports = []transport{{"binary", false}, {"jsonl", true}}

func (tr transport) args() []string {
	if tr.jsonl {
		return []string{"--jsonl"}
	}
	return nil
}

// exitTimeout bounds how long a process that must exit on its own may take;
// reaching it means the sidecar hung waiting for input.
const exitTimeout = 20 * time.Second

// hostKey is the host's snapshot key in every test.
var hostKey = []byte("0123456789abcdef0123456789abcdef")

const fetchProgram = `const value = fetch_data(5); value + 1;`

// host is one sidecar process plus the id counter of its requests.
type host struct {
	t      *testing.T
	tr     transport
	sc     *hosttest.Sidecar
	nextID uint64
}

func newHost(t *testing.T, tr transport) *host {
	t.Helper()
	sc, err := hosttest.Start(tr.args()...)
	require.NoError(t, err)
	t.Cleanup(sc.Kill)
	return &host{t: t, tr: tr, sc: sc}
}

// req returns a version-2 request with a fresh id and the given fields.
func (h *host) req(method string, kv ...any) map[string]any {
	h.nextID++
	m := map[string]any{"protocol_version": 2, "id": h.nextID, "method": method}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// do sends a request and reads its response, checking the echoed id and
// the response protocol version.
func (h *host) do(hdr map[string]any, raw []byte, field string) hosttest.Response {
	h.t.Helper()
	resp, err := h.sc.Call(hdr, raw, field)
	require.NoError(h.t, err)
	if want, ok := hdr["id"].(uint64); ok {
		got, ok := resp.ID()
		require.True(h.t, ok, "id in %s", resp.Raw)
		require.Equal(h.t, want, got)
	}
	require.Equal(h.t, "2", resp.Version(), "protocol_version in %s", resp.Raw)
	return resp
}

func (h *host) mustOK(resp hosttest.Response) hosttest.Response {
	h.t.Helper()
	require.True(h.t, resp.OK(), "request failed: %s", resp.Raw)
	return resp
}

// compile returns the program id and bytes of src.
func (h *host) compile(src string) (string, []byte) {
	h.t.Helper()
	resp := h.mustOK(h.do(h.req("compile", "source", src), nil, ""))
	id, _ := resp.Result()["program_id"].(string)
	require.Equal(h.t, sha256Hex(resp.Payload), id)
	return id, resp.Payload
}

func options(caps []string, inputs map[string]any) map[string]any {
	if caps == nil {
		caps = []string{}
	}
	if inputs == nil {
		inputs = map[string]any{}
	}
	return map[string]any{"inputs": inputs, "capabilities": caps, "limits": map[string]any{}}
}

// start runs a cached program.
func (h *host) start(programID string, caps []string, inputs map[string]any) hosttest.Response {
	h.t.Helper()
	return h.do(h.req("start", "program_id", programID, "options", options(caps, inputs)), nil, "")
}

// resumeCached resumes by snapshot and policy id.
func (h *host) resumeCached(snapID, policyID string, payload map[string]any) hosttest.Response {
	h.t.Helper()
	return h.do(h.req("resume", "snapshot_id", snapID, "policy_id", policyID,
		"auth", hosttest.Auth(hostKey, snapID), "payload", payload), nil, "")
}

// resumeRaw resumes from snapshot bytes with a full policy.
func (h *host) resumeRaw(snap []byte, caps []string, payload map[string]any) hosttest.Response {
	h.t.Helper()
	pol := hosttest.Policy(hostKey, sha256Hex(snap), caps, map[string]any{})
	return h.do(h.req("resume", "policy", pol, "payload", payload), snap, "snapshot_base64")
}

// ping proves the session still serves requests.
func (h *host) ping() {
	h.t.Helper()
	resp := h.mustOK(h.do(h.req("compile", "source", "1 + 1;"), nil, ""))
	require.Equal(h.t, "program", resp.Result()["kind"])
}

func num(f float64) map[string]any { return map[string]any{"Number": map[string]any{"Finite": f}} }

func str(s string) map[string]any { return map[string]any{"String": s} }

func valuePayload(v any) map[string]any { return map[string]any{"type": "value", "value": v} }

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func hmacHex(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// step is what a host sees of one start/resume result.
type step struct {
	Type       string
	Capability string
	Args       string // JSON text
	Value      string // JSON text, when completed
	SnapshotID string
	PolicyID   string
	Snapshot   []byte
}

// exactStep returns a step's args and value as sent, byte for byte:
// decoding into maps would lose object key order and number spelling.
func exactStep(t *testing.T, resp hosttest.Response) (args, value string) {
	t.Helper()
	var exact struct {
		Result struct {
			Step struct {
				Args  json.RawMessage `json:"args"`
				Value json.RawMessage `json:"value"`
			} `json:"step"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(resp.Raw, &exact))
	return string(exact.Result.Step.Args), string(exact.Result.Step.Value)
}

func stepOf(t *testing.T, resp hosttest.Response) step {
	t.Helper()
	require.True(t, resp.OK(), "step failed: %s", resp.Raw)
	st := resp.Step()
	s := step{Type: fmt.Sprint(st["type"])}
	args, value := exactStep(t, resp)
	switch s.Type {
	case "completed":
		s.Value = value
		require.Empty(t, resp.Payload, "a completed step carries no snapshot")
		require.NotContains(t, resp.Result(), "snapshot_id")
		require.NotContains(t, resp.Result(), "policy_id")
	case "suspended":
		s.Capability = fmt.Sprint(st["capability"])
		s.Args = args
		s.SnapshotID, s.PolicyID, s.Snapshot = resp.SnapshotID(), resp.PolicyID(), resp.Payload
		require.NotEmpty(t, s.Snapshot)
		require.Equal(t, sha256Hex(s.Snapshot), s.SnapshotID, "snapshot_id is the SHA-256 of the bytes")
	default:
		t.Fatalf("unexpected step %s", resp.Raw)
	}
	return s
}

// argNumber reads args[i] as a finite number.
func argNumber(t *testing.T, args []any, i int) float64 {
	t.Helper()
	m, _ := args[i].(map[string]any)["Number"].(map[string]any)
	n, ok := m["Finite"].(json.Number)
	require.True(t, ok, "argument %d is not a finite number: %v", i, args[i])
	f, err := n.Float64()
	require.NoError(t, err)
	return f
}

// decodeJSON decodes text keeping numbers as json.Number.
func decodeJSON(text string, into any) error {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	return d.Decode(into)
}

// requireU64 asserts a JSON number is an unsigned 64-bit integer.
func requireU64(t *testing.T, v any, what string) {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "%s is not a number: %v", what, v)
	_, err := strconv.ParseUint(string(n), 10, 64)
	require.NoError(t, err, "%s is not a u64: %s", what, n)
}

// requireCleanError asserts an error text leaks no Go internals.
func requireCleanError(t *testing.T, msg string) {
	t.Helper()
	for _, bad := range []string{".go:", "goroutine ", "panic", "runtime.", "*engine.", "*protocol.", "github.com/"} {
		require.NotContains(t, msg, bad)
	}
	require.False(t, strings.HasPrefix(msg, "/"), "error starts with a path: %s", msg)
}
