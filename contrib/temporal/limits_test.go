package mustardtemporal

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/host"
)

// Limits in workflow inputs written by earlier versions (Go's field names,
// absent fields left out) decode to the same limits, and every limit,
// MaxLogBytes too, survives a payload's round trip.
func TestLimitsPayloads(t *testing.T) {
	var l Limits
	if err := json.Unmarshal([]byte(`{"InstructionBudget":5,"CallDepthLimit":0,"WallTime":2000000}`), &l); err != nil {
		t.Fatal(err)
	}
	h := l.Host()
	if *h.InstructionBudget != 5 || *h.CallDepthLimit != 0 || h.HeapLimitBytes != nil || h.WallTime != 2*time.Millisecond {
		t.Fatalf("decoded %+v", h)
	}
	in := Limits{HeapLimitBytes: host.Limit(1 << 20), MaxLogBytes: host.Limit(512), WallTime: time.Second}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back Limits
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if *back.HeapLimitBytes != 1<<20 || *back.MaxLogBytes != 512 || back.WallTime != time.Second || back.InstructionBudget != nil {
		t.Fatalf("%s read back as %+v", b, back)
	}
}
