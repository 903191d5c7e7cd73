package protocol_test

import (
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// wall_time_ms is part of the policy only when it is not 0: absent, null
// and 0 keep the policy_id every earlier policy had.
func TestWallTimePolicyID(t *testing.T) {
	c := newSess(t, false, protocol.Options{})
	prog := c.must(c.call("compile", nil, "", "source", `fetch_data(1)`)).str("program_id")
	start := func(limits map[string]any) string {
		opts := map[string]any{"capabilities": []string{"fetch_data"}, "limits": limits}
		return c.must(c.call("start", nil, "", "program_id", prog, "options", opts)).str("policy_id")
	}
	const before = "fbd6ecf21199b80c737e4119a278cdba382183933071b30d99ce9d5a05ed22c0"
	for _, l := range []map[string]any{{}, {"wall_time_ms": nil}, {"wall_time_ms": 0}} {
		if got := start(l); got != before {
			t.Errorf("limits %v: policy_id %s, want %s", l, got, before)
		}
	}
	a, b := start(map[string]any{"wall_time_ms": 60_000}), start(map[string]any{"wall_time_ms": 60_001})
	if a == before || b == before || a == b {
		t.Errorf("wall_time_ms must change the policy_id: %s %s", a, b)
	}
}

// A start that runs longer than wall_time_ms ends with the contract's
// phrase, however large its budgets, and the session goes on.
func TestWallTimeExceeded(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		prog := c.must(c.call("compile", nil, "", "source", `for(;;){}`)).str("program_id")
		limits := map[string]any{"instruction_budget": uint64(1e15), "wall_time_ms": 30}
		began := time.Now()
		r := c.call("start", nil, "", "program_id", prog, "options", map[string]any{"limits": limits})
		took := time.Since(began)
		c.fail(r, "Limit: wall time exceeded")
		if took < 30*time.Millisecond || took > 30*time.Millisecond+2*time.Second {
			t.Errorf("ended after %v", took)
		}
		c.must(c.call("compile", nil, "", "source", `1`))
	})
}
