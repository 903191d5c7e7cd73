package goja

import "errors"

// ErrNativeDepth is the value of the *InterruptedError that ends an
// execution when a built-in recursing inside Go over nested values
// (JSON.parse, JSON.stringify, Array.prototype.join, ...) goes deeper than
// Runtime.SetMaxNativeDepth allows (a mustard-sidecar addition; see
// PATCHES.md). Such recursion runs no guest code between levels, so the
// call-stack limit never sees it, and a deep enough value would overflow
// the Go stack, which is fatal.
var ErrNativeDepth = errors.New("native nesting limit exceeded")

// nativeDepth is the Runtime's state for recursive built-ins.
type nativeDepth struct {
	max   int // 0: unbounded
	depth int // levels entered and not yet left
	steps int // steps of recursive built-ins, for interrupt checks
}

// SetMaxNativeDepth bounds how deep built-ins that recurse inside Go over
// nested values may go: n levels (0, the default: unbounded, as upstream).
// Past it the call ends with an *InterruptedError whose value is
// ErrNativeDepth, which guest code cannot catch.
func (r *Runtime) SetMaxNativeDepth(n int) {
	r.native.max = max(n, 0)
}

// enterNative enters one level of a recursive built-in; the caller must
// `defer r.leaveNative()` right after it. Past the bound it ends the
// execution (before counting the level, so nothing is left to undo).
func (r *Runtime) enterNative() {
	if r.native.max > 0 && r.native.depth >= r.native.max {
		r.nativeDepthExceeded()
	}
	r.native.depth++
}

// leaveNative leaves a level entered with enterNative.
func (r *Runtime) leaveNative() {
	r.native.depth--
}

// nativeDepthExceeded ends the execution with ErrNativeDepth, as an
// interrupt would.
func (r *Runtime) nativeDepthExceeded() {
	v := &InterruptedError{iface: ErrNativeDepth}
	v.stack = r.vm.captureStack(nil, 0)
	panic(v)
}

// step counts one step (a value visited) of a recursive built-in whose
// work was already reported, so that an Interrupt stops it within
// workEvery steps.
func (r *Runtime) step() {
	r.native.steps++
	r.poll(r.native.steps)
}
