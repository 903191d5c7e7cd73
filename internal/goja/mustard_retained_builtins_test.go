package goja

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// builtinSeeds makes the built-ins the runtime makes on first use, which no
// property path reaches: iterator, generator and async prototypes, the
// error constructors natives throw, the thrower of strict arguments.
const builtinSeeds = `
[][Symbol.iterator](); new Map()[Symbol.iterator](); new Set()[Symbol.iterator](); ''[Symbol.iterator]();
new Uint8Array(1).values(); 'a'.matchAll(/a/g).next();
(function* () {})().next(); (async function () {})(); (async function* () {})().next();
(async () => { for await (const x of [1]) {} })();
(function () { 'use strict'; try { arguments.callee } catch {} })();
try { null.x } catch {} try { undefinedName } catch {} try { new Array(-1) } catch {}
try { eval('(') } catch {} try { decodeURI('%') } catch {}
new WeakMap([[{}, 1]]); new WeakSet([{}]); new Map([[1, 1]]); new Set([1]);
new DataView(new ArrayBuffer(1)); new Proxy({}, {}); Reflect.ownKeys({});
[1, 2].toString(); [1].values(); 'x'.trimStart(); 'x'.trimEnd(); parseInt('1'); parseFloat('1');
Promise.resolve(1).then(() => 1);
new AggregateError([]); new EvalError(); new URIError(); new SyntaxError(); new RangeError();
1
`

// reachableBuiltins lists every object reachable from the realm's roots
// through own properties (values and accessors, string and symbol keyed)
// and prototypes: every built-in a guest can reach. Reading a property
// makes it, so the whole realm exists afterwards.
func reachableBuiltins(r *Runtime) []*Object {
	var all []*Object
	seen := map[*Object]bool{}
	var visit func(o *Object)
	visit = func(o *Object) {
		if o == nil || seen[o] {
			return
		}
		seen[o] = true
		all = append(all, o)
	}
	visit(r.globalObject)
	base := unsafe.Pointer(&r.global)
	for _, off := range intrinsicFields {
		visit(*(**Object)(unsafe.Add(base, off)))
	}
	for i := 0; i < len(all); i++ {
		o := all[i]
		for _, k := range o.self.keys(true, nil) {
			switch p := o.getOwnProp(k).(type) {
			case *Object:
				visit(p)
			case *valueProperty:
				if v, ok := p.value.(*Object); ok {
					visit(v)
				}
				visit(p.getterFunc)
				visit(p.setterFunc)
			}
		}
		visit(o.self.proto())
	}
	return all
}

// builtinWrites are the ways a guest writes to an object, each with its
// undoing: (o, v, k, s) => the write of v to o (k: the name of one of its
// own writable properties, s: a symbol). dp, gd, sp, gp, rsp, rd, rs and as
// are Object.defineProperty, getOwnPropertyDescriptor, setPrototypeOf,
// getPrototypeOf, Reflect.setPrototypeOf, defineProperty, set and
// Object.assign, read before any write replaces them.
var builtinWrites = []struct{ name, do, undo string }{
	{"assigned under a string key", "(o, v) => { o.mustardProbe = v }", "(o) => { delete o.mustardProbe }"},
	{"defined under a string key", "(o, v) => { dp(o, 'mustardProbe', {value: v, configurable: true}) }", "(o) => { delete o.mustardProbe }"},
	{"assigned under a symbol", "(o, v, k, s) => { o[s] = v }", "(o, v, k, s) => { delete o[s] }"},
	{"defined as an accessor", "(o, v) => { dp(o, 'mustardProbe', {get: () => v, configurable: true}) }", "(o) => { delete o.mustardProbe }"},
	{"by Object.assign", "(o, v) => { as(o, {mustardProbe: v}) }", "(o) => { delete o.mustardProbe }"},
	{"by Reflect.set", "(o, v, k, s) => { rs(o, s, v) }", "(o, v, k, s) => { delete o[s] }"},
	{"as its prototype", "(o, v) => { was = gp(o); if (!rsp(o, {v})) throw 'skip' }", "(o) => { sp(o, was) }"},
	{"in place of its own property", "(o, v, k) => { was = o[k]; if (!rs(o, k, v)) throw 'skip' }", "(o, v, k) => { o[k] = was }"},
	{"defined in place of its own property", "(o, v, k) => { was = gd(o, k); if (!rd(o, k, {value: v})) throw 'skip' }", "(o, v, k) => { dp(o, k, was) }"},
}

// forgetWrites makes every built-in unwritten again, as after the seal.
func forgetWrites(r *Runtime) {
	for _, o := range r.builtinsWritten {
		o.builtin &^= builtinWritten
	}
	r.builtinsWritten = r.builtinsWritten[:0]
	r.globalObject.wrote()
}

// Whatever is written to any built-in a guest can reach, in any of the
// ways a guest writes, counts.
func TestRetainedBytesSeesWhatIsAddedToEveryBuiltin(t *testing.T) {
	r := New()
	if _, err := r.RunString(builtinSeeds); err != nil {
		t.Fatal(err)
	}
	// Every built-in the runtime holds was made by the seeds.
	gt := reflect.TypeOf(global{})
	var missing []string
	var fieldNames func(t reflect.Type, at uintptr)
	fieldNames = func(t reflect.Type, at uintptr) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(stash{}) {
				fieldNames(f.Type, at+f.Offset)
				continue
			}
			if f.Type == reflect.TypeOf((*Object)(nil)) && *(**Object)(unsafe.Add(unsafe.Pointer(&r.global), at+f.Offset)) == nil {
				missing = append(missing, f.Name)
			}
		}
	}
	builtins := reachableBuiltins(r)
	fieldNames(gt, 0)
	if len(missing) > 0 {
		t.Errorf("built-ins the seeds did not make: %v", missing)
	}
	// Each is known as a built-in, which counts only what is added to it.
	for _, o := range builtins {
		if o.builtin == 0 {
			t.Errorf("%s is not known as a built-in: a getter or factory made it outside makingBuiltins", describeBuiltin(o))
		}
	}
	probe, err := r.RunString("new Uint8Array(1 << 20)")
	if err != nil {
		t.Fatal(err)
	}
	sym, err := r.RunString("Symbol('probe')")
	if err != nil {
		t.Fatal(err)
	}
	r.vm.result = nil
	forgetWrites(r)
	base := r.MustardRetainedBytes()
	t.Logf("%d built-ins reachable, the realm retains %d bytes", len(builtins), base)
	if len(builtins) < 400 {
		t.Fatalf("only %d built-ins reachable", len(builtins))
	}
	if base > 4096 {
		t.Errorf("a realm whose every built-in was made retains %d bytes", base)
	}
	const size = 1 << 20
	for _, op := range builtinWrites {
		writes := 0
		pair, err := r.RunString("(() => { let was; const dp = Object.defineProperty, gd = Object.getOwnPropertyDescriptor, sp = Object.setPrototypeOf, " +
			"gp = Object.getPrototypeOf, rsp = Reflect.setPrototypeOf, rd = Reflect.defineProperty, rs = Reflect.set, as = Object.assign; return [" + op.do + ", " + op.undo + "] })()")
		if err != nil {
			t.Fatal(err)
		}
		do, _ := AssertFunction(pair.(*Object).Get("0"))
		undo, _ := AssertFunction(pair.(*Object).Get("1"))
		r.vm.result = nil
		perProperty := strings.Contains(op.name, "own property")
		for _, o := range builtins {
			if !o.self.isExtensible() {
				continue
			}
			keys := []Value{Undefined()}
			if perProperty {
				keys = keys[:0]
				for _, k := range o.self.keys(true, nil) {
					if p, ok := o.getOwnProp(k).(*valueProperty); ok && !p.accessor && (p.writable || strings.HasPrefix(op.name, "defined") && p.configurable) {
						keys = append(keys, k)
					}
				}
			}
			for _, k := range keys {
				if _, err := do(Undefined(), o, probe, k, sym); err != nil {
					// Refused (a prototype that cannot change, an array
					// length that takes only numbers): nothing written.
					forgetWrites(r)
					continue
				}
				writes++
				if got := r.MustardRetainedBytes(); got < base+size {
					t.Errorf("%s, %s %v: %d bytes retained, %d without it", describeBuiltin(o), op.name, k, got, base)
				}
				if _, err := undo(Undefined(), o, probe, k, sym); err != nil {
					t.Fatalf("%s, undoing %s %v: %v", describeBuiltin(o), op.name, k, err)
				}
				forgetWrites(r)
			}
		}
		t.Logf("%s: %d writes", op.name, writes)
		if writes < 200 {
			t.Errorf("%s: only %d writes", op.name, writes)
		}
	}
	if got := r.MustardRetainedBytes(); got != base {
		t.Errorf("%d bytes retained after the probes were removed, %d before", got, base)
	}
}

// A private field stamped on a built-in (a base class constructor that
// returns the object) counts.
func TestRetainedBytesSeesPrivateFieldsOnBuiltins(t *testing.T) {
	got := retainedAfter(t, `class B { constructor(o) { return o } }
		class C extends B { #keep; constructor(o, v) { super(o); this.#keep = v } }
		new C(Math, 'p'.repeat(1e5)); new C(Array.prototype.map, 'q'.repeat(1e5)); 1`)
	if got < 200_000 {
		t.Fatalf("%d bytes retained", got)
	}
}

func describeBuiltin(o *Object) string {
	if n, ok := o.self.getStr("name", nil).(String); ok && n.Length() > 0 {
		return o.self.className() + " " + n.String()
	}
	if c, ok := o.self.getStr("constructor", nil).(*Object); ok {
		if n, ok := c.self.getStr("name", nil).(String); ok {
			return n.String() + ".prototype"
		}
	}
	return o.self.className()
}

// The walk of a realm whose every built-in was made (about 500 objects):
// the most the built-ins add to a walk.
func BenchmarkRetainedBytesEveryBuiltinMade(b *testing.B) {
	r := New()
	if _, err := r.RunString(builtinSeeds); err != nil {
		b.Fatal(err)
	}
	reachableBuiltins(r)
	r.vm.result = nil
	b.ReportAllocs()
	for b.Loop() {
		r.MustardRetainedBytes()
	}
}

// Which built-ins were written to decides what the walk visits, never what
// it counts: a realm whose every built-in was made counts the same with
// none written to and with all of them (a host's own writes, say a
// replay's that differ from the original's, cannot change the figure).
func TestRetainedBytesDoesNotDependOnWhatWasWrittenTo(t *testing.T) {
	r := New()
	if _, err := r.RunString(builtinSeeds); err != nil {
		t.Fatal(err)
	}
	builtins := reachableBuiltins(r)
	r.vm.result = nil
	forgetWrites(r)
	clean := r.MustardRetainedBytes()
	for _, o := range builtins {
		o.wrote()
	}
	if all := r.MustardRetainedBytes(); all != clean {
		t.Fatalf("%d bytes with every built-in written to, %d with none", all, clean)
	}
}
