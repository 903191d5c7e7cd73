package goja

import (
	"sync"
	"sync/atomic"

	"github.com/dlclark/regexp2/v2"
)

// Interrupts inside native operations that cannot check for one themselves
// (a mustard-sidecar addition; see PATCHES.md).
//
// Most long native loops check for an interrupt as they go (tick, poll,
// work). A few operations are one call into a library that takes no
// interrupt: a math/big addition of two 128 MiB numbers, a regexp2 match.
// offload runs such a call on another goroutine and waits for it or for an
// Interrupt, whichever comes first: interrupted, the execution ends at once
// with the interrupt, and the call's result, when it comes, is dropped.
// Only calls whose duration is bounded (by their operands' size, which
// the built-in charged before the call, or regexp2's match timeout) are
// offloaded, so what an interrupted call goes on spending is bounded too.

// interruptWake returns a channel closed by the next Interrupt, or a closed
// one if the vm is interrupted already.
func (vm *vm) interruptWake() <-chan struct{} {
	vm.interruptLock.Lock()
	defer vm.interruptLock.Unlock()
	if atomic.LoadUint32(&vm.interrupted) != 0 {
		return closedWake
	}
	if vm.wake == nil {
		vm.wake = make(chan struct{})
	}
	return vm.wake
}

var closedWake = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// wakeWaiters is called by Interrupt, with interruptLock held.
func (vm *vm) wakeWaiters() {
	if vm.wake != nil {
		close(vm.wake)
		vm.wake = nil
	}
}

// offload runs f on another goroutine and returns when it has returned, or
// ends the running built-in with the interrupt as soon as one arrives. f
// must touch nothing that the execution may use after an interrupt (it
// reads its own operands and returns its result through its closure); a
// panic in f is raised again here.
func (r *Runtime) offload(f func()) {
	r.vm.checkInterrupt()
	w := getOffloadWorker()
	w.job <- f
	select {
	case p := <-w.done:
		putOffloadWorker(w)
		if p != nil {
			panic(p)
		}
	case <-r.vm.interruptWake():
		if atomic.LoadUint32(&r.vm.interrupted) != 0 {
			// The worker finishes f and returns itself to the pool.
			go func() {
				<-w.done
				putOffloadWorker(w)
			}()
			r.vm.checkInterrupt()
		}
		// The interrupt was cleared before it could be raised (only an
		// embedder's ClearInterrupt does that): wait for f after all.
		p := <-w.done
		putOffloadWorker(w)
		if p != nil {
			panic(p)
		}
	}
}

// offloadWorker is a goroutine that runs offloaded calls, one at a time;
// idle ones wait in a pool, so that an offloaded call costs two channel
// handoffs rather than a new goroutine.
type offloadWorker struct {
	job  chan func()
	done chan any
}

var offloadPool struct {
	sync.Mutex
	idle []*offloadWorker
}

func getOffloadWorker() *offloadWorker {
	offloadPool.Lock()
	if n := len(offloadPool.idle); n > 0 {
		w := offloadPool.idle[n-1]
		offloadPool.idle = offloadPool.idle[:n-1]
		offloadPool.Unlock()
		return w
	}
	offloadPool.Unlock()
	w := &offloadWorker{job: make(chan func()), done: make(chan any)}
	go w.run()
	return w
}

func putOffloadWorker(w *offloadWorker) {
	offloadPool.Lock()
	offloadPool.idle = append(offloadPool.idle, w)
	offloadPool.Unlock()
}

func (w *offloadWorker) run() {
	for f := range w.job {
		w.done <- w.call(f)
	}
}

func (w *offloadWorker) call(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// regexp2Scan runs a regexp2 search (bounded by its match timeout, so
// that an interrupted one goes on for at most that long) offloaded when a
// Meter is installed: a backtracking match is one call no interrupt
// reaches. Offloading costs about a microsecond a search. An interrupted
// search may still be reading w's cached runes, which it may also have
// changed (a search from inside a surrogate pair does), so the cache is
// dropped.
func (r *Runtime) regexp2Scan(w *regexp2Wrapper, f func() (*regexp2.Match, error)) (m *regexp2.Match, err error) {
	defer func() {
		if p := recover(); p != nil {
			w.cache = nil
			panic(p)
		}
	}()
	if r.meter == nil {
		return f() // upstream's behaviour: in one call
	}
	r.offload(func() { m, err = f() })
	return
}
