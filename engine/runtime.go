package engine

import (
	"sync"
	"sync/atomic"
)

// Runtime owns what the executions of one host share: the goroutine that
// prepares guest realms ahead of time and the heap watchdog. A Session holds
// one; after Close no goroutine of it remains. Parked executions are not the
// Runtime's: whoever holds them abandons them before closing it.
type Runtime struct {
	realms chan *realm   // realms prepared ahead
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
		realms: make(chan *realm, realmsAhead),
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

// prepareRealms keeps realmsAhead realms ready until Close.
func (rt *Runtime) prepareRealms() {
	defer rt.wg.Done()
	for {
		r, err := buildRealm()
		if err != nil {
			return
		}
		select {
		case rt.realms <- r:
		case <-rt.stop:
			return
		}
	}
}

// newRealm returns a prepared realm, building one now if none is ready.
func (rt *Runtime) newRealm() (*realm, error) {
	select {
	case r := <-rt.realms:
		return r, nil
	default:
		return buildRealm()
	}
}
