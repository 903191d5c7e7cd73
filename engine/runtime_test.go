package engine

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// settleGoroutines polls until at most n goroutines run; the deadline only
// catches a goroutine that never ends.
func settleGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > n {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, want at most %d:\n%s", got, n, buf[:runtime.Stack(buf, true)])
	}
}

// After Close no goroutine of a Runtime remains: not the realm pre-builder,
// not the heap watchdog (awake or asleep), whatever the executions did.
func TestRuntimeCloseEndsItsGoroutines(t *testing.T) {
	start := func(rt *Runtime, src string, limits policy.Limits) (*Execution, Step) {
		p, err := Compile(src)
		require.NoError(t, err)
		h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"fetch"}, Seed: 1, ClockMillis: 1}
		return rt.Start(Config{Program: p, Header: h, Limits: limits})
	}
	big := policy.DefaultLimits()
	big.HeapLimitBytes = 64 << 20
	big.InstructionBudget = 1 << 40
	for _, c := range []struct {
		name string
		run  func(rt *Runtime)
	}{
		{"unused", func(*Runtime) {}},
		{"warmed, unused", func(rt *Runtime) { rt.Warm(); rt.Warm() }},
		{"completed", func(rt *Runtime) {
			_, step := start(rt, "1 + 1", policy.DefaultLimits())
			require.True(t, step.Done)
		}},
		// Long enough for the watchdog to sample it many times.
		{"watched loop", func(rt *Runtime) {
			_, step := start(rt, "let a = []; for (let i = 0; i < 300000; i++) a.push('x' + i); a.length", big)
			require.NoError(t, step.Err)
		}},
		{"heap limit", func(rt *Runtime) {
			_, step := start(rt, "let s = 'x'; for(;;) s += s", policy.DefaultLimits())
			require.Equal(t, ErrHeapLimit, step.Err)
		}},
		{"parked then abandoned", func(rt *Runtime) {
			x, step := start(rt, "fetch(1)", policy.DefaultLimits())
			require.True(t, step.Suspended())
			x.Abandon()
		}},
		// An abandoned execution unwinds without reaching its finally
		// block's call; if it did reach it, that call must not park.
		{"abandoned inside try/finally", func(rt *Runtime) {
			x, step := start(rt, "try { fetch(1) } finally { fetch(2) }", policy.DefaultLimits())
			require.True(t, step.Suspended())
			x.Abandon()
			x.Abandon() // a second Abandon is harmless
		}},
		// Parked with calls queued by async code: the goroutine waits
		// outside any guest code, in the loop that runs promise jobs.
		{"parked on queued async calls, then abandoned", func(rt *Runtime) {
			x, step := start(rt, "(async () => Promise.all([fetch(1), fetch(2)]))()", policy.DefaultLimits())
			require.True(t, step.Suspended())
			require.Len(t, step.Calls, 2)
			x, step = x.ResumeWith(nil, []Answer{{CallID: 2, Payload: Payload{Outcome: snapshot.Outcome{Value: value.Number(2)}}}}, policy.DefaultLimits())
			require.True(t, step.Suspended())
			x.Abandon()
		}},
		{"synchronous call with async calls queued, abandoned", func(rt *Runtime) {
			x, step := start(rt, "(async () => fetch(1))(); fetch(2)", policy.DefaultLimits())
			require.True(t, step.Suspended())
			require.True(t, step.Calls[1].Sync)
			x.Abandon()
		}},
		{"resumed to completion", func(rt *Runtime) {
			x, step := start(rt, "let n = 0; for (let i = 0; i < 3; i++) n += fetch(i); n", policy.DefaultLimits())
			for step.Suspended() {
				x, step = x.Resume(Payload{Outcome: snapshot.Outcome{Value: value.Number(2)}}, policy.DefaultLimits())
			}
			require.NoError(t, step.Err)
			require.Equal(t, value.Number(6), step.Value)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			rt := NewRuntime()
			c.run(rt)
			rt.Close()
			settleGoroutines(t, base)
			rt.Close() // a second Close is harmless

			_, step := start(rt, "1", policy.DefaultLimits())
			require.Equal(t, errClosed, step.Err, "a closed Runtime starts nothing")
			settleGoroutines(t, base)
		})
	}
}
