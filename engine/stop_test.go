package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/require"
)

// stopHang bounds how long a stopped or timed-out segment may take to end:
// about ten times what a quiet machine needs, and far less than the guests
// below would run for if nothing stopped them (for(;;) under 10^15
// instructions; a comparator sort of 10^6 numbers, several seconds).
const stopHang = 2 * time.Second

// endless limits: budgets no test comes near, room for 10^6 numbers.
func endless() policy.Limits {
	l := policy.DefaultLimits()
	l.InstructionBudget = 1_000_000_000_000_000
	l.AllocationBudget = 1_000_000_000_000
	l.HeapLimitBytes = 512 << 20
	return l
}

// startUnder starts src with the capability "ready" under l.
func startUnder(t *testing.T, src string, l policy.Limits, stop *Stopper) (*Execution, Step) {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"ready"}, Seed: 1, ClockMillis: 1}
	return testRuntime.Start(Config{Program: p, Header: h, Limits: l, Stop: stop})
}

// sortAfterReady builds 10^6 numbers (10^5 under the race detector, which
// makes building them take seconds), suspends on ready(), then sorts them
// with a comparator: resumed, the segment is inside Array.prototype.sort
// from its first instruction, for seconds.
var sortAfterReady = fmt.Sprintf(`const a = []; for (let i = 0; i < %d; i++) a.push((i * 7919) %% 1000003);
ready(); a.sort((x, y) => x - y); a.length;`, map[bool]int{false: 1_000_000, true: 100_000}[raceEnabled])

func TestWallTimeEndsTightLoop(t *testing.T) {
	l := endless()
	l.WallTimeMS = 50
	began := time.Now()
	x, step := startUnder(t, `for(;;){}`, l, nil)
	took := time.Since(began)
	require.Nil(t, x)
	require.Equal(t, ErrWallTime, step.Err)
	require.GreaterOrEqual(t, took, 50*time.Millisecond, "ended before its wall time")
	require.Less(t, took, 50*time.Millisecond+stopHang)
	t.Logf("wall_time_ms 50: for(;;){} ended after %v", took)
}

func TestWallTimeEndsLongBuiltin(t *testing.T) {
	l := endless()
	x, step := startUnder(t, sortAfterReady, l, nil)
	require.True(t, step.Suspended(), "%v", step.Err)
	l.WallTimeMS = 100
	began := time.Now()
	x, step = x.Resume(Payload{}, l)
	took := time.Since(began)
	require.Nil(t, x)
	require.Equal(t, ErrWallTime, step.Err)
	require.Less(t, took, 100*time.Millisecond+stopHang)
	t.Logf("wall_time_ms 100: the sort ended after %v", took)
}

// The limit bounds each segment, not the execution: time parked at a
// capability call does not count.
func TestWallTimeIsPerSegment(t *testing.T) {
	l := policy.DefaultLimits()
	l.WallTimeMS = 100
	x, step := startUnder(t, `ready(); ready(); 7`, l, nil)
	require.True(t, step.Suspended(), "%v", step.Err)
	time.Sleep(150 * time.Millisecond) // the host takes its time to answer
	x, step = x.Resume(Payload{}, l)
	require.True(t, step.Suspended(), "%v", step.Err)
	time.Sleep(150 * time.Millisecond)
	x, step = x.Resume(Payload{}, l)
	require.Nil(t, x)
	require.NoError(t, step.Err)
	require.Equal(t, value.Number(7), step.Value)
}

func TestStopperEndsRunningSegment(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"tight loop", `ready(); for(;;){}`},
		{"comparator sort", sortAfterReady},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := endless()
			x, step := startUnder(t, tc.src, l, nil)
			require.True(t, step.Suspended(), "%v", step.Err)
			stop := NewStopper()
			stopped := make(chan time.Time, 1)
			go func() {
				// Let the segment get going; when the Stop lands does not
				// change what the test asserts.
				time.Sleep(50 * time.Millisecond)
				stopped <- time.Now()
				stop.Stop(ErrCancelled)
			}()
			x, step = x.ResumeWith(stop, []Answer{{CallID: x.focus().ID}}, l)
			ended := time.Now()
			require.Nil(t, x)
			require.Equal(t, ErrCancelled, step.Err)
			latency := ended.Sub(<-stopped)
			require.Less(t, latency, stopHang)
			t.Logf("ended %v after Stop", latency)
		})
	}
}

// A Stopper stopped before its segment begins ends it at the first
// instruction: the capability call that would come first never happens.
func TestStopperStoppedBeforeStart(t *testing.T) {
	stop := NewStopper()
	stop.Stop(ErrCancelled)
	stop.Stop(ErrWallTime) // only the first counts
	x, step := startUnder(t, `ready(); 1`, policy.DefaultLimits(), stop)
	require.Nil(t, x)
	require.Equal(t, ErrCancelled, step.Err)
}

// A Stop that comes after its segment ended reaches nothing: not the
// parked execution, not its next segment.
func TestStopperAfterSegmentReachesNothing(t *testing.T) {
	stop := NewStopper()
	x, step := startUnder(t, `ready(); let s = 0; for (let i = 0; i < 1000; i++) s += i; s`, policy.DefaultLimits(), stop)
	require.True(t, step.Suspended(), "%v", step.Err)
	stop.Stop(ErrCancelled)
	require.Equal(t, ErrCancelled, stop.Stopped())
	x, step = x.ResumeWith(NewStopper(), []Answer{{CallID: x.focus().ID}}, policy.DefaultLimits())
	require.Nil(t, x)
	require.NoError(t, step.Err)
	require.Equal(t, value.Number(499500), step.Value)
}

// Stops racing with segments at random moments: each segment ends either
// as it would have or with the Stopper's error, and a Stop never reaches a
// later segment. Under -race this also checks the locking.
func TestStopperRacesWithSegments(t *testing.T) {
	rounds := 200
	if raceEnabled {
		rounds = 50
	}
	const src = `let n = 0; for (let k = 0; k < 4; k++) { for (let i = 0; i < 2000; i++) n += i; ready(n); } n`
	cancelled := 0
	defer func() { t.Logf("%d of %d first segments stopped", cancelled, rounds) }()
	for round := 0; round < rounds; round++ {
		stop := NewStopper()
		go func(d time.Duration) {
			time.Sleep(d)
			stop.Stop(ErrCancelled)
		}(time.Duration(rand.IntN(400)) * time.Microsecond)
		x, step := startUnder(t, src, policy.DefaultLimits(), stop)
		for step.Suspended() {
			// Each resume's own Stopper is never stopped: nothing may
			// end these segments.
			x, step = x.ResumeWith(NewStopper(), []Answer{{CallID: x.focus().ID}}, policy.DefaultLimits())
			require.NoError(t, step.Err, "round %d: a stop reached a later segment", round)
		}
		if step.Err != nil {
			require.Equal(t, ErrCancelled, step.Err, "round %d", round)
			cancelled++
			continue
		}
		require.Equal(t, value.Number(4*1999000), step.Value)
	}
}
