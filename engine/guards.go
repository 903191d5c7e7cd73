package engine

import (
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

// Built-ins account for themselves, inside goja (internal/goja/PATCHES.md,
// meter.go): their work is charged to the instruction budget, memory they
// are about to allocate is checked against the heap limit before it is
// taken, and recursion inside Go over nested values is bounded. The realm
// only adds what goja's own code does not know about: the cost of a
// promise job, and the regular-expression timeout of older programs. (A
// current program's backtracking regular expression is charged by its
// steps inside goja, with no wall-clock timeout: PATCHES.md, "RegExp".)

// MaxNativeDepth bounds the nesting a recursive built-in may walk
// (JSON.parse, JSON.stringify, join, toString, flat).
const MaxNativeDepth = 1000

// RegexpTimeout bounds one backtracking regular-expression match of a
// program of format version 1 or 2, which is charged by its span only, as
// its journals recorded: past it the match has done unbounded work and the
// execution fails with Limit: instruction budget exhausted (never a silent
// non-match). Current programs' matches are charged by their steps and
// have no timeout.
const RegexpTimeout = 100 * time.Millisecond

func init() {
	// Set for goja's patterns only: regexp2's own default, which every
	// user of regexp2 in the program reads, stays as it is.
	goja.MustardSetRegexpTimeout(RegexpTimeout)
}

// installGuards charges promise jobs scheduled through then/catch/finally,
// for programs of format version 1 or 2 (instrumented), which pay for a job
// when it is scheduled. Current programs pay when it runs (realm.Job), so
// their realms keep the original methods, and Promise is only built when
// the guest first reaches it.
func (r *realm) installGuards() {
	rt := r.rt
	promise := rt.Get("Promise").ToObject(rt).Get("prototype").ToObject(rt)
	for _, m := range []string{"then", "catch", "finally"} {
		r.wrap(promise, m, r.guardJob)
	}
}

type wrapper func(orig goja.Callable) func(goja.FunctionCall) goja.Value

// wrap replaces obj[name] with a Go function of the same name and length.
func (r *realm) wrap(obj *goja.Object, name string, w wrapper) {
	orig, ok := goja.AssertFunction(obj.Get(name))
	if !ok {
		return
	}
	length := int(obj.Get(name).ToObject(r.rt).Get("length").ToInteger())
	fn := r.newFunction(name, length, w(orig))
	_ = obj.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// call invokes a wrapped original, re-throwing its exception unchanged.
func call(orig goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := orig(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

// fail ends the execution with a limit error once the native call returns
// (or at once, from inside a built-in that reports to the Meter).
func (x *Execution) fail(e *Error) goja.Value {
	x.realm.rt.Interrupt(e)
	return goja.Undefined()
}

func (r *realm) guardJob(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		r.x.spend(JobWeight)
		return call(orig, c.This, c.Arguments...)
	}
}
