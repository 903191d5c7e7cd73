package protocol

import (
	"bytes"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"strconv"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
)

// What start and resume share once their segment has run: the step, the
// suspension it is parked under, and its response ({"kind":"step"}).

// stepResult is a start or resume's step and what its response says about
// the snapshot.
type stepResult struct {
	step     engine.Step
	snap     []byte // the new snapshot, when suspended
	snapID   string
	pol      policy.Policy // the policy in force, policyID
	policyID string
	batch    bool // host_calls "batch": the step lists every outstanding call
	profile  bool
	execNS   int64
	started  time.Time

	// How the snapshot travels, and the snapshot the execution was resumed
	// from (nil for a start), which a delta extends.
	delivery delivery
	base     []byte
	baseID   string
}

// delivered returns the snapshot bytes a suspended response carries and,
// for a delta, the id of the snapshot they extend. A delta is sent only
// when the new snapshot really starts with the resumed one's bytes.
func (o *stepResult) delivered() (b []byte, baseID string) {
	switch o.delivery {
	case deliverNone:
		return nil, ""
	case deliverDelta:
		if o.base != nil && bytes.HasPrefix(o.snap, o.base) {
			return o.snap[len(o.base):], o.baseID
		}
	}
	return o.snap, ""
}

func (o *stepResult) encode(id uint64, jsonl bool) Response {
	snap, baseID := o.delivered()
	b := okHeader(id, jsonl, len(snap))
	var payload []byte
	b = append(b, `,"result":{"kind":"step","step":{"type":`...)
	if o.step.Done {
		b = append(b, `"completed","value":`...)
		b = o.step.Value.AppendJSON(b)
		b = appendLogs(b, o.step.Logs)
		b = append(b, "}}"...)
	} else {
		b = append(b, `"suspended",`...)
		capability, args := o.step.Capability, o.step.Args
		if o.batch {
			b = append(b, `"calls":[`...)
			for i := range o.step.Calls {
				c := &o.step.Calls[i]
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"call_id":`...)
				b = strconv.AppendUint(b, c.ID, 10)
				b = append(b, `,"capability":`...)
				b = appendString(b, c.Capability)
				b = appendArgs(b, c.Args)
				b = append(b, '}')
			}
			b = append(b, "],"...)
			// capability and args repeat calls[0], the oldest.
			capability, args = o.step.Calls[0].Capability, o.step.Calls[0].Args
		}
		b = append(b, `"capability":`...)
		b = appendString(b, capability)
		b = appendArgs(b, args)
		b = appendLogs(b, o.step.Logs)
		if o.delivery != deliverNone { // none: the session keeps them for a snapshot fetch
			b, payload = appendRaw(b, jsonl, wire.FieldSnapshotBase64, snap)
		}
		b = append(b, `},"snapshot_id":"`...)
		b = append(b, o.snapID...)
		b = append(b, `","policy_id":"`...)
		b = append(b, o.policyID...)
		if baseID != "" {
			b = append(b, `","snapshot_base_id":"`...)
			b = append(b, baseID...)
		}
		b = append(b, `"}`...)
	}
	// The profile is a member of the response, beside result.
	if o.profile {
		b = append(b, `,"profile":{"execution_ns":`...)
		b = strconv.AppendInt(b, o.execNS, 10)
		b = append(b, `,"response_prepare_ns":`...)
		b = strconv.AppendInt(b, time.Since(o.started).Nanoseconds()-o.execNS, 10)
		b = append(b, `,"instructions":`...)
		b = strconv.AppendUint(b, o.step.Meter.Instructions, 10)
		b = append(b, '}')
	}
	return Response{Header: append(b, '}'), Payload: payload}
}

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

// park keeps a suspension: its snapshot bytes (with the seal they are
// sealed under) and the live execution, weighed in the memory budget. A snapshot
// over the stage bound ends the execution instead. An execution whose
// program the session cannot keep cached is not parked: its next resume
// replays the snapshot.
func (s *Session) park(out *stepResult, exec *engine.Execution, prog *engine.Program) error {
	bytes, id := out.step.Snapshot, out.step.SnapshotID
	if int64(len(bytes)) > s.opts.MaxStageBytes {
		exec.Abandon()
		return ErrSnapshotTooLarge
	}
	// The entry pins the policy in force, and those the same snapshot
	// pinned before.
	var pins []pinnedPolicy
	if old := s.lookupPeek(id); old != nil {
		pins = old.pols
	}
	entry := &snapshotEntry{bytes: bytes, seal: exec.Sealer(), pols: pinPolicy(pins, out.policyID, out.pol)}
	out.snap, out.snapID = bytes, id
	s.snapshots.Add(id, entry, entry.weight())
	if old, ok := s.conts.Take(id); ok {
		// Same snapshot parked twice (deterministic replays): keep one.
		old.exec.Abandon()
	}
	// The program is used now, before the execution is added: in the
	// budget's order it then outlives the execution.
	if s.cacheProgram(prog) != prog {
		exec.Abandon()
		return nil
	}
	if _, ok := s.programs.Peek(prog.ID); !ok {
		exec.Abandon()
		return nil
	}
	c := &continuation{exec: exec, prog: prog, entry: entry, weight: contWeight(exec) + entry.pinWeight()}
	s.conts.Add(id, c, c.weight)
	return nil
}
