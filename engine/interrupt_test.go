package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
)

// vast limits: budgets a host may set that no long native operation comes
// near, so that only a cancel or the wall-time limit ends one.
func vast() policy.Limits {
	l := policy.DefaultLimits()
	l.InstructionBudget = 1_000_000_000_000
	l.AllocationBudget = 1_000_000_000_000
	l.HeapLimitBytes = 1 << 30
	return l
}

// interruptHang bounds how long a stopped segment may take to end: only a
// hang fails it (a quiet machine ends these within milliseconds).
const interruptHang = 10 * time.Second

// longNativeOps each build their operands, suspend on ready(), and then run
// one native operation that takes seconds (minutes, for some, before it
// could be interrupted) from the resumed segment's first instructions.
// Under the race detector, which makes building the strings slow, the
// strings are a tenth as long (the operations still take seconds).
var longNativeOps = func() []struct{ name, setup, op string } {
	s := func(n float64) string {
		return fmt.Sprintf("%g", map[bool]float64{false: n, true: n / 10}[raceEnabled])
	}
	return []struct{ name, setup, op string }{
		{"BigInt power", ``, `3n ** BigInt(1e8)`},
		{"BigInt parse", `const s = '1'.repeat(2e7);`, `BigInt(s)`},
		{"BigInt product", `const x = 3n ** 10000000n, y = 5n ** 10000000n;`, `x * y * x`},
		{"BigInt quotient", `const x = 3n ** 20000000n, d = 7n ** 4000000n;`, `x / d`},
		{"BigInt to string", `const x = 7n ** 4000000n;`, `String(x)`},
		{"BigInt implicit to string", `const x = 7n ** 4000000n;`, `'' + x`},
		{"regex through a large automaton", `const s = 'x'.repeat(4e6);`, `/x{1000}y/.test(s)`},
		{"backtracking regex", `const a = 'a'.repeat(34) + '!', re = /^(a+)+(?=b)/;`, `for (;;) re.test(a)`},
		{"localeCompare", `const s = 'x'.repeat(` + s(1e8) + `), t = s + 'y';`, `s.localeCompare(t)`},
		{"toUpperCase", `const u = 'é'.repeat(` + s(5e7) + `);`, `u.toUpperCase()`},
		{"JSON.parse of a long string", `const j = '"' + 'x'.repeat(` + s(1e8) + `) + '"';`, `JSON.parse(j)`},
		{"join", `const a = Array(` + s(2e7) + `).fill(1);`, `a.join(',')`},
		{"sort without a comparator", `const a = Array.from({ length: 1e6 }, (_, i) => (i * 7919) % 1000003);`, `a.sort()`},
	}
}()

// A cancel (a Stop from another goroutine) ends each long native operation
// with the cancel error soon after, under budgets that would let it run.
func TestStopEndsLongNativeOperations(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under the race detector (operations of 10^8 characters): .ci/run runs it without -race")
	}
	for _, c := range longNativeOps {
		t.Run(c.name, func(t *testing.T) {
			l := vast()
			x, step := startUnder(t, c.setup+" ready(); "+c.op+"; 1", l, nil)
			require.True(t, step.Suspended(), "%v", step.Err)
			stop := NewStopper()
			stopped := make(chan time.Time, 1)
			go func() {
				time.Sleep(50 * time.Millisecond) // inside the operation
				stopped <- time.Now()
				stop.Stop(ErrCancelled)
			}()
			x, step = x.ResumeWith(stop, []Answer{{CallID: x.focus().ID}}, l)
			ended := time.Now()
			require.Nil(t, x)
			require.Equal(t, ErrCancelled, step.Err)
			latency := ended.Sub(<-stopped)
			require.Less(t, latency, interruptHang)
			t.Logf("%s: ended %v after Stop", c.op, latency)
		})
	}
}

// wall_time_ms ends each of them the same way.
func TestWallTimeEndsLongNativeOperations(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under the race detector (operations of 10^8 characters): .ci/run runs it without -race")
	}
	for _, c := range longNativeOps {
		t.Run(c.name, func(t *testing.T) {
			l := vast()
			x, step := startUnder(t, c.setup+" ready(); "+c.op+"; 1", l, nil)
			require.True(t, step.Suspended(), "%v", step.Err)
			l.WallTimeMS = 100
			began := time.Now()
			x, step = x.Resume(Payload{}, l)
			took := time.Since(began)
			require.Nil(t, x)
			require.Equal(t, ErrWallTime, step.Err)
			require.Less(t, took, 100*time.Millisecond+interruptHang)
			t.Logf("%s: wall_time_ms 100 ended the segment after %v", c.op, took)
		})
	}
}
