package hosttest

import (
	"runtime"
	"testing"
	"time"
)

// NoLeaks fails the test if, once it and its cleanups are done, more
// goroutines run than before it started. The count may take a moment to
// settle (goroutines finishing their last instructions), hence the wait;
// the bound only catches a real leak.
func NoLeaks(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), before, buf[:n])
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// Eventually waits for cond, polling; the bound only catches hangs.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
