package engine

import (
	"math/rand/v2"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

func init() {
	// Guests always see UTC, so that replay is identical on every
	// machine. Set for goja's local-time Date methods only: the process's
	// time.Local stays as it is for everything else in the program.
	goja.MustardSetLocalZone(time.UTC)
}

// lockdownSource runs in every realm before guest code. It removes eval and
// replaces every route to a Function constructor with one that throws, so
// no guest text escapes validation and metering. The stub keeps
// Function.prototype as its prototype, so `f instanceof Function` works.
const lockdownSource = `(function () {
  "use strict";
  var g = globalThis, dp = Object.defineProperty, gpo = Object.getPrototypeOf;
  function lock(proto, name) {
    var stub = function () { throw new TypeError("dynamic code evaluation is not available"); };
    dp(stub, "name", { value: name, configurable: true });
    dp(stub, "prototype", { value: proto, writable: false, enumerable: false, configurable: false });
    dp(proto, "constructor", { value: stub, writable: false, enumerable: false, configurable: false });
    return stub;
  }
  dp(g, "Function", { value: lock(Function.prototype, "Function"), writable: true, enumerable: false, configurable: true });
  lock(gpo(function* () {}), "GeneratorFunction");
  lock(gpo(async function () {}), "AsyncFunction");
  lock(gpo(async function* () {}), "AsyncGeneratorFunction");
  delete g.eval;
  delete g.GoError;
  return [Object.prototype, Array.prototype, Error, function (e) { throw e; }, Object.defineProperty];
})()`

// meterHandoff briefly holds the meter functions on globalThis while
// meterProgram binds them.
const meterHandoff = ReservedPrefix + "_handoff"

var meterProgram = goja.MustCompile(lockdownName, "const "+meterName+" = "+meterHandoff+"[0], "+
	jobMeterName+" = "+meterHandoff+"[1], "+allocName+" = "+meterHandoff+"[2]; delete globalThis."+meterHandoff+";", false)

// lockdownName names the lockdown program's frames, which tracebacks skip.
const lockdownName = "lockdown"

var lockdownProgram = goja.MustCompile(lockdownName, lockdownSource, true)

// realm is a fresh guest global environment and the intrinsics captured
// before any guest code could tamper with them.
type realm struct {
	x         *Execution // the execution this realm runs, set by activate
	rt        *goja.Runtime
	objProto  *goja.Object
	arrProto  *goja.Object
	errorCtor *goja.Object
	rethrow   goja.Callable // throws its argument: recovers an Error's own stack
	defProp   goja.Callable // Object.defineProperty, for keys Go strings cannot hold
}

// buildRealm prepares everything that does not depend on the execution:
// the lockdown, the meters and the guarded built-ins.
func buildRealm() (*realm, error) {
	rt := goja.New()
	rt.SetParserOptions(parser.WithDisableSourceMaps)
	v, err := rt.RunProgram(lockdownProgram)
	if err != nil {
		return nil, err
	}
	caps := v.(*goja.Object)
	r := &realm{rt: rt}
	rt.SetMeter(r)
	r.objProto = caps.Get("0").(*goja.Object)
	r.arrProto = caps.Get("1").(*goja.Object)
	r.errorCtor = caps.Get("2").(*goja.Object)
	r.rethrow, _ = goja.AssertFunction(caps.Get("3"))
	r.defProp, _ = goja.AssertFunction(caps.Get("4"))
	r.installGuards()
	// What the lockdown and the guards made is part of the realm: the heap
	// figure counts only what is added to it from here on.
	rt.MustardSealRealm()
	return r, nil
}

// installMeterCalls defines the functions that the metering calls inserted
// into a program of format version 1 or 2 call. They are global const
// bindings: guest code cannot reassign or shadow them, and they are not
// properties of globalThis. Current programs have no such calls (the
// interpreter meters them) and their realms no such names.
func (r *realm) installMeterCalls() error {
	rt := r.rt
	meters := rt.NewArray(r.newFunction(meterName, 0, r.tick), r.newFunction(jobMeterName, 0, r.tickJob), r.newFunction(allocName, 1, r.allocate))
	if err := rt.GlobalObject().Set(meterHandoff, meters); err != nil {
		return err
	}
	if _, err := rt.RunProgram(meterProgram); err != nil {
		return err
	}
	// The meters run as hook calls: the Go function, with no lookup and
	// no call frame (internal/goja/mustard_hooks.go).
	return rt.SetHooks(meterName, jobMeterName, allocName)
}

// activate binds a prepared realm to an execution.
func (r *realm) activate(x *Execution, seed uint64, clockMillis int64) error {
	r.x = x
	x.realm = r
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.rt.SetRandSource(rng.Float64)
	now := time.UnixMilli(clockMillis).UTC()
	r.rt.SetTimeSource(func() time.Time { return now })
	// Programs of format version 3 run each pattern on the linear-time
	// engine wherever its meaning allows (internal/goja/PATCHES.md);
	// older programs keep the engines they ran on, and so their journaled
	// charges and answers.
	r.rt.MustardSetLinearRegexp(x.cfg.Program.counted())
	switch p := x.cfg.Program; {
	case !p.counted():
		return r.installMeterCalls()
	case !p.unmetered:
		// The interpreter counts into the execution's own meter and takes
		// the slow path at the point the execution schedules; BigInt
		// operations are charged by operand size (older programs replay
		// with the readings they journaled, without those charges).
		r.rt.SetStepMeter(r, &x.meter.Instructions, &x.heap.due)
		r.rt.MustardMeterOperands(true)
		r.rt.MustardSetCompareUnits(sortCompareUnits)
	}
	return nil
}

// sortCompareUnits is what one comparison of sort without a comparator
// costs in current programs: a quarter of an instruction, so that sorting
// 100,000 numbers or short strings (1.7 million comparisons, about 0.35 s
// here) fits the default budget with room to spare (docs/limits.md).
// Older programs keep the 32 units they were charged.
const sortCompareUnits = 16

// StepsDue is goja's StepMeter: the instruction count passed the point
// where the execution looks at its budget and heap.
func (r *realm) StepsDue() { r.x.slowPoint() }

// Allocation is goja's StepMeter: an object literal, an array literal or a
// new expression is about to create an object.
func (r *realm) Allocation() { r.x.allocation() }

// Job is goja's StepMeter: a promise job (an await's continuation, a
// then/catch/finally callback) is about to run.
func (r *realm) Job() { r.x.spend(JobWeight) }

// defineFunction installs a Go function under an explicit name, so no Go
// symbol name is visible to the guest.
func (r *realm) newFunction(name string, length int, fn func(goja.FunctionCall) goja.Value) *goja.Object {
	f := r.rt.ToValue(fn).(*goja.Object)
	_ = f.DefineDataProperty("name", r.rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = f.DefineDataProperty("length", r.rt.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return f
}
