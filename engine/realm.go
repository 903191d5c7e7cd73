package engine

import (
	"fmt"
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
// that throws, so no guest text escapes validation and metering. A stub
// has Function.prototype as its prototype, so `f instanceof Function`
// works. The program only makes the stubs (their text and their frames'
// name and position are what guests see) and a function that rethrows;
// it reads no global, so it makes no built-in the guest may never use.
const lockdownSource = `(function () {
  "use strict";
  // Each stub's text, name and line are what a guest sees of it.
  function lock() {
    var stub = function () { throw new TypeError("dynamic code evaluation is not available"); };
    return stub;
  }
  return [function (e) { throw e; }, lock(), lock(), lock(), lock()];
})()`

// stubNames are the names lockDown gives the lockdown program's stubs, in
// the order it makes them.
var stubNames = [...]string{"Function", "GeneratorFunction", "AsyncFunction", "AsyncGeneratorFunction"}

// lockDown installs the stubs the lockdown program made, each under its
// name (goja's MustardStubConstructors): the global Function and
// Function.prototype's constructor, then the constructors of the
// generator, async and async generator function prototypes, linked to
// them when the realm first makes them. A realm whose guest writes no
// generator makes none of those prototypes, their built-in constructors or
// the generator prototypes (about 9 KiB a realm). It defines the names
// directly, in the order and with the attributes Object.defineProperty
// gave them, and deletes eval and GoError without making them first.
func lockDown(rt *goja.Runtime, caps *goja.Object) error {
	var stubs [len(stubNames)]*goja.Object
	if n := caps.Get("length").ToInteger(); n != 1+int64(len(stubs)) {
		return fmt.Errorf("lockdown made %d values, want %d", n, 1+len(stubs))
	}
	for i, name := range stubNames {
		stubs[i] = caps.Get(strconv.Itoa(1 + i)).(*goja.Object)
		if err := stubs[i].DefineDataProperty("name", rt.MustardString(name), goja.FLAG_NOT_SET, goja.FLAG_TRUE, goja.FLAG_NOT_SET); err != nil {
			return err
		}
	}
	if err := rt.MustardStubConstructors(stubs[0], stubs[1], stubs[2], stubs[3]); err != nil {
		return err
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

// realm is a fresh guest global environment. The intrinsics it uses
// (Object.prototype, Array.prototype, Error) are goja's own, which guest
// code cannot replace.
type realm struct {
	x       *Execution // the execution this realm runs, set by activate
	rt      *goja.Runtime
	rethrow goja.Callable // throws its argument: recovers an Error's own stack
	pcg     *rand.PCG     // Math.random's generator, whose state a checkpoint keeps
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
	r.rethrow, _ = goja.AssertFunction(caps.Get("0"))
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
	r.pcg = rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	r.rt.SetRandSource(rand.New(r.pcg).Float64)
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
