package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// Runtime owns what the executions of one host share: the goroutine that
// prepares guest realms ahead of time and the heap watchdog. A Session holds
// one; after Close no goroutine of it remains. Parked executions are not the
// Runtime's: whoever holds them abandons them before closing it.
type Runtime struct {
	realms realmPool
	stop   chan struct{} // closed by Close
	wg     sync.WaitGroup

	startOnce sync.Once
	closeOnce sync.Once
	closed    atomic.Bool

	watch heapWatch
}

// realmsAhead is how many realms are kept ready: building one costs far
// more than running a short program, and every start needs a fresh one.
const realmsAhead = 2

// NewRuntime returns a Runtime; its goroutines start with the first
// execution.
func NewRuntime() *Runtime {
	return &Runtime{
		realms: realmPool{wake: make(chan struct{}, 1), pollMin: realmPollMin, pollMax: realmPollMax, dozeAfter: realmDozeAfter},
		stop:   make(chan struct{}),
		watch:  heapWatch{wake: make(chan struct{}, 1)},
	}
}

// errClosed answers a start on a closed Runtime.
var errClosed = &Error{Kind: KindRuntime, Message: "the engine is shut down"}

// Start runs cfg until its first suspension, completion or failure. The
// returned Execution is nil unless the step is a suspension.
func (rt *Runtime) Start(cfg Config) (*Execution, Step) {
	if rt.closed.Load() {
		return nil, Step{Err: errClosed}
	}
	rt.Warm()
	return start(rt, cfg)
}

// Warm starts preparing realms (and the heap watchdog) ahead of the first
// Start, so that it finds a realm ready instead of building one: a host
// that compiles first pays for the realm during its compile. It is cheap to
// call again, and a no-op on a closed Runtime.
func (rt *Runtime) Warm() {
	rt.startOnce.Do(func() {
		if rt.closed.Load() {
			return
		}
		rt.wg.Add(2)
		go rt.prepareRealms()
		go rt.watchHeap()
	})
}

// Close stops the Runtime's goroutines and waits for them to end. It is
// safe to call more than once.
func (rt *Runtime) Close() {
	rt.closeOnce.Do(func() {
		rt.closed.Store(true)
		close(rt.stop)
		rt.wg.Wait()
	})
}

// realmPool holds the realms prepared ahead. A start takes one without
// waking anything: the goroutine that prepares them looks for room on a
// timer of its own while starts come (every realmPollMin to realmPollMax),
// and sleeps only after realmDozeAfter without one. A start that finds it
// asleep wakes it. With a channel, every start readied the blocked
// preparer, and readying a goroutine wakes an idle thread: tens of
// microseconds of every start on a virtual machine, on the start's own
// thread.
type realmPool struct {
	mu     sync.Mutex
	ready  []*realm
	taken  atomic.Uint64 // realms taken (or missed) so far: the preparer's sign of demand
	dozing atomic.Bool
	wake   chan struct{}

	pollMin, pollMax, dozeAfter time.Duration // as the variables below were when it was made
}

// The preparer's timer: the first look 100 µs after the pool filled, each
// next one twice as late up to 5 ms, and asleep after a second without a
// start (variables for the tests, read when a Runtime is made). A burst
// of starts faster than that finds the pool empty and builds its realm
// itself, which costs a start less than the wake-up did
// (BenchmarkBuildRealm).
var (
	realmPollMin   = 100 * time.Microsecond
	realmPollMax   = 5 * time.Millisecond
	realmDozeAfter = time.Second
)

func (p *realmPool) full() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready) >= realmsAhead
}

func (p *realmPool) put(r *realm) {
	p.mu.Lock()
	p.ready = append(p.ready, r)
	p.mu.Unlock()
}

// take returns a prepared realm, nil if none is ready, and lets the
// preparer know.
func (p *realmPool) take() *realm {
	var r *realm
	p.mu.Lock()
	if n := len(p.ready); n > 0 {
		r = p.ready[n-1]
		p.ready[n-1] = nil
		p.ready = p.ready[:n-1]
	}
	p.mu.Unlock()
	p.taken.Add(1)
	if p.dozing.CompareAndSwap(true, false) {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	return r
}

// prepareRealms keeps realmsAhead realms ready until Close.
func (rt *Runtime) prepareRealms() {
	defer rt.wg.Done()
	p := &rt.realms
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		if !p.full() {
			r, err := buildRealm()
			if err != nil {
				return
			}
			p.put(r)
			continue
		}
		if !rt.awaitTake(t) {
			return
		}
	}
}

// awaitTake waits until a realm has been taken from a full pool; false
// once the Runtime closes.
func (rt *Runtime) awaitTake(t *time.Timer) bool {
	p := &rt.realms
	seen := p.taken.Load()
	interval, waited := p.pollMin, time.Duration(0)
	for p.taken.Load() == seen {
		if waited >= p.dozeAfter {
			// Asleep until a start: it sees dozing and sends a wake.
			p.dozing.Store(true)
			if p.taken.Load() != seen {
				p.dozing.Store(false)
				return true
			}
			select {
			case <-p.wake:
			case <-rt.stop:
				return false
			}
			return true
		}
		t.Reset(interval)
		select {
		case <-t.C:
		case <-rt.stop:
			return false
		}
		waited += interval
		interval = min(2*interval, p.pollMax)
	}
	return true
}

// newRealm returns a prepared realm, building one now if none is ready.
func (rt *Runtime) newRealm() (*realm, error) {
	if r := rt.realms.take(); r != nil {
		return r, nil
	}
	return buildRealm()
}
