package host

import (
	"encoding/json"
	"testing"
	"time"
)

// Limits travel in the sidecar's own form: the wire's names, wall time in
// whole milliseconds rounded up, nil fields left out; reading it back
// gives the same limits, and a misspelt name is refused as the sidecar
// refuses it.
func TestLimitsWireForm(t *testing.T) {
	l := Limits{InstructionBudget: Limit(5), CallDepthLimit: Limit(0), MaxLogBytes: Limit(1024), WallTime: 1500 * time.Microsecond}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"instruction_budget":5,"call_depth_limit":0,"wall_time_ms":2,"max_log_bytes":1024}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	var back Limits
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if *back.InstructionBudget != 5 || *back.CallDepthLimit != 0 || *back.MaxLogBytes != 1024 ||
		back.HeapLimitBytes != nil || back.AllocationBudget != nil || back.MaxOutstandingHostCalls != nil || back.WallTime != 2*time.Millisecond {
		t.Fatalf("read back %+v", back)
	}
	if err := json.Unmarshal([]byte(`{"instruction_budgett":5}`), &back); err == nil {
		t.Fatal("a misspelt limit was read")
	}
	if _, err := json.Marshal(Limits{WallTime: -1}); err == nil {
		t.Fatal("a negative wall time was written")
	}
}
