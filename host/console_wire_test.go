package host

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// readFrameBytes reads one binary request frame: its header and payload.
func readFrameBytes(in *bufio.Reader) func() ([]byte, []byte, bool) {
	return func() ([]byte, []byte, bool) {
		var p [8]byte
		if _, err := io.ReadFull(in, p[:]); err != nil {
			return nil, nil, false
		}
		b := make([]byte, int(binary.LittleEndian.Uint32(p[:4]))+int(binary.LittleEndian.Uint32(p[4:])))
		if _, err := io.ReadFull(in, b); err != nil {
			return nil, nil, false
		}
		hl := binary.LittleEndian.Uint32(p[:4])
		return b[:hl], b[hl:], true
	}
}

// echoSidecar answers each request with what the host sent: a compile
// with program bytes naming the language, a start with a completed step
// whose value is the options it was sent and a log line, a resume with a
// failure whose log line is the policy it was sent.
func echoSidecar(read func() ([]byte, []byte, bool), frame func(hl, pl uint32, body string)) int {
	for {
		hdr, _, ok := read()
		if !ok {
			return 0
		}
		var req struct {
			ID       uint64          `json:"id"`
			Method   string          `json:"method"`
			Language *string         `json:"language"`
			Options  json.RawMessage `json:"options"`
			Policy   json.RawMessage `json:"policy"`
		}
		if json.Unmarshal(hdr, &req) != nil {
			return 2
		}
		resp := map[string]any{"protocol_version": 2, "id": req.ID, "ok": true}
		var payload []byte
		switch req.Method {
		case "compile":
			payload = []byte("language=")
			if req.Language != nil {
				payload = append(payload, *req.Language...)
			}
			sum := sha256.Sum256(payload)
			resp["result"] = map[string]any{"kind": "program", "program_id": hex.EncodeToString(sum[:])}
		case "start":
			resp["result"] = map[string]any{"kind": "step", "step": map[string]any{"type": "completed",
				"value": map[string]any{"String": string(req.Options)},
				"logs":  []any{map[string]any{"level": "info", "text": "started"}}}}
		default:
			resp = map[string]any{"protocol_version": 2, "id": req.ID, "ok": false, "error": "Runtime: Error: boom",
				"error_code": "runtime", "logs": []any{map[string]any{"level": "error", "text": string(req.Policy)}}}
		}
		h, _ := json.Marshal(resp)
		frame(uint32(len(h)), uint32(len(payload)), string(h)+string(payload))
	}
}

// The console, entry and language options travel as the contract names
// them, and only when set; logs come back on steps and on failures.
func TestConsoleEntryAndLanguageOnTheWire(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, Config{Cmd: fakeCmd(t, "echo")})

	js, err := c.Compile(ctx, "1")
	require.NoError(t, err)
	require.Equal(t, "language=", string(js.Bytes))
	js, err = c.CompileWith(ctx, "1", CompileOptions{Language: JavaScript})
	require.NoError(t, err)
	require.Equal(t, "language=", string(js.Bytes), "javascript is the default, not sent")
	ts, err := c.CompileWith(ctx, "1", CompileOptions{Language: TypeScript})
	require.NoError(t, err)
	require.Equal(t, "language=typescript", string(ts.Bytes))

	options := func(req StartRequest) map[string]any {
		t.Helper()
		req.Program = js
		st, err := c.Start(ctx, req)
		require.NoError(t, err)
		require.Equal(t, []LogLine{{Level: "info", Text: "started"}}, st.Logs)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(st.Value.Str), &m))
		return m
	}
	plain := options(StartRequest{Console: ConsoleOff, Entry: EntryScript})
	require.NotContains(t, plain, "console")
	require.NotContains(t, plain, "entry")
	require.NotContains(t, plain["limits"], "max_log_bytes")

	set := options(StartRequest{Console: ConsoleCollect, Entry: EntryCall, Capabilities: []string{"github.create_issue", "console.log"},
		Limits: Limits{MaxLogBytes: Limit(100)}})
	require.Equal(t, "collect", set["console"])
	require.Equal(t, "call", set["entry"])
	require.Equal(t, []any{"github.create_issue", "console.log"}, set["capabilities"])
	require.Equal(t, map[string]any{"max_log_bytes": 100.0}, set["limits"])

	_, err = c.Resume(ctx, ResumeRequest{Snapshot: []byte("snap"), Key: testKey, Payload: Return(value.Undefined()),
		Policy: &Policy{Capabilities: []string{"console.warn"}, Console: ConsoleCollect, Limits: Limits{MaxLogBytes: Limit(7)}}})
	var se *Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, "runtime", se.Code)
	require.Len(t, se.Logs, 1)
	require.Equal(t, "error", se.Logs[0].Level)
	var policy map[string]any
	require.NoError(t, json.Unmarshal([]byte(se.Logs[0].Text), &policy))
	require.Equal(t, "collect", policy["console"])
	require.Equal(t, map[string]any{"max_log_bytes": 7.0}, policy["limits"])
	require.Equal(t, []any{"console.warn"}, policy["capabilities"])
}
