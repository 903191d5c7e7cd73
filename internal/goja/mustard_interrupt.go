package goja

import (
	"sync/atomic"
)

// Interrupts inside native operations that cannot check for one themselves
// (a mustard-sidecar addition; see PATCHES.md).
//
// Most long native loops check for an interrupt as they go (tick, poll,
// work). A few operations are one call into a library that takes no
// interrupt: a math/big addition of two 128 MiB numbers, a regexp2 match, a
// collator comparison. offload runs such a call on a goroutine of its own
// and waits for it or for an Interrupt, whichever comes first: interrupted,
// the execution ends at once with the interrupt and the call's result, when
// it comes, is dropped. Only calls whose own duration is bounded (by their
// operands' size, or regexp2's match timeout) are offloaded, so what an
// interrupted call goes on spending is bounded too.

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
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	select {
	case p := <-done:
		if p != nil {
			panic(p)
		}
	case <-r.vm.interruptWake():
		r.vm.checkInterrupt()
		// The interrupt was cleared before it could be raised (only an
		// embedder's ClearInterrupt does that): wait for f after all.
		if p := <-done; p != nil {
			panic(p)
		}
	}
}
