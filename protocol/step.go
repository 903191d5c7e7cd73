package protocol

import (
	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// What start and resume share once their segment has run: the step, and the
// suspension it is parked under.

// settleRun decides a start/resume's outcome once its segment has ended and
// before anything is parked: a cancel read until now ends the execution.
func (s *Session) settleRun(fl *flight, exec *engine.Execution) error {
	if !s.flights.settle(fl) {
		return nil
	}
	if exec != nil {
		exec.Abandon()
	}
	return engine.ErrCancelled
}

// ErrSnapshotTooLarge ends an execution whose next snapshot would be larger
// than the stage bound: no process could ever resume it from its bytes.
var ErrSnapshotTooLarge = &engine.Error{Kind: engine.KindLimit, Message: "snapshot size limit exceeded"}

// park records a suspension: its snapshot bytes and the live execution. A
// snapshot over the stage bound ends the execution instead.
func (s *Session) park(out *outcome, exec *engine.Execution, b *snapshot.Builder) error {
	st := out.step
	bytes, id := b.Suspend(snapshot.Pending{Capability: st.Capability, Args: st.Args, Meter: st.Meter, Limits: &st.Limits})
	if int64(len(bytes)) > s.opts.MaxStageBytes {
		exec.Abandon()
		return ErrSnapshotTooLarge
	}
	entry := &snapshotEntry{bytes: bytes, pending: st.Capability, seal: b.Sealer()}
	out.snap, out.snapID = bytes, id
	s.snapshots.Add(id, entry, int64(len(bytes)))
	if old, ok := s.conts.Take(id); ok {
		// Same snapshot parked twice (deterministic replays): keep one.
		old.exec.Abandon()
	}
	s.conts.Add(id, &continuation{exec: exec, builder: b, entry: entry}, 1)
	return nil
}
