package engine

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// The heap limit is enforced for allocations no pre-check can see (string
// concatenation in a loop, object graphs) by a watchdog that samples the
// process heap while an execution segment runs. goja has no per-VM heap
// figure; the sidecar runs one execution at a time, so the growth of the
// process heap since the segment began is that execution's. The check is
// approximate and time-based: it fires within about heapPollInterval of the
// growth passing the limit, after a forced collection confirms the memory
// is live.
const heapPollInterval = time.Millisecond

// hardFactor: growth past this many limits fails without confirming that
// the memory is live.
const hardFactor = 4

var heapMetric = "/memory/classes/heap/objects:bytes"

// segment is one running execution segment under watch.
type segment struct {
	fresh   bool   // not yet sampled: base is taken at the first tick
	base    uint64 // heap bytes when the segment was first sampled
	trigger uint64 // heap bytes at which to collect and look again
}

type heapWatch struct {
	mu       sync.Mutex
	running  map[*Execution]*segment
	wake     chan struct{}
	sleeping atomic.Bool
	once     sync.Once
}

// idleTicks is how long the watchdog keeps ticking with nothing running
// before it sleeps; while it ticks, starting a segment costs no wake-up.
const idleTicks = 100

var watch = &heapWatch{running: map[*Execution]*segment{}, wake: make(chan struct{}, 1)}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// enter registers a running segment of x. It is on the hot path of every
// resume, so it neither reads the heap nor wakes a ticking watchdog.
func (w *heapWatch) enter(x *Execution) {
	w.once.Do(func() { go w.loop() })
	w.mu.Lock()
	w.running[x] = &segment{fresh: true}
	w.mu.Unlock()
	if w.sleeping.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// finish ends the segment and reports whether it ended over its limit: a
// native call that allocated a lot just before the segment completed or
// suspended may have come after the last tick. Segments shorter than one
// tick (never sampled) are not checked.
func (w *heapWatch) finish(x *Execution) bool {
	w.mu.Lock()
	s := w.running[x]
	delete(w.running, x)
	w.mu.Unlock()
	if s == nil || s.fresh {
		return false
	}
	limit := x.heapLimit.Load()
	over := func() bool { now := heapBytes(); return now > s.base && now-s.base > limit }
	if !over() {
		return false
	}
	runtime.GC()
	return over()
}

func (w *heapWatch) loop() {
	t := time.NewTicker(heapPollInterval)
	defer t.Stop()
	idle := 0
	for {
		<-t.C
		if w.check() {
			idle = 0
			continue
		}
		if idle++; idle < idleTicks {
			continue
		}
		// Sleep; a segment registered after the flag is set sends a wake.
		w.sleeping.Store(true)
		w.mu.Lock()
		n := len(w.running)
		w.mu.Unlock()
		if n == 0 {
			<-w.wake
		}
		w.sleeping.Store(false)
		idle = 0
	}
}

// check samples the heap; it reports whether any segment is running.
func (w *heapWatch) check() bool {
	w.mu.Lock()
	n := len(w.running)
	w.mu.Unlock()
	if n == 0 {
		return false
	}
	now := heapBytes()
	w.mu.Lock()
	due := false
	for x, s := range w.running {
		if s.fresh {
			s.fresh, s.base, s.trigger = false, now, now+x.heapLimit.Load()
			continue
		}
		// Growth of several limits is over whatever part is garbage: stop
		// at once rather than wait for a collection.
		if limit := x.heapLimit.Load(); now > s.base && now-s.base > hardFactor*max(limit, 1<<20) {
			x.realm.rt.Interrupt(ErrHeapLimit)
			delete(w.running, x)
			continue
		}
		due = due || now > s.trigger
	}
	w.mu.Unlock()
	if !due {
		return true
	}
	// Garbage counts until it is collected; only live growth fails. After
	// a collection the next one waits for another limit's worth of growth,
	// so a program that makes much garbage does not collect continuously.
	runtime.GC()
	now = heapBytes()
	w.mu.Lock()
	for x, s := range w.running {
		limit := x.heapLimit.Load()
		if now > s.base && now-s.base > limit {
			x.realm.rt.Interrupt(ErrHeapLimit)
			delete(w.running, x)
			continue
		}
		s.trigger = max(now, s.base) + limit
	}
	w.mu.Unlock()
	return true
}
