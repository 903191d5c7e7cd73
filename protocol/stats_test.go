package protocol_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// startNth parks an execution of threeCalls that no other start with
// another n shares (its inputs differ).
func (c *sess) startNth(n int) reply {
	c.t.Helper()
	prog := c.must(c.call("compile", nil, "", "source", threeCalls)).str("program_id")
	return c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{
		"capabilities": []string{"fetch_data"},
		"inputs":       map[string]any{"n": map[string]any{"Number": map[string]any{"Finite": n}}},
	}))
}

// stats reports what the session holds and how its resumes ran, on
// either transport; reading it changes nothing.
func TestStatsReportsTheSession(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{MemoryBudget: 64 << 20})
		num := func(r reply, k string) int64 {
			t.Helper()
			if _, ok := r.result()[k]; !ok {
				t.Fatalf("stats has no %s: %s", k, r.raw)
			}
			return r.num(k)
		}
		st := c.must(c.call("stats", nil, ""))
		if st.str("kind") != "stats" {
			t.Fatalf("kind %q", st.str("kind"))
		}
		for k, want := range map[string]int64{"memory_budget_bytes": 64 << 20, "memory_used_bytes": 0, "parked_executions": 0,
			"cached_programs": 0, "cached_snapshots": 0, "compiles": 0, "hot_resumes": 0, "replays": 0, "evicted_executions": 0} {
			if got := num(st, k); got != want {
				t.Errorf("fresh session: %s = %d, want %d", k, got, want)
			}
		}

		// Two executions parked, one resumed hot, one staged upload.
		a := c.startNth(1)
		b := c.startNth(2)
		c.must(c.call("resume", nil, "", "snapshot_id", a.str("snapshot_id"), "policy_id", a.str("policy_id"),
			"auth", auth(a.str("snapshot_id")), "payload", numPayload(1)))
		c.must(c.call("stage", []byte("abc"), "bytes_base64", "stage_id", "s", "offset", 0))
		st = c.must(c.call("stats", nil, ""))
		for k, want := range map[string]int64{"parked_executions": 2, "cached_programs": 1, "cached_snapshots": 3,
			"cached_policies": 1, "staged_bytes": 3, "compiles": 1, "hot_resumes": 1, "replays": 0} {
			if got := num(st, k); got != want {
				t.Errorf("%s = %d, want %d", k, got, want)
			}
		}
		if used := num(st, "memory_used_bytes"); used <= 0 || used > 64<<20 {
			t.Errorf("memory_used_bytes %d", used)
		}
		if again := c.must(c.call("stats", nil, "")); !maps.Equal(again.result(), st.result()) {
			t.Errorf("reading stats changed them:\n%s\n%s", st.raw, again.raw)
		}

		// A resume from bytes of an execution no longer parked replays.
		c.must(c.call("resume", b.bytes, "snapshot_base64", "policy", rawPolicy(b.str("snapshot_id"), "fetch_data"), "payload", numPayload(2)))
		if r := c.must(c.call("stats", nil, "")); num(r, "replays") != 0 || num(r, "hot_resumes") != 2 {
			t.Errorf("resume of a parked execution's bytes: %s", r.raw)
		}
	})
}

// A parked execution let go for the memory budget is counted: its resume
// will replay.
func TestStatsCountsEvictedExecutions(t *testing.T) {
	c := newSess(t, false, protocol.Options{})
	a := c.startNth(1)
	c.s.FillBudget()
	c.startNth(2) // parking it evicts the least recently used entries
	st := c.must(c.call("stats", nil, ""))
	if st.num("evicted_executions") < 1 || st.num("evictions") < 1 {
		t.Fatalf("after filling the budget: %s", st.raw)
	}
	c.must(c.call("resume", a.bytes, "snapshot_base64", "policy", rawPolicy(a.str("snapshot_id"), "fetch_data"), "payload", numPayload(1)))
	if r := c.must(c.call("stats", nil, "")); r.num("replays") != 1 {
		t.Errorf("the evicted execution's resume: %s", r.raw)
	}
}

// stats takes no payload, and goes through the version check.
func TestStatsRefusesAPayload(t *testing.T) {
	c := newSess(t, false, protocol.Options{})
	r := c.call("stats", []byte("x"), "")
	if r.ok() || !strings.Contains(r.err(), "stats requests must not include a binary payload") {
		t.Errorf("stats with a payload: %s", r.raw)
	}
}
