package engine

import (
	"runtime"
	"runtime/metrics"
	"sync"
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

var heapMetric = "/memory/classes/heap/objects:bytes"

// segment is one running execution segment under watch.
type segment struct {
	base    uint64 // heap bytes when the segment began
	trigger uint64 // heap bytes at which to collect and look again
}

type heapWatch struct {
	mu      sync.Mutex
	running map[*Execution]*segment
	wake    chan struct{}
	once    sync.Once
}

var watch = &heapWatch{running: map[*Execution]*segment{}, wake: make(chan struct{}, 1)}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// enter registers a running segment of x.
func (w *heapWatch) enter(x *Execution) {
	w.once.Do(func() { go w.loop() })
	base := heapBytes()
	w.mu.Lock()
	w.running[x] = &segment{base: base, trigger: base + x.heapLimit.Load()}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// leave ends the segment.
func (w *heapWatch) leave(x *Execution) {
	w.mu.Lock()
	delete(w.running, x)
	w.mu.Unlock()
}

func (w *heapWatch) loop() {
	t := time.NewTicker(heapPollInterval)
	defer t.Stop()
	for {
		w.mu.Lock()
		idle := len(w.running) == 0
		w.mu.Unlock()
		if idle {
			<-w.wake
			continue
		}
		<-t.C
		w.check()
	}
}

func (w *heapWatch) check() {
	now := heapBytes()
	w.mu.Lock()
	due := false
	for _, s := range w.running {
		due = due || now > s.trigger
	}
	w.mu.Unlock()
	if !due {
		return
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
}
