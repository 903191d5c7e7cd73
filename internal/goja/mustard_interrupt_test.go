package goja

import (
	"errors"
	"testing"
	"time"
)

// interruptibleRuntime is a Runtime as mustard-sidecar runs guests, with a
// Meter that never refuses: only an Interrupt ends what runs on it.
func interruptibleRuntime(t *testing.T, setup string) *Runtime {
	r, _ := newStrMetered()
	r.MustardMeterOperands(true)
	r.MustardSetLinearRegexp(true)
	if _, err := r.RunString(setup); err != nil {
		t.Fatal(err)
	}
	return r
}

// runInterrupted runs src on r, interrupts it after 100 ms from another
// goroutine, and requires that it ends with the interrupt; it logs how long
// after the Interrupt it ended, and fails only past a hang bound.
func runInterrupted(t *testing.T, r *Runtime, src string) {
	t.Helper()
	prg := MustCompile("", src, false)
	stopped := make(chan time.Time, 1)
	timer := time.AfterFunc(100*time.Millisecond, func() {
		stopped <- time.Now()
		r.Interrupt("stop")
	})
	defer timer.Stop()
	_, err := r.RunProgram(prg)
	ended := time.Now()
	r.ClearInterrupt()
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("%s: %v, want the interrupt", src, err)
	}
	latency := ended.Sub(<-stopped)
	t.Logf("%s: ended %v after Interrupt", src, latency)
	if latency > 5*time.Second {
		t.Errorf("%s: ended %v after Interrupt", src, latency)
	}
}

// Searches that are one call into Go's regexp or regexp2 end soon after an
// Interrupt: a large automaton through 4 MB (minutes), a backtracking
// pattern (hours). A regexp2 search runs on the execution's goroutine and
// its step hook ends it: nothing is left running once it has returned.
func TestRegexpSearchesAreInterruptible(t *testing.T) {
	defer MustardSetRegexpTimeout(time.Duration(mustardRegexpTimeout.Load()))
	MustardSetRegexpTimeout(time.Hour) // a metered search has no timeout: this one must not matter
	r := interruptibleRuntime(t, `var s = 'x'.repeat(4e6), u = 'é' + s, a = 'a'.repeat(34) + '!'`)
	for _, src := range []string{
		`/x{1000}y/.test(s)`,
		`/x{1000}y/g.exec(s)`,
		`s.replace(/x{1000}y/g, '')`,
		`/x{1000}y/.test(u)`,
		`/^(a+)+(?=b)/.test(a)`,
		`a.replace(/(a+)+\1b/g, '')`,
		`/(?:x|xx)+$/u.exec(u)`,
		`/(?=(a+))(a*)*b\1/.exec(a)`,
	} {
		runInterrupted(t, r, src)
		abandoned.Lock()
		n := abandoned.n
		abandoned.Unlock()
		if n != 0 {
			t.Errorf("%s: %d offloaded calls still running after the interrupt", src, n)
		}
	}
}

// String built-ins that are one library call (a collator comparison, case
// mapping, normalization) and JSON.parse's tokens end soon after an
// Interrupt, however long their strings.
func TestStringCallsAreInterruptible(t *testing.T) {
	if raceEnabled {
		t.Skip("strings of 10^7 characters take minutes to build under the race detector (the engine's tests stop these calls under it)")
	}
	// Each takes about a second here, and goes on for that long once
	// interrupted (what it was charged for).
	r := interruptibleRuntime(t, `var s = 'x'.repeat(5e7), t = s + 'y', e = 'é'.repeat(2e6), f = e + 'y', u = 'é'.repeat(3e7),
		j = '"' + 'x'.repeat(3e7) + '"', n = '[' + '1'.repeat(3e7) + ']'`)
	for _, src := range []string{
		`s.localeCompare(t)`,
		`e.localeCompare(f)`,
		`u.toUpperCase()`,
		`e.normalize('NFD')`,
		`JSON.parse(j)`,
		`JSON.parse(n)`,
	} {
		runInterrupted(t, r, src)
	}
}
