package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

const maxRequest = 1 << 20

var (
	fetchOnce    sync.Once
	fetchBytes   []byte
	fetchProgErr error
)

// fetchProgramBytes compiles fetchProgram once, in its own process: program
// bytes are deterministic, so later requests can carry them unannounced.
func fetchProgramBytes(t *testing.T) []byte {
	t.Helper()
	fetchOnce.Do(func() {
		sc, err := hosttest.Start()
		if err != nil {
			fetchProgErr = err
			return
		}
		defer sc.Kill()
		resp, err := sc.Call(map[string]any{"protocol_version": 2, "id": 1, "method": "compile", "source": fetchProgram}, nil, "")
		fetchBytes, fetchProgErr = resp.Payload, err
	})
	require.NoError(t, fetchProgErr)
	require.NotEmpty(t, fetchBytes)
	return fetchBytes
}

// frameBytes is one binary frame.
func frameBytes(hl, pl uint32, body ...[]byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, hl)
	b = binary.LittleEndian.AppendUint32(b, pl)
	for _, x := range body {
		b = append(b, x...)
	}
	return b
}

func frameOf(header string, payload []byte) []byte {
	return frameBytes(uint32(len(header)), uint32(len(payload)), []byte(header), payload)
}

// message encodes a request for the transport: a frame or a line.
func message(tr transport, header string, raw []byte, rawField string) []byte {
	if !tr.jsonl {
		return frameOf(header, raw)
	}
	if len(raw) > 0 {
		header = strings.TrimSuffix(header, "}") + `,"` + rawField + `":"` + base64.StdEncoding.EncodeToString(raw) + `"}`
	}
	return []byte(header + "\n")
}

// prelude writes requests 1 (a start that suspends, leaving a parked
// execution) and 2 (a per-request failure); checkPrelude reads their
// responses.
func prelude(t *testing.T, h *host) {
	t.Helper()
	program := fetchProgramBytes(t)
	start := `{"protocol_version":2,"id":1,"method":"start","options":{"capabilities":["fetch_data"]}}`
	require.NoError(t, h.sc.WriteBytes(message(h.tr, start, program, "program_base64")))
	require.NoError(t, h.sc.WriteBytes(message(h.tr, `{"protocol_version":2,"id":2,"method":"nope"}`, nil, "")))
}

func checkPrelude(t *testing.T, h *host) {
	t.Helper()
	resp, err := h.sc.Recv()
	require.NoError(t, err, "the response to request 1 was written")
	require.Equal(t, "suspended", resp.Step()["type"], "%s", resp.Raw)
	resp, err = h.sc.Recv()
	require.NoError(t, err, "the response to request 2 was written")
	id, _ := resp.ID()
	require.Equal(t, uint64(2), id)
	require.Equal(t, `unknown method "nope"`, resp.Error())
}

// badHeaders cannot be correlated with a response: each ends the session.
var badHeaders = []struct{ name, header string }{
	{"empty", ""},
	{"not JSON", "hello"},
	{"truncated JSON", `{"protocol_version":2,"id":3,"method":"compile"`},
	{"invalid UTF-8", "{\"protocol_version\":2,\"id\":3,\"method\":\"compile\",\"source\":\"\xff\"}"},
	{"JSON array", `[{"protocol_version":2,"id":3,"method":"compile"}]`},
	{"JSON string", `"compile"`},
	{"JSON null", `null`},
	{"JSON number", `3`},
	{"two JSON values", `{"protocol_version":2,"id":3,"method":"compile"} {}`},
	{"without id", `{"protocol_version":2,"method":"compile","source":"1;"}`},
	{"without method", `{"protocol_version":2,"id":3,"source":"1;"}`},
	{"id -1", `{"protocol_version":2,"id":-1,"method":"compile","source":"1;"}`},
	{"id 1.5", `{"protocol_version":2,"id":1.5,"method":"compile","source":"1;"}`},
	{"id string", `{"protocol_version":2,"id":"1","method":"compile","source":"1;"}`},
	{"id null", `{"protocol_version":2,"id":null,"method":"compile","source":"1;"}`},
	{"id 1e2", `{"protocol_version":2,"id":1e2,"method":"compile","source":"1;"}`},
	{"id 3.0", `{"protocol_version":2,"id":3.0,"method":"compile","source":"1;"}`},
	{"id above u64", `{"protocol_version":2,"id":18446744073709551616,"method":"compile","source":"1;"}`},
	{"method number", `{"protocol_version":2,"id":3,"method":5}`},
	{"method null", `{"protocol_version":2,"id":3,"method":null}`},
}

type fatalCase struct {
	name       string
	tr         transport
	bad        func() []byte
	closeStdin bool   // the case needs EOF (truncation)
	prefix     string // stderr must start with this
	contains   string // or contain this
}

func fatalCases() []fatalCase {
	bin, jsonl := transports[0], transports[1]
	big := func(n int) func() []byte {
		return func() []byte { return bytes.Repeat([]byte("x"), n) }
	}
	cases := []fatalCase{
		{name: "frame over limit, body never sent", tr: bin, bad: func() []byte { return frameBytes(64, maxRequest-63) }, contains: "request frame exceeds maximum size"},
		{name: "header over limit", tr: bin, bad: func() []byte { return frameBytes(maxRequest+1, 0) }, contains: "request frame exceeds maximum size"},
		{name: "payload over limit", tr: bin, bad: func() []byte { return frameBytes(2, maxRequest) }, contains: "request frame exceeds maximum size"},
		{name: "u32 max lengths", tr: bin, bad: func() []byte { return frameBytes(0xffffffff, 0xffffffff) }, contains: "request frame exceeds maximum size"},
		{name: "truncated prefix", tr: bin, bad: func() []byte { return []byte{1, 0, 0} }, closeStdin: true, prefix: "invalid request header"},
		{name: "truncated header", tr: bin, bad: func() []byte { return frameBytes(100, 0, []byte(`{"protocol_version":2`)) }, closeStdin: true, prefix: "invalid request header"},
		{name: "truncated payload", tr: bin, bad: func() []byte {
			return frameBytes(uint32(len(`{"protocol_version":2,"id":3,"method":"compile"}`)), 10, []byte(`{"protocol_version":2,"id":3,"method":"compile"}`), []byte("12345"))
		}, closeStdin: true, prefix: "invalid request header"},
		{name: "line over limit", tr: jsonl, bad: func() []byte { return append(big(maxRequest+1)(), '\n') }, contains: "request line exceeds maximum size"},
		{name: "line at limit plus CR", tr: jsonl, bad: func() []byte { return append(big(maxRequest)(), '\r', '\n') }, contains: "request line exceeds maximum size"},
		{name: "line far over limit, no newline", tr: jsonl, bad: big(4 * maxRequest), contains: "request line exceeds maximum size"},
		{name: "valid JSON line over limit", tr: jsonl, bad: func() []byte {
			return []byte(`{"protocol_version":2,"id":3,"method":"compile","source":"` + strings.Repeat("1", maxRequest) + `"}` + "\n")
		}, contains: "request line exceeds maximum size"},
	}
	for _, bh := range badHeaders {
		header := bh.header
		cases = append(cases, fatalCase{name: bh.name, tr: bin, bad: func() []byte { return frameOf(header, nil) }, prefix: "invalid request header"})
		if header != "" { // a blank line is skipped
			cases = append(cases, fatalCase{name: bh.name, tr: jsonl, bad: func() []byte { return []byte(header + "\n") }, prefix: "invalid request"})
		}
	}
	return cases
}

// A fatal request ends the process with a non-zero exit and its phrase on
// stderr, after answering every request read before it, and without
// waiting for more input.
func TestE2EFatal(t *testing.T) {
	t.Parallel()
	for _, tc := range fatalCases() {
		t.Run(tc.tr.name+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tc.tr)
			prelude(t, h)
			bad := tc.bad()
			if tc.closeStdin {
				require.NoError(t, h.sc.WriteBytes(bad))
				require.NoError(t, h.sc.CloseStdin())
			} else {
				// Large writes outlive the process, which must not read them to
				// the end, so they must not block the test.
				go func() { _ = h.sc.WriteBytes(bad) }()
			}
			checkPrelude(t, h)
			code, stderr, exited := h.sc.WaitExit(exitTimeout)
			require.True(t, exited, "the sidecar kept waiting for input; stderr: %s", stderr)
			assert.NotEqual(t, 0, code)
			if tc.prefix != "" {
				assert.True(t, strings.HasPrefix(stderr, tc.prefix), "stderr %q does not start with %q", stderr, tc.prefix)
			} else {
				assert.Contains(t, stderr, tc.contains)
			}
			requireCleanError(t, stderr)
			assert.Empty(t, h.sc.Leftover(), "nothing is written for the fatal request")
		})
	}
}

// The limit is inclusive: a request of exactly 1 MiB is read and answered,
// and the session goes on.
func TestE2ERequestOfExactlyMaxSize(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			var msg []byte
			want := "compile requests must not include a binary payload"
			if tr.jsonl {
				head := `{"protocol_version":2,"id":1,"method":"nope","pad":"`
				msg = []byte(head + strings.Repeat("x", maxRequest-len(head)-2) + `"}`)
				require.Len(t, msg, maxRequest)
				msg = append(msg, '\n')
				want = `unknown method "nope"`
			} else {
				header := `{"protocol_version":2,"id":1,"method":"compile","source":"1;"}`
				msg = frameOf(header, make([]byte, maxRequest-len(header)))
				require.Len(t, msg, 8+maxRequest)
			}
			go func() { _ = h.sc.WriteBytes(msg) }()
			resp, err := h.sc.Recv()
			require.NoError(t, err)
			require.Equal(t, want, resp.Error())
			h.nextID = 1
			h.ping()
		})
	}
}

// A JSONL line already over the limit fails even when the host then stops
// writing without a newline: the excess is in hand, no more input is
// needed to know the request is too large.
func TestE2EJSONLOverLimitWithoutNewlineFailsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHost(t, transports[1])
	line := bytes.Repeat([]byte("x"), maxRequest+1)
	go func() { _ = h.sc.WriteBytes(line) }()
	// Shorter than exitTimeout: the failure mode is waiting forever.
	code, stderr, exited := h.sc.WaitExit(exitTimeout / 4)
	require.True(t, exited, "the sidecar holds %d bytes of one line and waits for more input", maxRequest+1)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "request line exceeds maximum size")
}

// EOF is a clean shutdown: every request already written is answered, in
// order, even when the host reads nothing until it has closed stdin and
// executions are still parked; then the process exits 0.
func TestE2EEOFAnswersEverythingRead(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			program := fetchProgramBytes(t)
			programID := sha256Hex(program)
			type sent struct {
				header string
				raw    []byte
				field  string
				ok     bool
			}
			reqs := []sent{
				{`{"protocol_version":2,"id":1,"method":"compile","source":` + jsonString(fetchProgram) + `}`, nil, "", true},
				{`{"protocol_version":2,"id":2,"method":"start","options":{"capabilities":["fetch_data"]}}`, program, "program_base64", true},
				{`{"protocol_version":2,"id":3,"method":"start","program_id":"` + programID + `","options":{"capabilities":["fetch_data"]}}`, nil, "", true},
				{`{"protocol_version":2,"id":4,"method":"nope"}`, nil, "", false},
				{`{"protocol_version":1,"id":5,"method":"compile","source":"1;"}`, nil, "", false},
				{`{"protocol_version":2,"id":6,"method":"resume","snapshot_id":"` + zeros64 + `","payload":{"type":"cancelled"}}`, nil, "", false},
				{`{"protocol_version":2,"id":7,"method":"start","program_id":"` + programID + `","options":{"capabilities":[]}}`, nil, "", false},
			}
			for i := 8; i <= 40; i++ {
				reqs = append(reqs, sent{`{"protocol_version":2,"id":` + itoa(i) + `,"method":"compile","source":"` + itoa(i) + `;"}`, nil, "", true})
			}
			var all []byte
			for _, r := range reqs {
				all = append(all, message(tr, r.header, r.raw, r.field)...)
			}
			require.NoError(t, h.sc.WriteBytes(all))
			require.NoError(t, h.sc.CloseStdin())
			for i, r := range reqs {
				resp, err := h.sc.Recv()
				require.NoError(t, err, "response %d", i+1)
				id, _ := resp.ID()
				require.Equal(t, uint64(i+1), id)
				require.Equal(t, r.ok, resp.OK(), "%s", resp.Raw)
			}
			code, stderr, exited := h.sc.WaitExit(exitTimeout)
			require.True(t, exited)
			assert.Equal(t, 0, code)
			assert.Empty(t, stderr)
			assert.Empty(t, h.sc.Leftover())
		})
	}
}

// SIGTERM and SIGINT end the process promptly, parked executions or not.
func TestE2ESignals(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			h := newHost(t, transports[0])
			programID, _ := h.compile(fetchProgram)
			h.mustOK(h.start(programID, fetchCaps, nil))
			require.NoError(t, h.sc.Signal(sig))
			_, _, exited := h.sc.WaitExit(exitTimeout)
			require.True(t, exited)
		})
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func itoa(i int) string { return strconv.Itoa(i) }
