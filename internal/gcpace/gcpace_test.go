package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, MaxPercent}, {1 << 20, MaxPercent}, {8 << 20, MaxPercent}, {12 << 20, 266},
		{16 << 20, 200}, {32 << 20, MinPercent}, {1 << 30, MinPercent},
	} {
		if got := Percent(c.live); got != c.want {
			t.Errorf("Percent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitPace collects until the pacer has set want, or fails after ten
// seconds (the finalizer that sets it runs after a collection, on its
// own goroutine).
func waitPace(t *testing.T, want uint64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		runtime.GC()
		if gogc() == want {
			return
		}
	}
	t.Fatalf("the pace stayed %d, want %d", gogc(), want)
}

var held []byte

// The pace follows the live heap each collection leaves: Go's default
// while 64 MiB are held, the generous pace once they are let go, and it
// stays where it was after Stop.
func TestPaceFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	Start()
	defer Stop()
	waitPace(t, MaxPercent)
	held = make([]byte, 64<<20) // counted live, never touched
	waitPace(t, MinPercent)
	held = nil
	waitPace(t, MaxPercent)
	Stop()
	held = make([]byte, 64<<20)
	for range 3 {
		runtime.GC()
	}
	if p := gogc(); p != MaxPercent {
		t.Fatalf("the pace changed to %d after Stop", p)
	}
	held = nil
}
