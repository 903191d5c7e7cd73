package protocol_test

import (
	"fmt"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// An execution whose snapshots grow large enough that the memory budget
// evicts entries on every step keeps resuming by its cached ids: the
// policy a cached snapshot or parked execution was produced under goes
// only with the last of them.
func TestBudgetKeepsThePolicyOfCachedExecutions(t *testing.T) {
	// The long suites: the default budget (128 MiB) and arguments of 3.5
	// MB. The default run: a quarter of each.
	k := longtest.Pick(4, 1)
	opts := protocol.Options{}
	if k > 1 {
		opts.MemoryBudget = protocol.DefaultMemoryBudget / int64(k)
	}
	c := newSess(t, false, opts)
	src := fmt.Sprintf(`let n = 0; for (let i = 0; i < 18; i++) n += fetch_data(String.fromCharCode(65 + i %% 26).repeat(%d) + i).length; n`, 3_500_000/k)
	prog := c.must(c.call("compile", nil, "", "source", src)).str("program_id")
	r := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"fetch_data"}, "limits": map[string]any{"instruction_budget": 1e11}}))
	for i := 0; r.step()["type"] == "suspended"; i++ {
		id := r.str("snapshot_id")
		r = c.call("resume", nil, "", "snapshot_id", id, "policy_id", r.str("policy_id"), "auth", auth(id),
			"payload", map[string]any{"type": "value", "value": map[string]any{"String": "ok"}})
		if !r.ok() {
			t.Fatalf("resume %d (%d bytes of snapshot): %s", i+1, len(r.bytes), r.raw)
		}
	}
	if r.step()["type"] != "completed" {
		t.Fatalf("%s", r.raw)
	}
}

// A snapshot keeps the policy it was produced under when the policy cache
// lets it go: a resume by the ids its step returned succeeds, hot or cold.
func TestSnapshotPinsItsPolicy(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{MaxPolicies: 1})
		prog := c.must(c.call("compile", nil, "", "source", threeCalls)).str("program_id")
		start := func(depth int) reply {
			return c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{
				"capabilities": []string{"fetch_data"}, "limits": map[string]any{"call_depth_limit": depth}}))
		}
		a := start(50)
		b := start(60) // its policy evicts a's from the policy cache
		if a.str("policy_id") == b.str("policy_id") {
			t.Fatal("the two starts share a policy")
		}
		for _, r := range []reply{a, b} {
			id := r.str("snapshot_id")
			next := c.must(c.call("resume", nil, "", "snapshot_id", id, "policy_id", r.str("policy_id"), "auth", auth(id), "payload", numPayload(1)))
			if next.step()["type"] != "suspended" {
				t.Fatalf("%s", next.raw)
			}
		}
		// Cold: the parked execution is gone (consumed), the cached
		// snapshot replays under its pinned policy.
		id := a.str("snapshot_id")
		c.must(c.call("resume", nil, "", "snapshot_id", id, "policy_id", a.str("policy_id"), "auth", auth(id), "payload", numPayload(1)))
	})
}
