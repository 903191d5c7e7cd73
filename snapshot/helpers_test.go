package snapshot

import (
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Pending is a synchronous call that suspends an execution at once, the
// only kind a version 1 journal holds; most format tests write journals
// of them.
type Pending struct {
	Capability string
	Args       []value.Value
	Meter      Meter
	Limits     *Limits
}

func (p Pending) call(id uint64) *HostCall {
	return &HostCall{ID: id, Capability: p.Capability, Args: p.Args, ArgsDigest: ArgsDigest(p.Args), Meter: p.Meter, Sync: true}
}

// suspendOn appends a synchronous call and the suspension on it.
func suspendOn(b *Builder, p Pending) ([]byte, string) {
	b.Call(p.call(b.calls + 1))
	l := p.Limits
	if l == nil && b.version != 1 {
		d := defaultLimits
		l = &d
	}
	return b.Suspend(b.calls, p.Meter, l)
}

// answerLast appends the answer to the last call made.
func answerLast(b *Builder, o Outcome) {
	b.Answer(&Answer{CallID: b.calls, Outcome: o})
}

// pendingItem is a version 1 pending item.
func pendingItem(p Pending) []byte { return appendPending(nil, p.call(1), p.Limits) }

// answerOf returns the outcome the journal delivered to call id.
func answerOf(s *Snapshot, id uint64) *Outcome {
	for i := range s.Suspensions {
		for j := range s.Suspensions[i].Answers {
			if a := &s.Suspensions[i].Answers[j]; a.CallID == id {
				return &a.Outcome
			}
		}
	}
	return nil
}

// defaultLimits are the limits of a policy that sets none, as a journal
// records them.
var defaultLimits = Limits{InstructionBudget: 1_000_000, HeapLimitBytes: 8 << 20, AllocationBudget: 250_000, CallDepthLimit: 256, MaxOutstandingHostCalls: 128}
