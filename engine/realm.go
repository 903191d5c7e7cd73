package engine

import (
	"math/rand/v2"
	"strconv"
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

// lockdownSource runs in every realm before guest code. With lockDown, it
// removes eval and replaces every route to a Function constructor with one
// that throws, so no guest text escapes validation and metering. The stub
// keeps Function.prototype as its prototype, so `f instanceof Function`
// works. The program only makes the stubs (their text and their frames'
// name and position are what guests see); lockDown installs them.
const lockdownSource = `(function () {
  "use strict";
  var g = globalThis, dp = Object.defineProperty, gpo = Object.getPrototypeOf;
  function lock(proto, name) {
    var stub = function () { throw new TypeError("dynamic code evaluation is not available"); };
    return [proto, stub, name];
  }
  return [Object.prototype, Array.prototype, Error, function (e) { throw e; }, dp,
    lock(Function.prototype, "Function"),
    lock(gpo(function* () {}), "GeneratorFunction"),
    lock(gpo(async function () {}), "AsyncFunction"),
    lock(gpo(async function* () {}), "AsyncGeneratorFunction")];
})()`

// lockdownCaptured is how many leading elements of the lockdown program's
// result are intrinsics the realm keeps; the rest are [prototype, stub,
// name] triples that lockDown installs.
const lockdownCaptured = 5

// lockDown installs the stubs the lockdown program made: each becomes its
// prototype's constructor (and the first the global Function), and each
// prototype its stub's prototype. It defines the properties directly, in
// the order and with the attributes Object.defineProperty gave them,
// without a descriptor object per property, and deletes eval and GoError
// without making them first.
func lockDown(rt *goja.Runtime, caps *goja.Object) error {
	g := rt.GlobalObject()
	n := int(caps.Get("length").ToInteger())
	var fn *goja.Object
	for i := lockdownCaptured; i < n; i++ {
		t := caps.Get(strconv.Itoa(i)).(*goja.Object)
		proto := t.Get("0").(*goja.Object)
		stub := t.Get("1").(*goja.Object)
		if err := stub.DefineDataProperty("name", t.Get("2"), goja.FLAG_NOT_SET, goja.FLAG_TRUE, goja.FLAG_NOT_SET); err != nil {
			return err
		}
		if err := stub.DefineDataProperty("prototype", proto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
		if err := proto.DefineDataProperty("constructor", stub, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
		if fn == nil {
			fn = stub
			if err := g.DefineDataProperty("Function", fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
				return err
			}
		}
	}
	return rt.MustardDeleteGlobals("eval", "GoError")
}

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
	if err := lockDown(rt, caps); err != nil {
		return nil, err
	}
	r := &realm{rt: rt}
	rt.SetMeter(r)
	r.objProto = caps.Get("0").(*goja.Object)
	r.arrProto = caps.Get("1").(*goja.Object)
	r.errorCtor = caps.Get("2").(*goja.Object)
	r.rethrow, _ = goja.AssertFunction(caps.Get("3"))
	r.defProp, _ = goja.AssertFunction(caps.Get("4"))
	rt.SetMaxNativeDepth(MaxNativeDepth)
	// What the lockdown made is part of the realm: the heap
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
		// The guards are part of the realm, as the lockdown is: sealed
		// again, so the heap figure does not count them as the guest's.
		r.installGuards()
		r.rt.MustardSealRealm()
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
	return r.rt.MustardNewNativeFunc(fn, name, length)
}
