package engine

import (
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// The execution's journal: every suspension appends to it what happened
// since the previous one (the answers the resume delivered, the calls the
// guest made, the suspension itself), and the bytes so far are the
// suspension's snapshot, which its Step carries. snapshot.Builder writes
// the format; the execution decides what goes in.

// record appends the suspension s to the journal and gives s the
// snapshot's bytes and id. A fresh execution's journal begins with its
// header; a replay's continues the bytes it was loaded from.
func (x *Execution) record(s *Step) {
	// The journal is made first, so that whether to write a checkpoint
	// is decided from its sizes in a continued execution as it was in
	// the original.
	b := x.journal
	if b == nil {
		b = x.beginJournal()
	}
	if x.checkpoint(s) {
		return
	}
	for i := range x.unrecorded {
		a := &x.unrecorded[i]
		if a.Payload.Cancelled {
			// A cancelled answer ended the execution: nothing after it
			// is recorded.
			break
		}
		b.Answer(&snapshot.Answer{CallID: a.CallID, Outcome: a.Payload.Outcome})
	}
	x.unrecorded = nil
	calls := s.NewCalls()
	for i := range calls {
		b.Call(&calls[i])
	}
	l := journaledLimits(s.Limits)
	s.Snapshot, s.SnapshotID = b.Suspend(s.Focus, s.Meter, &l)
}

// beginJournal makes the execution's journal at its first recorded
// suspension, and lets go of what it was made from: the header (its
// program bytes and inputs) or the replayed snapshot.
func (x *Execution) beginJournal() *snapshot.Builder {
	c := &x.cfg
	if c.Journal != nil {
		raw := c.Raw
		if raw == nil && c.Seal == nil {
			raw = snapshot.Encode(c.Journal) // the bytes it was decoded from
		}
		x.journal = snapshot.ContinueBuilderFrom(raw, c.Journal, c.Seal, c.Digest)
	} else {
		x.journal = snapshot.NewBuilder(c.Header, c.Seal, c.Program.SnapshotVersion())
	}
	c.Header, c.Journal, c.Raw, c.Digest = snapshot.Header{}, nil, nil, snapshot.Digest{}
	return x.journal
}

// Sealer is the seal the execution's snapshots are sealed under, nil for
// none.
func (x *Execution) Sealer() *snapshot.Sealer {
	if x.journal == nil {
		return x.cfg.Seal
	}
	return x.journal.Sealer()
}

// JournalSize is the memory the execution's journal holds (the snapshots
// its steps carried share it).
func (x *Execution) JournalSize() int {
	if x.journal == nil {
		return 0
	}
	return x.journal.Size()
}

// journaledLimits are what a journal records of limits: the deterministic
// ones, without the wall time and the log bound, which a continued journal
// cannot know, so that it and a live one write the same bytes.
func journaledLimits(l policy.Limits) snapshot.Limits {
	return snapshot.Limits{
		InstructionBudget:       l.InstructionBudget,
		HeapLimitBytes:          l.HeapLimitBytes,
		AllocationBudget:        l.AllocationBudget,
		CallDepthLimit:          l.CallDepthLimit,
		MaxOutstandingHostCalls: l.MaxOutstandingHostCalls,
	}
}

// recordedLimits are the limits a journal recorded for a segment, which
// its replay runs under (no wall time, no log bound).
func recordedLimits(l *snapshot.Limits) policy.Limits {
	return policy.Limits{
		InstructionBudget:       l.InstructionBudget,
		HeapLimitBytes:          l.HeapLimitBytes,
		AllocationBudget:        l.AllocationBudget,
		CallDepthLimit:          l.CallDepthLimit,
		MaxOutstandingHostCalls: l.MaxOutstandingHostCalls,
	}
}
