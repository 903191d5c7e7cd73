package main

import (
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Guests that log without end, or log huge values, end with their Limit
// error at default limits; what a failed run returns of its lines stays
// within max_log_bytes; the process keeps serving. Peak RSS stays under
// the documented bound.
func TestE2EHostileConsoleFloods(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"endless short lines", `for (;;) console.log("x")`, "Limit: instruction budget exhausted"},
		{"endless long lines", `const s = "y".repeat(100000); for (;;) console.log(s, s)`, "Limit: instruction budget exhausted"},
		{"a line past the heap limit", `const s = "z".repeat(3 << 20); console.log(s, s, s)`, "Limit: heap limit exceeded"},
		{"wide objects", `const o = {}; for (let i = 0; i < 20000; i++) o["k" + i] = i; for (;;) console.log(o)`, "Limit: instruction budget exhausted"},
		{"deep and wide arrays", `const a = []; for (let i = 0; i < 1000; i++) a.push([i, [i, [i, [i]]]]); for (;;) console.error(a, "%o", a)`, "Limit: instruction budget exhausted"},
		{"formats", `for (;;) console.warn("%s %d %i %f %j %o %O %c %%", "a", 1, 2, 3, {a: 1}, [1], {b: 2}, "css")`, "Limit: instruction budget exhausted"},
		{"async flood", `(async () => { for (;;) { console.info("tick"); await null; } })()`, "Limit: instruction budget exhausted"},
	}
	for i, c := range cases {
		if !longtest.Sampled(i) {
			continue // every fourth in the default run: each runs to a default limit
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, transports[0])
			id := h.limCompile(c.src)
			opts := options(nil, nil)
			opts["console"] = "collect"
			if l := workLimits(c.want); l != nil {
				opts["limits"] = l
			}
			began := time.Now()
			resp := h.do(h.req("start", "program_id", id, "options", opts), nil, "")
			d := time.Since(began)
			hwm := vmHWM(t, h.sc.Pid())
			t.Logf("%s in %v, VmHWM %.1f MiB", resp.Error(), d.Round(time.Millisecond), float64(hwm)/(1<<20))
			limFails(t, resp, c.want)
			var kept int
			logs, _ := resp.Header["logs"].([]any)
			for _, l := range logs {
				kept += len(l.(map[string]any)["text"].(string))
			}
			last := ""
			if len(logs) > 0 {
				last = logs[len(logs)-1].(map[string]any)["text"].(string)
			}
			// The last line, the dropped-lines marker, is not counted.
			assert.LessOrEqual(t, kept-len(last), 256<<10, "logs kept past max_log_bytes")
			if !limRace {
				assert.Less(t, hwm, limRSS, "peak RSS")
			}
			limInTime(t, d)
			h.limServesNormal()
		})
	}
}

// A program as code-mode models write it runs end to end over the real
// process: namespaced tools, the collected console, entry call.
func TestE2ECodeModeProgram(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			h := newHost(t, tr)
			id := h.limCompile(`async ({ repo }) => {
			  const [a, b] = await Promise.all([gh["list-issues"]({ repo }), gh.stats(repo)]);
			  console.log("found %d issues in %s", a.length, repo, { b });
			  return a.length + b;
			}`)
			opts := options([]string{"gh.list-issues", "gh.stats"}, map[string]any{"repo": map[string]any{"String": "r"}})
			opts["console"], opts["entry"], opts["host_calls"] = "collect", "call", "batch"
			resp := h.mustOK(h.do(h.req("start", "program_id", id, "options", opts), nil, ""))
			calls, _ := resp.Step()["calls"].([]any)
			require.Len(t, calls, 2)
			assert.Equal(t, "gh.list-issues", calls[0].(map[string]any)["capability"])
			snap := resp.SnapshotID()
			answers := []any{
				map[string]any{"call_id": 1, "payload": map[string]any{"type": "value", "value": map[string]any{"Array": []any{"Null", "Null", "Null"}}}},
				map[string]any{"call_id": 2, "payload": map[string]any{"type": "value", "value": map[string]any{"Number": map[string]any{"Finite": 4}}}},
			}
			done := h.mustOK(h.do(h.req("resume", "snapshot_id", snap, "policy_id", resp.PolicyID(), "auth", hosttest.Auth(hostKey, snap), "answers", answers), nil, ""))
			st := done.Step()
			assert.Equal(t, "completed", st["type"])
			logs, _ := st["logs"].([]any)
			require.Len(t, logs, 1)
			assert.Equal(t, map[string]any{"level": "log", "text": "found 3 issues in r { b: 4 }"}, logs[0])
		})
	}
}
