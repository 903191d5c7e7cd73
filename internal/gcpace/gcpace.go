// Package gcpace sets the Go collector's pace for a process that serves
// sessions: generous while the live heap is small, where collections are
// what a tool-calling workload pays for, and a bounded amount of garbage
// once the heap is large, where the pages the garbage takes are what it
// pays for.
//
// At a fixed GOGC of 400, a sidecar whose snapshot cache held 30 MB let
// 120 MB of garbage build up before collecting, and every page of it was
// touched for the first time on the way: on a VM where that costs ~11 µs
// a page, a 1 MB answer's round trip took 20 ms against 12-13 ms with the
// garbage bounded (bench/README.md, "The collector's pace"). At a small
// heap Go's default pace collected so often that a tool-calling workload
// took 10-15 % longer on one CPU.
package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

const (
	// MaxPercent is the pace while the live heap is small.
	MaxPercent = 400
	// MinPercent is Go's default pace, where a large heap ends up.
	MinPercent = 100
	// headroom is the garbage allowed between collections once the live
	// heap is past headroom/4 (8 MiB), until MinPercent allows more.
	headroom = 32 << 20
)

// Percent is the pace for a live heap of live bytes: the percentage that
// allows headroom bytes of garbage, within [MinPercent, MaxPercent].
func Percent(live uint64) int {
	if live == 0 {
		return MaxPercent
	}
	return int(min(max(headroom*100/live, MinPercent), MaxPercent))
}

var (
	mu      sync.Mutex
	running bool
	gen     uint64 // which Start the armed finalizer belongs to
	last    int    // the pace set last, 0 for none
)

// Start sets the pace for the heap as it is, and again after every
// collection, from the heap each one left live. It does nothing when
// already started. Stop ends it.
func Start() {
	mu.Lock()
	defer mu.Unlock()
	if running {
		return
	}
	running = true
	gen++
	last = 0
	adjustLocked()
	arm(gen)
}

// Stop stops setting the pace, leaving it where it is.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	running = false
}

// sentinel is an object made unreachable at once, whose finalizer runs
// after the next collection. It holds a pointer and is larger than the
// tiny allocator's blocks, so it is a heap object of its own.
type sentinel struct {
	_ *int
	_ [16]byte
}

// arm sets the pace again after the next collection and arms itself
// again, until Stop (or a later Start, whose own finalizer takes over).
func arm(g uint64) {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		mu.Lock()
		defer mu.Unlock()
		if !running || g != gen {
			return
		}
		adjustLocked()
		arm(g)
	})
}

func adjustLocked() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := Percent(s[0].Value.Uint64()); p != last {
		debug.SetGCPercent(p)
		last = p
	}
}
