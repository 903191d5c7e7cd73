package snapshot

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Annotate renders unsealed snapshot bytes as an annotated hex dump: each
// journal item's offset, its bytes and what it says. It is for people
// reading the format (the golden snapshots in engine/testdata keep one
// beside each file) and for debugging a journal; it decodes the bytes
// first, so it only explains snapshots Decode accepts.
func Annotate(raw []byte) (string, error) {
	s, err := Decode(raw)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	at := 0
	item := func(enc []byte, what string) {
		if at+len(enc) > len(raw) || string(raw[at:at+len(enc)]) != string(enc) {
			// A record another build compressed differently: show the
			// bytes as they stand, up to the end.
			enc = raw[at:]
			what += " (encoded by another build)"
		}
		fmt.Fprintf(&out, "%06x  %s\n", at, what)
		for i := 0; i < len(enc); i += 16 {
			fmt.Fprintf(&out, "        %s\n", spaced(enc[i:min(i+16, len(enc))]))
		}
		at += len(enc)
	}
	h := s.Header
	item(appendHeader(nil, h, s.Version), fmt.Sprintf("header: %q, version %d, program (%d bytes), inputs %s, capabilities %q, seed %d, clock %d ms",
		Magic, s.Version, len(h.Program), describe(value.Object(h.Inputs...)), h.Capabilities, h.Seed, h.ClockMillis))
	next, first := 0, 0
	if cp := s.Checkpoint; cp != nil {
		sp, c := &s.Suspensions[0], &s.Calls[0]
		calls := s.CheckpointCalls()
		var what string
		if s.Version == VersionRestCheckpoint {
			each := make([]string, len(calls))
			for i := range calls {
				c := &calls[i]
				each[i] = fmt.Sprintf("call %d: %s(%s), made at %s", c.ID, c.Capability, describeArgs(c.Args), describeMeter(c.Meter))
			}
			what = "checkpoint: at rest, waiting for asynchronous " + strings.Join(each, "; ") + ", the calls outstanding"
		} else {
			what = fmt.Sprintf("checkpoint: suspended in synchronous call %d: %s(%s), made at %s, the only call outstanding",
				c.ID, c.Capability, describeArgs(c.Args), describeMeter(c.Meter))
		}
		item(appendCheckpoint(nil, calls, sp.Meter, sp.Limits, cp), fmt.Sprintf(
			"%s, at %s, the segment ran under %s; work carried %d, random state %d bytes, image %d bytes",
			what, describeMeter(sp.Meter), describeLimits(sp.Limits), cp.Carry, len(cp.Rand), len(cp.Image)))
		for j := range sp.Answers {
			a := &sp.Answers[j]
			what := fmt.Sprintf("answer to call %d: %s", a.CallID, describeOutcome(a.Outcome))
			if isCompressed(a.Outcome) {
				what += " (compressed)"
			}
			item(appendAnswer(nil, a), what)
		}
		next, first = 1, 1
	}
	for i := first; i < len(s.Suspensions); i++ {
		sp := &s.Suspensions[i]
		for ; next < len(s.Calls) && s.Calls[next].ID <= sp.Made; next++ {
			c := &s.Calls[next]
			kind := "asynchronous (returned a promise)"
			if c.Sync {
				kind = "synchronous"
			}
			what := fmt.Sprintf("call %d: %s(%s), %s, made at %s", c.ID, c.Capability, describeArgs(c.Args), kind, describeMeter(c.Meter))
			if s.Version == 1 {
				item(appendPending(nil, c, sp.Limits), "pending "+what+"; the execution suspended on it, under "+describeLimits(sp.Limits))
			} else {
				item(appendCall(nil, c), what)
			}
		}
		if s.Version != 1 {
			l, ran := sp.Limits, describeLimits(sp.Limits)
			if i > 0 && *s.Suspensions[i-1].Limits == *l {
				l, ran = nil, "the previous segment's limits (null)"
			}
			item(appendSuspend(nil, sp.Focus, sp.Meter, l), fmt.Sprintf("suspend %d: focus call %d, at %s, the segment ran under %s",
				i+1, sp.Focus, describeMeter(sp.Meter), ran))
		}
		for j := range sp.Answers {
			a := &sp.Answers[j]
			enc := appendAnswer(nil, a)
			what := fmt.Sprintf("answer to call %d: %s", a.CallID, describeOutcome(a.Outcome))
			if s.Version == 1 {
				enc = appendOutcome(nil, a.Outcome)
				what = fmt.Sprintf("outcome of call %d: %s", a.CallID, describeOutcome(a.Outcome))
			}
			if isCompressed(a.Outcome) {
				what += " (compressed)"
			}
			item(enc, what)
		}
	}
	return out.String(), nil
}

func spaced(b []byte) string {
	h := hex.EncodeToString(b)
	var s strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			s.WriteByte(' ')
		}
		s.WriteString(h[i : i+2])
	}
	return s.String()
}

func describe(v value.Value) string {
	j := string(v.AppendJSON(nil))
	if len(j) > 120 {
		j = j[:117] + "..."
	}
	return j
}

func describeArgs(args []value.Value) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = describe(a)
	}
	return strings.Join(parts, ", ")
}

func describeMeter(m Meter) string {
	return fmt.Sprintf("%d instructions, %d allocations", m.Instructions, m.Allocations)
}

func describeLimits(l *Limits) string {
	if l == nil {
		return "limits not recorded"
	}
	return fmt.Sprintf("limits [%d, %d, %d, %d, %d]", l.InstructionBudget, l.HeapLimitBytes, l.AllocationBudget, l.CallDepthLimit, l.MaxOutstandingHostCalls)
}

func describeOutcome(o Outcome) string {
	if e := o.Error; e != nil {
		code := ""
		if e.Code != nil {
			code = fmt.Sprintf(", code %q", *e.Code)
		}
		return fmt.Sprintf("error %q: %q%s", e.Name, e.Message, code)
	}
	if d, err := o.Decoded(); err == nil {
		o = d
	}
	return "value " + describe(o.Value)
}

func isCompressed(o Outcome) bool {
	if o.Error != nil {
		return false
	}
	enc := appendOutcome(nil, o)
	return len(enc) > 2 && enc[1] == tagCompressedValue
}
