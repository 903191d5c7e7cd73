package engine

import (
	"fmt"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// A resume may lower any limit. Whatever it lowers, resuming a snapshot
// hot (its parked execution) and cold (a replay of its journal) must end
// the same way, step for step: the retained-heap figure both count is the
// same deterministic walk of the guest's values.

var loweredPrograms = []struct{ name, src string }{
	{"numbers kept over a plain call", `const keep = []; for (let i = 0; i < 3000; i++) keep.push(i * 1.5); cap(1); keep.length`},
	{"objects kept across awaits", `async function main() {
		const keep = [];
		for (let i = 0; i < 2000; i++) keep.push({ i, s: 'v' + i });
		const a = await cap(1);
		let s = 0;
		for (let i = 0; i < 100; i++) s += i;
		function d(n) { return n ? d(n - 1) + 1 : 0 }
		const b = await cap(d(20));
		const xs = await Promise.all([cap(1), cap(2), cap(3)]);
		return keep.length + a + b + xs.length + s;
	}
	main()`},
	{"a string kept in a closure", `const f = (() => { const big = 'x'.repeat(200000); return () => big.length })(); cap(1); cap(2); f()`},
}

// loweredOutcome is everything a resumed execution showed, step by step.
type loweredOutcome []string

func loweredStep(s Step) string {
	switch {
	case s.Err != nil:
		return "error " + s.Err.Error()
	case s.Done:
		return "done " + fmtValue(s.Value)
	default:
		return fmt.Sprintf("suspended on %s %v at %+v", s.Capability, s.Focus, s.Meter)
	}
}

func TestEveryLimitLoweredAtResumeHotEqualsCold(t *testing.T) {
	for i, prog := range loweredPrograms {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(prog.name, func(t *testing.T) {
			p, err := Compile(prog.src)
			require.NoError(t, err)
			pol, err := policy.New([]string{"cap"}, policy.DefaultLimits())
			require.NoError(t, err)
			h := snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: 3, ClockMillis: 5}
			answer := Payload{Outcome: snapshot.Outcome{Value: value.Number(1)}}

			// park runs the program to its k-th suspension under the
			// default limits and returns it with its snapshot.
			park := func(k int) (*Execution, Step, []byte) {
				x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
				for i := 0; ; i++ {
					require.True(t, step.Suspended(), "suspension %d: %s", i, loweredStep(step))
					raw := step.Snapshot
					if i == k {
						return x, step, raw
					}
					x, step = x.Resume(answer, pol.Limits)
				}
			}
			finish := func(x *Execution, step Step, l policy.Limits) loweredOutcome {
				out := loweredOutcome{loweredStep(step)}
				for step.Suspended() {
					x, step = x.Resume(answer, l)
					out = append(out, loweredStep(step))
				}
				return out
			}

			x, first, _ := park(0)
			kept := x.heap.retained
			x.Abandon()
			require.NotZero(t, kept)
			used := first.Meter

			def := policy.DefaultLimits()
			var variants []policy.Limits
			with := func(f func(*policy.Limits)) {
				l := def
				f(&l)
				variants = append(variants, l)
			}
			// Within a segment the heap is measured, not walked (approximate:
			// docs/limits.md), so a limit that lets the resume through
			// leaves the rest of the program room to run.
			for _, v := range []uint64{0, 1, 20000, kept / 2, kept - 1, kept + 4<<20} {
				with(func(l *policy.Limits) { l.HeapLimitBytes = v })
			}
			for _, v := range []uint64{0, 1, used.Instructions - 1, used.Instructions, used.Instructions + 50, used.Instructions + 5000} {
				with(func(l *policy.Limits) { l.InstructionBudget = v })
			}
			for _, v := range []uint64{0, 1, used.Allocations, used.Allocations + 1, used.Allocations + 10} {
				with(func(l *policy.Limits) { l.AllocationBudget = v })
			}
			for _, v := range []uint64{0, 1, 2, 5, 21, 30} {
				with(func(l *policy.Limits) { l.CallDepthLimit = v })
			}
			for _, v := range []uint64{0, 1, 2, 3} {
				with(func(l *policy.Limits) { l.MaxOutstandingHostCalls = v })
			}

			px, pstep, _ := park(0)
			suspensions := len(finish(px, pstep, pol.Limits)) - 1
			for k := 0; k < suspensions; k++ {
				for _, l := range variants {
					x, _, raw := park(k)
					hx, hstep := x.Resume(answer, l)
					hot := finish(hx, hstep, l)

					snap, err := snapshot.Load(raw, nil)
					require.NoError(t, err)
					cx, cstep := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: l, Journal: snap,
						Answers: []Answer{{CallID: snap.Last().Focus, Payload: answer}}})
					cold := finish(cx, cstep, l)
					require.Equal(t, hot, cold, "resumed at suspension %d under %+v", k, l)
				}
			}
		})
	}
}

// The example that showed the difference: 3,000 numbers kept, resumed
// with a 20,000-byte heap limit. Both paths refuse it, as the reference
// refuses to load such a snapshot under that limit.
func TestLoweredHeapLimitBelowWhatIsKeptFailsBothWays(t *testing.T) {
	src := loweredPrograms[0].src
	p, err := Compile(src)
	require.NoError(t, err)
	pol, err := policy.New([]string{"cap"}, policy.DefaultLimits())
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: 3, ClockMillis: 5}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
	require.True(t, step.Suspended())
	raw := step.Snapshot
	low := pol.Limits
	low.HeapLimitBytes = 20000
	answer := Payload{Outcome: snapshot.Outcome{Value: value.Undefined()}}
	_, hot := x.Resume(answer, low)
	require.Equal(t, ErrHeapLimit, hot.Err)

	snap, err := snapshot.Load(raw, nil)
	require.NoError(t, err)
	_, cold := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: low, Journal: snap, Raw: raw,
		Answers: []Answer{{CallID: snap.Last().Focus, Payload: answer}}})
	require.Equal(t, ErrHeapLimit, cold.Err)
}
