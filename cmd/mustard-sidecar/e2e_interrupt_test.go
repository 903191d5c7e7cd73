package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// Long native operations under limits that would let them run: a cancel or
// wall_time_ms ends each promptly, even inside one built-in call, and the
// process then serves the next program. Each in a fresh process.

// vastLimits: what a host may set, budgets no operation below comes near.
func vastLimits() map[string]any {
	return map[string]any{
		"instruction_budget": uint64(1_000_000_000_000),
		"allocation_budget":  uint64(1_000_000_000_000),
		"heap_limit_bytes":   uint64(1 << 30),
	}
}

// longOps build their operands, suspend on ready(), and, answered 1, run
// one native operation that takes seconds (one that ran as a single call
// for seconds or minutes before it could be interrupted).
var longOps = []struct{ name, setup, op string }{
	{"BigInt power", ``, `3n ** BigInt(1e8)`},
	{"regex through a large automaton", `const s = 'x'.repeat(4e6);`, `/x{1000}y/.test(s)`},
	{"backtracking regex with a backreference", `const s = 'x'.repeat(40);`, `/(x+x+)+y\1/.test(s)`},
	{"sort without a comparator", `const a = Array.from({ length: 1e6 }, (_, i) => (i * 7919) % 1000003);`, `a.sort()`},
}

func longOpProgram(setup, op string) string {
	return fmt.Sprintf(`%s const mode = ready(); if (mode === 1) { %s } 'done';`, setup, op)
}

// servesOnePlusOne starts 1+1 and checks its answer.
func (h *host) servesOnePlusOne() {
	h.t.Helper()
	id, _ := h.compile("1+1")
	began := time.Now()
	resp := h.do(h.req("start", "program_id", id, "options", options(nil, nil)), nil, "")
	require.Equal(h.t, `{"Number":{"Finite":2.0}}`, stepOf(h.t, resp).Value)
	h.t.Logf("then 1+1 answered in %v", time.Since(began))
}

func TestE2ECancelEndsLongNativeOperations(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	t.Parallel()
	for _, c := range longOps {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, transports[0])
			programID, _ := h.compile(longOpProgram(c.setup, c.op))
			opts := options([]string{"ready"}, nil)
			opts["limits"] = vastLimits()
			s := stepOf(t, h.do(h.req("start", "program_id", programID, "options", opts), nil, ""))
			require.Equal(t, "ready", s.Capability)

			busy0, procOK := cpuTicks(h.sc.Pid())
			resume := h.req("resume", "snapshot_id", s.SnapshotID, "policy_id", s.PolicyID,
				"auth", hosttest.Auth(hostKey, s.SnapshotID), "payload", valuePayload(num(1)))
			require.NoError(t, h.sc.Send(resume, nil, ""))
			if procOK {
				waitBusy(h.sc.Pid(), busy0, 5) // 50 ms into the operation
			} else {
				time.Sleep(50 * time.Millisecond)
			}
			cancel := h.req("cancel", "target_id", resume["id"])
			require.NoError(t, h.sc.Send(cancel, nil, ""))
			written := time.Now()
			resp := recvWithin(t, h, exitTimeout)
			latency := time.Since(written)
			got, _ := resp.ID()
			require.Equal(t, resume["id"], got)
			require.Equal(t, "Limit: execution cancelled", resp.Error(), "%s", resp.Raw)
			t.Logf("%s: cancel to response %v", c.op, latency)
			assert.Less(t, latency, cancelHang, "the contract allows 50 ms")
			requireCancelled(t, recvWithin(t, h, exitTimeout), cancel["id"].(uint64), resume["id"].(uint64), true)
			h.servesOnePlusOne()
		})
	}
}

func TestE2EWallTimeEndsLongNativeOperations(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	t.Parallel()
	for _, c := range longOps {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, transports[0])
			programID, _ := h.compile(longOpProgram(c.setup, c.op))
			opts := options([]string{"ready"}, nil)
			opts["limits"] = vastLimits()
			s := stepOf(t, h.do(h.req("start", "program_id", programID, "options", opts), nil, ""))
			require.Equal(t, "ready", s.Capability)
			limits := vastLimits()
			limits["wall_time_ms"] = 200
			pol := hosttest.Policy(hostKey, s.SnapshotID, []string{"ready"}, limits)
			began := time.Now()
			resp := recvAfter(t, h, h.req("resume", "snapshot_id", s.SnapshotID, "policy", pol, "payload", valuePayload(num(1))), nil)
			took := time.Since(began)
			require.Equal(t, "Limit: wall time exceeded", resp.Error(), "%s", resp.Raw)
			t.Logf("%s: wall_time_ms 200 answered after %v", c.op, took)
			assert.GreaterOrEqual(t, took, 200*time.Millisecond)
			assert.Less(t, took, 200*time.Millisecond+cancelHang)
			h.servesOnePlusOne()
		})
	}
}
