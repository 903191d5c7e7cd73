package main

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// The headline exchange, checked byte for byte: compile, start suspends on
// fetch_data(5), a cached resume with 5 completes with exactly 6.0.
func TestE2EFetchDataExactBytes(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)

			resp := h.mustOK(h.do(h.req("compile", "source", fetchProgram), nil, ""))
			program := resp.Payload
			programID := sha256Hex(program)
			wantCompile := `{"protocol_version":2,"id":1,"ok":true,"result":{"kind":"program","program_id":"` + programID + `"`
			if tr.jsonl {
				wantCompile += `,"program_base64":"` + base64.StdEncoding.EncodeToString(program) + `"`
			}
			assert.Equal(t, wantCompile+"}}", string(resp.Raw))

			resp = h.mustOK(h.start(programID, []string{"fetch_data"}, nil))
			snap := resp.Payload
			snapID, policyID := resp.SnapshotID(), resp.PolicyID()
			require.Equal(t, sha256Hex(snap), snapID)
			require.Len(t, policyID, 64)
			wantStep := `{"type":"suspended","capability":"fetch_data","args":[{"Number":{"Finite":5.0}}]`
			if tr.jsonl {
				wantStep += `,"snapshot_base64":"` + base64.StdEncoding.EncodeToString(snap) + `"`
			}
			assert.Equal(t, `{"protocol_version":2,"id":2,"ok":true,"result":{"kind":"step","step":`+wantStep+
				`},"snapshot_id":"`+snapID+`","policy_id":"`+policyID+`"}}`, string(resp.Raw))

			resp = h.mustOK(h.resumeCached(snapID, policyID, valuePayload(num(5))))
			assert.Equal(t, `{"protocol_version":2,"id":3,"ok":true,"result":{"kind":"step","step":{"type":"completed","value":{"Number":{"Finite":6.0}}}}}`, string(resp.Raw))
			assert.Empty(t, resp.Payload)

			// The same program sent as bytes (no id) is accepted and gives the
			// same suspension shape.
			resp = h.mustOK(h.do(h.req("start", "options", options([]string{"fetch_data"}, nil)), program, "program_base64"))
			assert.Equal(t, `[{"Number":{"Finite":5.0}}]`, hosttest.JSON(resp.Step()["args"]))
			assert.Equal(t, policyID, resp.PolicyID())
		})
	}
}

// The headline exchange with a cold resume: the process that suspended is
// killed and a brand-new one resumes from the raw bytes and full policy.
func TestE2EFetchDataColdResume(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			programID, _ := h.compile(fetchProgram)
			first := stepOf(t, h.start(programID, []string{"fetch_data"}, nil))
			h.sc.Kill()

			fresh := newHost(t, tr)
			resp := fresh.mustOK(fresh.resumeRaw(first.Snapshot, []string{"fetch_data"}, valuePayload(num(5))))
			assert.Equal(t, `{"protocol_version":2,"id":1,"ok":true,"result":{"kind":"step","step":{"type":"completed","value":{"Number":{"Finite":6.0}}}}}`, string(resp.Raw))
		})
	}
}

// Program bytes depend only on the source and the sidecar version, not on
// the process or the transport.
func TestE2EProgramBytesDeterministic(t *testing.T) {
	t.Parallel()
	var ids []string
	var bytes [][]byte
	for _, tr := range append(transports, transports...) {
		h := newHost(t, tr)
		id, b := h.compile(fetchProgram)
		ids, bytes = append(ids, id), append(bytes, b)
		h.sc.Kill()
	}
	for i := range ids {
		assert.Equal(t, ids[0], ids[i])
		assert.Equal(t, bytes[0], bytes[i])
	}
}

// Equal policies give equal ids: capability order and duplicates, and
// defaulted versus explicit default limits, do not matter.
func TestE2EPolicyIDCanonical(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			programID, _ := h.compile(`a(); 1;`)
			policyID := func(caps []string, limits any) string {
				opts := map[string]any{"capabilities": caps}
				if limits != nil {
					opts["limits"] = limits
				}
				return h.mustOK(h.do(h.req("start", "program_id", programID, "options", opts), nil, "")).PolicyID()
			}
			base := policyID([]string{"a", "b"}, map[string]any{})
			assert.Equal(t, base, policyID([]string{"b", "a", "a"}, nil))
			assert.Equal(t, base, policyID([]string{"b", "a"}, map[string]any{
				"instruction_budget": 1000000, "heap_limit_bytes": 8 << 20, "allocation_budget": 250000,
				"call_depth_limit": 256, "max_outstanding_host_calls": 128,
			}))
			assert.Equal(t, base, policyID([]string{"a", "b"}, map[string]any{"instruction_budget": nil}))
			assert.NotEqual(t, base, policyID([]string{"a", "b", "c"}, map[string]any{}))
			assert.NotEqual(t, base, policyID([]string{"a", "b"}, map[string]any{"instruction_budget": 999}))
		})
	}
}

// profile:true adds execution_ns and response_prepare_ns (u64) to a
// successful start or resume, and nothing else carries a profile.
func TestE2EProfile(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			programID, _ := h.compile(`const a = fetch_data(1); a + fetch_data(2);`)
			requireProfile := func(resp hosttest.Response) {
				t.Helper()
				h.mustOK(resp)
				p := resp.Profile()
				require.NotNil(t, p, "no profile in %s", resp.Raw)
				requireU64(t, p["execution_ns"], "execution_ns")
				requireU64(t, p["response_prepare_ns"], "response_prepare_ns")
			}
			requireNoProfile := func(resp hosttest.Response) {
				t.Helper()
				require.NotContains(t, resp.Header, "profile", "unexpected profile in %s", resp.Raw)
			}
			caps := options([]string{"fetch_data"}, nil)

			suspended := h.do(h.req("start", "program_id", programID, "options", caps, "profile", true), nil, "")
			requireProfile(suspended)
			auth := hosttest.Auth(hostKey, suspended.SnapshotID())
			resumed := h.do(h.req("resume", "snapshot_id", suspended.SnapshotID(), "policy_id", suspended.PolicyID(),
				"auth", auth, "payload", valuePayload(num(1)), "profile", true), nil, "")
			requireProfile(resumed)
			raw := h.do(h.req("resume", "policy", hosttest.Policy(hostKey, resumed.SnapshotID(), []string{"fetch_data"}, nil),
				"payload", valuePayload(num(2)), "profile", true), resumed.Payload, "snapshot_base64")
			requireProfile(raw)
			assert.Equal(t, "completed", raw.Step()["type"])

			// The documented instruction count is cumulative and the same on a
			// replay as on the hot run.
			fresh := newHost(t, tr)
			replayed := fresh.do(fresh.req("resume", "policy", hosttest.Policy(hostKey, suspended.SnapshotID(), []string{"fetch_data"}, nil),
				"payload", valuePayload(num(1)), "profile", true), suspended.Payload, "snapshot_base64")
			requireProfile(replayed)
			requireU64(t, resumed.Profile()["instructions"], "instructions")
			assert.Equal(t, resumed.Profile()["instructions"], replayed.Profile()["instructions"])
			assert.Equal(t, resumed.SnapshotID(), replayed.SnapshotID())

			requireNoProfile(h.mustOK(h.do(h.req("start", "program_id", programID, "options", caps), nil, "")))
			requireNoProfile(h.mustOK(h.do(h.req("start", "program_id", programID, "options", caps, "profile", false), nil, "")))
			requireNoProfile(h.mustOK(h.do(h.req("compile", "source", "1;", "profile", true), nil, "")))
			failed := h.do(h.req("start", "program_id", strings.Repeat("0", 64), "options", caps, "profile", true), nil, "")
			require.False(t, failed.OK())
			requireNoProfile(failed)
			failed = h.do(h.req("resume", "snapshot_id", suspended.SnapshotID(), "policy_id", suspended.PolicyID(),
				"payload", valuePayload(num(1)), "profile", true), nil, "")
			require.False(t, failed.OK())
			requireNoProfile(failed)
		})
	}
}

// ids are echoed verbatim over the whole u64 range and need not be unique;
// requests sharing an id are not coupled.
func TestE2EIDsEchoedAndUncoupled(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			send := func(id string, rest string) hosttest.Response {
				t.Helper()
				line := `{"protocol_version":2,"id":` + id + `,` + rest + `}`
				if tr.jsonl {
					require.NoError(t, h.sc.WriteBytes([]byte(line+"\n")))
				} else {
					require.NoError(t, h.sc.SendRaw([]byte(line), nil))
				}
				resp, err := h.sc.Recv()
				require.NoError(t, err)
				require.True(t, strings.HasPrefix(string(resp.Raw), `{"protocol_version":2,"id":`+id+`,`), "%s", resp.Raw)
				return resp
			}
			for _, id := range []string{"0", "18446744073709551615", "9007199254740993"} {
				send(id, `"method":"compile","source":"1;"`)
			}
			resp := send("7", `"method":"compile","source":"fetch_data(1);"`)
			programID := resp.Result()["program_id"].(string)
			a := send("7", `"method":"start","program_id":"`+programID+`","options":{"capabilities":["fetch_data"]}`)
			require.True(t, a.OK())
			require.False(t, send("7", `"method":"nope"`).OK())
			b := send("7", `"method":"start","program_id":"`+programID+`","options":{"capabilities":["fetch_data"]}`)
			require.True(t, b.OK())
			// Both suspensions stay independently resumable.
			for _, r := range []hosttest.Response{b, a} {
				done := h.mustOK(h.resumeCached(r.SnapshotID(), r.PolicyID(), valuePayload(str("x"))))
				assert.Equal(t, `{"String":"x"}`, hosttest.JSON(done.Step()["value"]))
			}
		})
	}
}

// JSONL ignores blank and whitespace-only lines and strips one trailing CR.
func TestE2EJSONLBlankLinesAndCRLF(t *testing.T) {
	t.Parallel()
	h := newHost(t, transports[1])
	in := "\n  \n\t\r\n" +
		`{"protocol_version":2,"id":1,"method":"compile","source":"1;"}` + "\r\n" +
		"\r\n \n" +
		`{"protocol_version":2,"id":2,"method":"compile","source":"2;"}` + "\n\n"
	require.NoError(t, h.sc.WriteBytes([]byte(in)))
	require.NoError(t, h.sc.CloseStdin())
	for id := uint64(1); id <= 2; id++ {
		resp, err := h.sc.Recv()
		require.NoError(t, err)
		got, _ := resp.ID()
		require.Equal(t, id, got)
		require.True(t, resp.OK(), "%s", resp.Raw)
	}
	code, stderr, exited := h.sc.WaitExit(exitTimeout)
	require.True(t, exited)
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, h.sc.Leftover(), "one response per non-blank line")
}

func TestE2ECommandLine(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--help", "-h"} {
		stdout, stderr, code, err := hosttest.Run(arg)
		require.NoError(t, err)
		assert.Equal(t, 0, code)
		assert.True(t, strings.HasPrefix(stdout, "usage: mustard-sidecar"), "usage on stdout: %q", stdout)
		assert.Contains(t, stdout, "--jsonl")
		assert.Empty(t, stderr)
	}
	for _, arg := range []string{"--bogus", "jsonl", "-jsonl", "--json"} {
		stdout, stderr, code, err := hosttest.Run(arg)
		require.NoError(t, err)
		assert.Equal(t, 2, code, arg)
		assert.Empty(t, stdout, "stdout carries protocol traffic only")
		assert.Contains(t, stderr, "usage: mustard-sidecar")
		assert.Contains(t, stderr, fmt.Sprintf("%q", arg))
	}
	for _, args := range [][]string{
		{"--max-stage-bytes"}, {"--max-stage-bytes", "0"}, {"--max-stage-bytes=-1"}, {"--max-stage-bytes", "1e6"},
		{"--max-stage-bytes="}, {"--max-stage-bytes", "18446744073709551616"}, {"--jsonl", "--max-stage-bytes", "many"},
	} {
		stdout, stderr, code, err := hosttest.Run(args...)
		require.NoError(t, err)
		assert.Equal(t, 2, code, "%q", args)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "--max-stage-bytes")
		assert.Contains(t, stderr, "usage: mustard-sidecar")
	}
	for _, args := range [][]string{
		{"--memory-budget"}, {"--memory-budget", "0"}, {"--memory-budget=-5"}, {"--memory-budget", "128MiB"},
		{"--memory-budget", "1e9"}, {"--memory-budget", "9223372036854775807"},
		{"--memory-budget", "1048576", "--max-stage-bytes", "524289"},
	} {
		stdout, stderr, code, err := hosttest.Run(args...)
		require.NoError(t, err)
		assert.Equal(t, 2, code, "%q", args)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "--memory-budget")
		assert.Contains(t, stderr, "usage: mustard-sidecar")
	}
	for _, args := range [][]string{
		{"--max-stage-bytes", "1048576"}, {"--max-stage-bytes=5", "--jsonl"}, {"--max-stage-bytes", "268435456"},
		{"--memory-budget", "268435456"}, {"--memory-budget=33554432", "--max-stage-bytes=16777216"},
	} {
		_, stderr, code, err := hosttest.Run(args...)
		require.NoError(t, err)
		assert.Equal(t, 0, code, "%q: %s", args, stderr)
	}
}

// Object key order is the sender's both ways: inputs and resume values keep
// the host's order (not sorted), results keep guest insertion order, on hot
// and replayed runs alike.
func TestE2EObjectKeyOrder(t *testing.T) {
	t.Parallel()
	const src = `const v = cap(Object.keys(inp)); const out = { zeta: 1, alpha: 2 }; out.mid = [Object.keys(v), v]; out;`
	const answer = `{"type":"value","value":{"Object":{"zz":"Null","aa":{"Object":{"y":{"Null":null},"b":{"Array":["Hole",{"Bool":true}]}}}}}}`
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			rawCall := func(h *host, header string, raw []byte, field string) hosttest.Response {
				t.Helper()
				require.NoError(t, h.sc.WriteBytes(message(tr, header, raw, field)))
				resp, err := h.sc.Recv()
				require.NoError(t, err)
				return resp
			}
			programID, _ := h.compile(src)
			s := stepOf(t, rawCall(h, `{"protocol_version":2,"id":9,"method":"start","program_id":"`+programID+
				`","options":{"capabilities":["cap"],"inputs":{"inp":{"Object":{"z":"Null","a":"Null","m":{"Undefined":null}}}}}}`, nil, ""))
			require.Equal(t, `[{"Array":[{"String":"z"},{"String":"a"},{"String":"m"}]}]`, s.Args)

			want := `{"Object":{"zeta":{"Number":{"Finite":1.0}},"alpha":{"Number":{"Finite":2.0}},"mid":{"Array":[` +
				`{"Array":[{"String":"zz"},{"String":"aa"}]},{"Object":{"zz":"Null","aa":{"Object":{"y":"Null","b":{"Array":["Hole",{"Bool":true}]}}}}}]}}}`
			auth := hosttest.JSON(hosttest.Auth(hostKey, s.SnapshotID))
			hot := rawCall(h, `{"protocol_version":2,"id":10,"method":"resume","snapshot_id":"`+s.SnapshotID+`","policy_id":"`+s.PolicyID+
				`","auth":`+auth+`,"payload":`+answer+`}`, nil, "")
			fresh := newHost(t, tr)
			pol := hosttest.JSON(hosttest.Policy(hostKey, s.SnapshotID, []string{"cap"}, nil))
			cold := rawCall(fresh, `{"protocol_version":2,"id":11,"method":"resume","policy":`+pol+`,"payload":`+answer+`}`, s.Snapshot, "snapshot_base64")
			for _, resp := range []hosttest.Response{hot, cold} {
				require.Equal(t, want, stepOf(t, resp).Value)
			}
		})
	}
}
