package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// The real binary rejects an unknown key in each closed structure with
// the contract's phrase, in both transports (the full table, every
// structure and many spellings: protocol.TestClosedStructures).
func TestE2EClosedStructures(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			programID, _ := h.compile(fetchProgram)
			s := stepOf(t, h.start(programID, fetchCaps, nil))
			opts := options(fetchCaps, nil)
			opts["capability"] = []string{"x"}
			require.Equal(t, "unknown field `capability` in options", h.do(h.req("start", "program_id", programID, "options", opts), nil, "").Error())
			opts = options(fetchCaps, nil)
			opts["limits"] = map[string]any{"instructions": 1000}
			require.Equal(t, "unknown field `instructions` in limits", h.do(h.req("start", "program_id", programID, "options", opts), nil, "").Error())
			auth := hosttest.Auth(hostKey, s.SnapshotID)
			auth["snapshot_id"] = s.SnapshotID
			require.Equal(t, "unknown field `snapshot_id` in auth", h.do(h.req("resume", "snapshot_id", s.SnapshotID, "policy_id", s.PolicyID,
				"auth", auth, "payload", valuePayload(num(1))), nil, "").Error())
			pay := valuePayload(num(1))
			pay["values"] = 1
			require.Equal(t, "unknown field `values` in payload", h.do(h.req("resume", "snapshot_id", s.SnapshotID, "policy_id", s.PolicyID,
				"auth", hosttest.Auth(hostKey, s.SnapshotID), "payload", pay), nil, "").Error())
			pol := hosttest.Policy(hostKey, s.SnapshotID, fetchCaps, nil)
			pol["policy_id"] = s.PolicyID
			require.Equal(t, "unknown field `policy_id` in policy", h.do(h.req("resume", "policy", pol, "payload", valuePayload(num(1))), s.Snapshot, "snapshot_base64").Error())
			// Unknown top-level keys are still ignored.
			require.Equal(t, `{"Number":{"Finite":2.0}}`, stepOf(t, h.do(h.req("resume", "snapshot_id", s.SnapshotID, "policy_id", s.PolicyID,
				"auth", hosttest.Auth(hostKey, s.SnapshotID), "payload", valuePayload(num(1)), "request_tag", "abc"), nil, "")).Value)
		})
	}
}

// limits.wall_time_ms ends a segment that runs too long, a tight loop or
// a long built-in, with Limit: wall time exceeded, and bounds each segment,
// not the execution; the process goes on.
func TestE2EWallTime(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		for _, g := range spinning {
			if g.name != "tight loop" && tr.jsonl {
				continue // building sortLength numbers takes seconds under -race: once is enough
			}
			t.Run(tr.name+"/"+g.name, func(t *testing.T) {
				t.Parallel()
				h := newHost(t, tr)
				programID, _ := h.compile(g.src)
				limits := endlessLimits()
				limits["wall_time_ms"] = 100
				// The start (building sortLength numbers) runs under no wall-time
				// limit; the hot resume that spins or sorts under one: the
				// cached snapshot with a full policy.
				s := stepOf(t, h.do(h.req("start", "program_id", programID, "options", endlessOptions()), nil, ""))
				pol := hosttest.Policy(hostKey, s.SnapshotID, []string{"ready"}, limits)
				began := time.Now()
				resp := recvAfter(t, h, h.req("resume", "snapshot_id", s.SnapshotID, "policy", pol, "payload", valuePayload(num(1))), nil)
				took := time.Since(began)
				require.Equal(t, "Limit: wall time exceeded", resp.Error())
				t.Logf("ended after %v", took)
				assert.GreaterOrEqual(t, took, 100*time.Millisecond)
				h.ping()
			})
		}
	}
}

// recvAfter sends a raw resume and reads its response, bounded.
func recvAfter(t *testing.T, h *host, req map[string]any, snap []byte) hosttest.Response {
	t.Helper()
	require.NoError(t, h.sc.Send(req, snap, "snapshot_base64"))
	return recvWithin(t, h, exitTimeout)
}
